// Azurite's queue service for the end-to-end stack, started as the Rust tests and `shoal dev`
// start it (services/devstack/src/azurite.rs): in memory, on a free port, from
// $SHOAL_AZURITE_BIN or deploy/local/node_modules/.bin/azurite-queue (ensure-tools.sh), and a
// small client for its REST API signed with the emulator's published account key (Shared Key),
// so the journeys enqueue and count messages as any Azure Storage client would.

import { spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, stop, track } from "./processes.mjs";

export const ACCOUNT = "devstoreaccount1";
// The emulator's well-known key (not a secret).
const KEY = Buffer.from(
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
  "base64",
);
const VERSION = "2021-12-02";
const READY_LINE = "successfully listens on";
const START_ATTEMPTS = 5;

function binary() {
  const configured = process.env.SHOAL_AZURITE_BIN;
  if (configured) return configured;
  const local = new URL("../../deploy/local/node_modules/.bin/azurite-queue", import.meta.url).pathname;
  if (existsSync(local)) return local;
  throw new Error(`Azurite's queue service is missing: run deploy/local/ensure-tools.sh (installs ${local}) or set SHOAL_AZURITE_BIN`);
}

/// Starts Azurite, trying another port when the one picked was taken in the meantime.
export async function startAzurite() {
  const dir = mkdtempSync(join(tmpdir(), "shoal-e2e-azurite-"));
  let lastError;
  for (let attempt = 0; attempt < START_ATTEMPTS; attempt++) {
    const port = await freePort();
    try {
      const child = await spawnOn(port, dir);
      return azurite(child, port, dir);
    } catch (e) {
      lastError = e;
      if (!/EADDRINUSE/.test(String(e.message))) break;
    }
  }
  rmSync(dir, { recursive: true, force: true });
  throw lastError;
}

async function spawnOn(port, dir) {
  const args = ["--silent", "--inMemoryPersistence", "--disableTelemetry", "--queueHost", "127.0.0.1", "--queuePort", String(port)];
  const child = track("azurite", spawn(binary(), args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] }));
  let printed = "";
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`Azurite did not listen on port ${port} within 30 s`)), 30_000);
    function fail(error) {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(error);
    }
    const read = (chunk) => {
      printed += chunk;
      if (printed.includes(READY_LINE)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.setEncoding("utf8").on("data", read);
    child.stderr.setEncoding("utf8").on("data", read);
    child.once("exit", (code) => fail(new Error(`Azurite exited with ${code} before listening on port ${port}: ${printed.trim()}`)));
  });
  // Keep draining its output so it never blocks on a full pipe.
  child.stdout.resume();
  child.stderr.resume();
  return child;
}

function azurite(child, port, dir) {
  const endpoint = `http://127.0.0.1:${port}/${ACCOUNT}`;
  const request = (method, path, query = {}, body, allowed) => signed(endpoint, method, path, query, body, allowed);
  return {
    endpoint,
    /// What an app setting holds to reach this Azurite (an explicit endpoint: not port 10001).
    connectionString: `DefaultEndpointsProtocol=http;AccountName=${ACCOUNT};AccountKey=${KEY.toString("base64")};QueueEndpoint=${endpoint}`,
    async createQueue(name) {
      await request("PUT", `/${name}`);
    },
    /// Enqueues each text, base64-encoded as Azure Functions' queue trigger expects by default
    /// (`messageEncoding: base64`), a few requests at a time.
    async enqueue(name, texts) {
      const pending = [...texts];
      const sender = async () => {
        for (let text = pending.shift(); text !== undefined; text = pending.shift()) {
          const xml = `<QueueMessage><MessageText>${Buffer.from(text).toString("base64")}</MessageText></QueueMessage>`;
          await request("POST", `/${name}/messages`, {}, xml);
        }
      };
      await Promise.all(Array.from({ length: 8 }, sender));
    },
    /// The queue's approximate message count (invisible messages included), as the
    /// scheduler reads it; 0 for a queue that does not exist.
    async length(name) {
      const response = await request("GET", `/${name}`, { comp: "metadata" }, undefined, [404]);
      if (response.status === 404) return 0;
      return Number(response.headers.get("x-ms-approximate-messages-count"));
    },
    async stop() {
      await stop(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/// A Shared Key request (https://learn.microsoft.com/rest/api/storageservices/authorize-with-shared-key).
async function signed(endpoint, method, path, query, body, allowed = []) {
  const url = new URL(`${endpoint}${path}`);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  const headers = { "x-ms-date": new Date().toUTCString(), "x-ms-version": VERSION };
  const length = body === undefined ? 0 : Buffer.byteLength(body);
  const contentType = body === undefined ? "" : "application/xml; charset=utf-8";
  if (contentType) headers["content-type"] = contentType;
  const canonicalHeaders = Object.keys(headers)
    .filter((k) => k.startsWith("x-ms-"))
    .sort()
    .map((k) => `${k}:${headers[k]}\n`)
    .join("");
  const canonicalQuery = [...url.searchParams.keys()]
    .sort()
    .map((k) => `\n${k.toLowerCase()}:${url.searchParams.get(k)}`)
    .join("");
  const toSign = [method, "", "", length ? String(length) : "", "", contentType, "", "", "", "", "", ""].join("\n") +
    `\n${canonicalHeaders}/${ACCOUNT}${url.pathname}${canonicalQuery}`;
  headers.authorization = `SharedKey ${ACCOUNT}:${createHmac("sha256", KEY).update(toSign, "utf8").digest("base64")}`;
  const response = await fetch(url, { method, headers, body });
  if (!response.ok && !allowed.includes(response.status)) {
    throw new Error(`Azurite answered ${method} ${url.pathname}${url.search} with ${response.status}: ${await response.text()}`);
  }
  if (!response.bodyUsed) await response.arrayBuffer();
  return response;
}
