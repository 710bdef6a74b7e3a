// The local Service Bus stand-in for the end-to-end stack: `shoal local-bus` (docs/local-bus.md)
// on a free loopback port, in memory, with the queue the Service Bus journey's function reads.
// Its MaxDeliveryCount is small so a message the handler keeps failing is dead-lettered after
// a few deliveries rather than Azure's default ten. The connection string is the one it prints
// (its fixed development key, not a secret).

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, stop, track } from "./processes.mjs";

/// The queue the journey's serviceBusTrigger reads, and its deliveries before dead-lettering.
export const BUS_QUEUE = "payments";
export const MAX_DELIVERY_COUNT = 3;
const START_ATTEMPTS = 5;

const CONFIG = {
  UserConfig: {
    Namespaces: [
      {
        Name: "e2e",
        Queues: [
          {
            Name: BUS_QUEUE,
            Properties: { MaxDeliveryCount: MAX_DELIVERY_COUNT, LockDuration: "PT30S" },
          },
        ],
      },
    ],
  },
};

/// Starts the stand-in, trying another port when the one picked was taken in the meantime.
export async function startLocalBus(bin, env) {
  const dir = mkdtempSync(join(tmpdir(), "shoal-e2e-local-bus-"));
  const config = join(dir, "local-bus.json");
  writeFileSync(config, JSON.stringify(CONFIG));
  let lastError;
  for (let attempt = 0; attempt < START_ATTEMPTS; attempt++) {
    const port = await freePort();
    try {
      const { child, connectionString } = await spawnOn(bin, env, port, config);
      return {
        connectionString,
        async stop() {
          await stop(child);
          rmSync(dir, { recursive: true, force: true });
        },
      };
    } catch (e) {
      lastError = e;
      if (!/in use/i.test(String(e.message))) break;
    }
  }
  rmSync(dir, { recursive: true, force: true });
  throw lastError;
}

/// Spawns it and waits for the banner's connection string (the Manage policy's), which it
/// prints once it listens.
async function spawnOn(bin, env, port, config) {
  const args = ["local-bus", "--listen", `127.0.0.1:${port}`, "--config", config];
  const spawned = spawn(bin, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  const child = track("shoal local-bus", spawned);
  let printed = "";
  const connectionString = await new Promise((resolve, reject) => {
    const late = () => fail(new Error(`shoal local-bus did not start within 30 s: ${printed}`));
    const timer = setTimeout(late, 30_000);
    function fail(error) {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(error);
    }
    const read = (chunk) => {
      printed += chunk;
      const found = /^\s*connection string (\S+)$/m.exec(printed);
      if (found) {
        clearTimeout(timer);
        resolve(found[1]);
      }
    };
    child.stdout.setEncoding("utf8").on("data", read);
    // Its logs go to stderr: kept for the error message, and passed on.
    child.stderr.setEncoding("utf8").on("data", (chunk) => {
      printed += chunk;
      process.stderr.write(chunk);
    });
    child.once("exit", (code, signal) =>
      fail(new Error(`shoal local-bus exited (${code ?? signal}): ${printed}`)),
    );
  });
  return { child, connectionString };
}
