// A real Shoal for the end-to-end tests: `shoal serve` on a fresh Postgres database (made and
// dropped by deploy/local/web.sh), serving the built dashboard, with tokens minted by
// `shoal token` and data written through the API.

import { spawn, execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { promisify } from "node:util";

const run = promisify(execFile);

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export async function startShoal({ bin, databaseUrl, webDir, environment }) {
  const port = await freePort();
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    SHOAL_SECRET_KEY: randomBytes(32).toString("base64"),
    SHOAL_LISTEN: `127.0.0.1:${port}`,
    SHOAL_WEB_DIR: webDir,
    SHOAL_ENVIRONMENT: environment,
    SHOAL_MIGRATE: "true",
    RUST_LOG: process.env.RUST_LOG ?? "warn",
  };
  const child = spawn(bin, ["serve"], { env, stdio: ["ignore", "inherit", "inherit"] });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`shoal serve exited with ${child.exitCode}`);
    try {
      const response = await fetch(`${base}/readyz`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error("shoal serve was not ready within 30 s");
    await new Promise((r) => setTimeout(r, 200));
  }
  const token = async (...args) =>
    (await run(bin, ["token", ...args], { env })).stdout.trim();
  return {
    base,
    token,
    async stop() {
      child.kill("SIGTERM");
      await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", resolve)));
    },
  };
}

/// Runs SQL on the test database, as the scheduler would have written it (the end-to-end stack
/// runs `shoal serve` alone, so scale state is seeded).
export async function sql(databaseUrl, statement) {
  await run("psql", ["-q", "-v", "ON_ERROR_STOP=1", databaseUrl, "-c", statement]);
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
