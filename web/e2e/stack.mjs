// A real Shoal for the end-to-end tests, on a fresh Postgres database (made and dropped by
// deploy/local/web.sh): Azurite's queue service in memory on a free port (azurite.mjs), the
// local Service Bus stand-in `shoal local-bus` likewise (local-bus.mjs), `shoal serve` serving
// the built dashboard, one `shoal scheduler` and two `shoal worker`s, all with the same secret
// key, configured as docs/configuration.md says, with the timings that have a setting
// shortened so the journeys stay quick: a 500 ms scheduler tick, 3 s leases and scale-in
// window, the workers' local-development polling (at most 2 s between empty polls) and a 5 s
// drain deadline. The scheduler's 10 s sampling and the workers' 1 s telemetry flush have no
// setting and keep their values. Tokens are minted by `shoal token` and data written through
// the API; messages go into Azurite or are sent from the dashboard, and the handler
// (handler.mjs) answers the workers. Every child is stopped with SIGTERM by `stop()` and
// killed if the test process ends otherwise (processes.mjs).

import { spawn, execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { startAzurite } from "./azurite.mjs";
import { startLocalBus } from "./local-bus.mjs";
import { exitedEarly, freePort, stop, track } from "./processes.mjs";

const run = promisify(execFile);

export const WORKERS = ["e2e-worker-1", "e2e-worker-2"];

/// The OIDC issuer `shoal serve` trusts for registered users (no token of it is ever made).
export const EXTERNAL_ISSUER = "https://login.e2e.example/v2.0";
/// The trace viewer `shoal serve` is given: the explorer's trace ids link to it.
export const TRACE_VIEWER_URL = "http://traces.example.invalid/trace/{traceId}";

export async function startStack(options) {
  const started = [];
  try {
    return await launch(options, started);
  } catch (e) {
    // What did start is stopped before the failure is reported.
    await Promise.all(started.map((stopOne) => stopOne().catch(() => {})));
    throw e;
  }
}

async function launch({ bin, databaseUrl, webDir, environment }, started) {
  const azurite = await startAzurite();
  started.push(() => azurite.stop());
  const port = await freePort();
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    SHOAL_SECRET_KEY: randomBytes(32).toString("base64"),
    RUST_LOG: process.env.RUST_LOG ?? "warn",
    // The journeys' handler listens on loopback, which Shoal refuses unless allowed.
    SHOAL_EGRESS_ALLOW: "127.0.0.0/8,::1",
  };
  const serviceBus = await startLocalBus(bin, env);
  started.push(() => serviceBus.stop());
  const start = (name, args, extra = {}) => {
    const child = track(name, spawn(bin, args, { env: { ...env, ...extra }, stdio: ["ignore", "inherit", "inherit"] }));
    started.unshift(() => stop(child));
    return child;
  };

  const serve = start("shoal serve", ["serve"], {
    SHOAL_LISTEN: `127.0.0.1:${port}`,
    SHOAL_WEB_DIR: webDir,
    SHOAL_ENVIRONMENT: environment,
    SHOAL_MIGRATE: "true",
    // Users can be registered only with an issuer Shoal trusts; the access journey registers
    // one. Its keys are fetched only when one of its tokens arrives, which none does.
    SHOAL_EXTERNAL_ISSUERS: `issuer=${EXTERNAL_ISSUER},audience=api://shoal`,
    // The explorer links trace ids here; nothing needs to answer it.
    SHOAL_TRACE_VIEWER_URL: TRACE_VIEWER_URL,
  });
  const base = `http://127.0.0.1:${port}`;
  // The scheduler and the workers need the schema `serve` migrates.
  await until("shoal serve is ready", 30_000, async () => {
    if (serve.exitCode !== null) throw new Error(`shoal serve exited with ${serve.exitCode}`);
    try {
      return (await fetch(`${base}/readyz`)).ok;
    } catch {
      return false; // not listening yet
    }
  });
  const scheduler = start(
    "shoal scheduler",
    ["scheduler", "--name", "e2e-scheduler", "--listen", "127.0.0.1:0"],
    { SHOAL_SCHEDULER_TICK: "500ms", SHOAL_SCHEDULER_LEASE_TTL: "3s", SHOAL_SCALE_IN_WINDOW: "3s" },
  );
  const workers = WORKERS.map((name) =>
    start(`shoal worker ${name}`, ["worker", "--name", name, "--listen", "127.0.0.1:0"], {
      SHOAL_WORKER_LEASE_TTL: "3s",
      SHOAL_LOCAL_DEVELOPMENT: "true",
      SHOAL_DRAIN_DEADLINE: "5s",
      SHOAL_INVOCATION_TELEMETRY: "on",
    }),
  );

  const token = async (...args) => (await run(bin, ["token", ...args], { env })).stdout.trim();
  const admin = await token("--platform-admin", "--subject", "e2e-admin");
  // Every worker heartbeats before a journey starts.
  await until("both workers heartbeat", 30_000, async () => {
    const exited = exitedEarly();
    if (exited.length) throw new Error(`exited: ${exited.join(", ")}`);
    const { items } = await call(base, admin, "GET", "/v1/workers");
    return WORKERS.every((name) => items.some((w) => w.name === name && w.alive));
  });

  return {
    base,
    token,
    admin,
    azurite,
    /// `connectionString`: the stand-in's, with its Manage policy (a fixed development key).
    serviceBus,
    /// Stops the workers and the scheduler, then the API, then the brokers, each with SIGTERM.
    async stop() {
      await Promise.all([scheduler, ...workers].map((child) => stop(child)));
      await stop(serve);
      await Promise.all([azurite.stop(), serviceBus.stop()]);
    },
  };
}

/// Polls `probe` every 100 ms until it returns a truthy value (which it returns), or fails
/// after `timeoutMs` naming what it waited for.
export async function until(what, timeoutMs, probe) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/// A JSON call to the API that must succeed.
export async function call(base, token, method, path, body) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
  return text ? JSON.parse(text) : null;
}
