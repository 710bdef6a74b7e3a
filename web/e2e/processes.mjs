// The child processes of the end-to-end stack: every one is tracked from the moment it is
// spawned, so none outlives the test process, whichever way that ends. `after` stops them with
// SIGTERM (`stop`); an exit without it (a failed `before`, an uncaught error, Ctrl-C, node's
// test runner cancelling the file) kills whatever is left with SIGKILL.

import { createServer } from "node:net";

const children = new Map();

/// Registers a just-spawned child under a name used in messages.
export function track(name, child) {
  children.set(child, name);
  child.once("exit", () => children.delete(child));
  return child;
}

/// The names of tracked children that exited on their own, with how.
export function exitedEarly() {
  return [...children].filter(([c]) => c.exitCode !== null || c.signalCode !== null).map(([c, n]) => `${n} (${c.exitCode ?? c.signalCode})`);
}

/// SIGTERM to a child, then waits for it to exit; SIGKILL after `deadlineMs`.
export async function stop(child, deadlineMs = 30_000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  let timer;
  const late = new Promise((resolve) => (timer = setTimeout(resolve, deadlineMs, "late")));
  if ((await Promise.race([exited, late])) === "late") {
    console.error(`${children.get(child)} did not stop within ${deadlineMs} ms of SIGTERM; killed`);
    child.kill("SIGKILL");
    await exited;
  }
  clearTimeout(timer);
}

function killAll() {
  for (const child of children.keys()) child.kill("SIGKILL");
}

process.once("exit", killAll);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.once(signal, () => {
    killAll();
    process.exit(128 + ({ SIGINT: 2, SIGTERM: 15, SIGHUP: 1 })[signal]);
  });
}

export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
