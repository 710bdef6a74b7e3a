// What every journey shares: one stack (stack.mjs) and one browser for the whole run, started
// by `setUp` and stopped by `tearDown` (journey.test.mjs registers them as its before and
// after), and the helpers journeys use to sign in, answer confirmations and check a view with
// axe-core while keeping its screenshot. Screenshots of each step: web/e2e/artifacts/.

import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { chromium } from "playwright-core";
import { startHandler } from "./handler.mjs";
import { call, startStack, until } from "./stack.mjs";

export const ARTIFACTS = new URL("./artifacts/", import.meta.url).pathname;
// The flags this machine's notes give for Chromium as root with no network beyond localhost.
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
export const TIMEOUT = 10_000;

// Set by setUp and read by the journeys when they run (live bindings).
export let shoal, handler, browser, context, admin;
/// Every URL the pages asked for: the last journey checks none left the page's origin.
export const requests = [];
const APPS = [
  ["contoso", "billing"],
  ["contoso", "orders"],
  ["fabrikam", "secret-plans"],
];

export async function setUp() {
  mkdirSync(ARTIFACTS, { recursive: true });
  handler = await startHandler();
  shoal = await startStack({
    bin: process.env.SHOAL_BIN,
    databaseUrl: process.env.E2E_DATABASE_URL,
    webDir: new URL("../dist", import.meta.url).pathname,
    environment: "e2e",
  });
  admin = shoal.admin;
  await shoal.azurite.createQueue("orders");
  const put = (path, body) => call(shoal.base, admin, "PUT", path, body);
  await put("/v1/tenants/contoso", { displayName: "Contoso" });
  await put("/v1/tenants/fabrikam", { displayName: "Fabrikam" });
  const nowhere = { handler: { url: "http://127.0.0.1:9/api" } };
  // orders is served by the handler in this process; it holds the scale journey's backlog for
  // a while, so its timeout is longer than the default 30 s.
  await put("/v1/tenants/contoso/apps/orders", {
    handler: { url: handler.url, timeoutSeconds: 120 },
    appSettings: { OrdersStorage: shoal.azurite.connectionString, PaymentsApiKey: "hunter2-e2e" },
  });
  await put("/v1/tenants/contoso/apps/billing", nowhere);
  await put("/v1/tenants/fabrikam/apps/secret-plans", nowhere);
  // A connection setting billing never got: the apps list shows it unhealthy.
  await put("/v1/tenants/contoso/apps/billing/functions/invoice", {
    bindings: [{ type: "queueTrigger", direction: "in", name: "bill", queueName: "bills", connection: "BillingStorage" }],
  });
  await put("/v1/tenants/contoso/apps/orders/functions/ship", {
    bindings: [
      { type: "queueTrigger", direction: "in", name: "order", queueName: "orders", connection: "OrdersStorage" },
      { type: "queue", direction: "out", name: "receipt", queueName: "receipts", connection: "OrdersStorage" },
    ],
  });
  // The scheduler has decided for every app (each decision comes with a sample) and placed
  // what it decided.
  await until("the scheduler decided and placed every app", 30_000, async () => {
    for (const [tenant, app] of APPS) {
      const path = `/v1/tenants/${tenant}/apps/${app}/scale`;
      const [history, status] = await Promise.all([
        call(shoal.base, admin, "GET", `${path}/history`),
        call(shoal.base, admin, "GET", path),
      ]);
      if (history.samples.length === 0 || status.currentInstances !== status.desiredInstances) return false;
    }
    return true;
  });
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: CHROMIUM_ARGS });
  context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  context.setDefaultTimeout(TIMEOUT);
  context.on("request", (request) => requests.push(request.url()));
}

export async function tearDown() {
  await browser?.close();
  // The handler first: it lets go of what it still holds and drops its connections, so no
  // worker waits on a delivery while it drains.
  await handler?.stop();
  await shoal?.stop();
}

export async function signIn(page, token) {
  await page.goto(`${shoal.base}/`);
  await page.waitForURL(/\/signin/);
  await page.getByLabel("Bearer token").fill(token);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

/// Focus is on the view's heading (level 1), named `name`.
export async function focusedOnHeading(page, name) {
  await page.waitForFunction(
    (text) => document.activeElement?.tagName === "H1" && document.activeElement.textContent === text,
    name,
    { timeout: TIMEOUT },
  );
}

/// Answers the confirmation dialog an action opens with its action button (or Cancel).
export async function confirm(page, action) {
  const dialog = page.getByRole("dialog");
  await dialog.waitFor();
  await dialog.getByRole("button", { name: action, exact: true }).click();
  await dialog.waitFor({ state: "detached" });
}

export const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/// Keeps a screenshot of the step, and checks the view with axe-core (injected inline, so it
/// makes no request): no serious or critical accessibility violation (with `anyImpact`, none
/// at all).
export async function shot(page, name, { anyImpact = false } = {}) {
  await page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
  await page.addScriptTag({ content: AXE });
  const violations = await page.evaluate(async (anyImpact) => {
    const result = await window.axe.run(document, { resultTypes: ["violations"] });
    return result.violations
      .filter((v) => anyImpact || v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  }, anyImpact);
  assert.deepEqual(violations, [], `accessibility violations on ${name}`);
}

/// `shot` at a laptop's and a phone's size (1366×768, 390×844), with no axe violation of any
/// impact; the page keeps the phone's size afterwards only until the next call resizes it.
export async function shotAtBothSizes(page, name) {
  await page.setViewportSize({ width: 1366, height: 768 });
  await shot(page, `${name}-1366`, { anyImpact: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, `${name}-390`, { anyImpact: true });
  await page.setViewportSize({ width: 1366, height: 768 });
}
