// The dashboard in real headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core; no browser is downloaded) against a real Shoal stack (stack.mjs): Postgres,
// Azurite, `shoal serve`, one `shoal scheduler` and two `shoal worker`s, with the apps' handler
// in this process (handler.mjs). Nothing is seeded in the database: the scale journey enqueues
// a backlog into Azurite and watches the scheduler scale the app out and back in, the monitor
// journey reads what the workers recorded of the handler's answers, failures included.
// Every request the page makes is recorded: none may leave the page's origin.
// Screenshots of each step: web/e2e/artifacts/.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { randomUUID } from "node:crypto";
import { chromium } from "playwright-core";
import { startHandler } from "./handler.mjs";
import { EXTERNAL_ISSUER, TRACE_VIEWER_URL, WORKERS, call, startStack, until } from "./stack.mjs";

const ARTIFACTS = new URL("./artifacts/", import.meta.url).pathname;
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
const TIMEOUT = 10_000;

let shoal, handler, browser, context, admin;
const requests = [];
const APPS = [
  ["contoso", "billing"],
  ["contoso", "orders"],
  ["fabrikam", "secret-plans"],
];

before(async () => {
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
});

after(async () => {
  await browser?.close();
  // The handler first: it lets go of what it still holds and drops its connections, so no
  // worker waits on a delivery while it drains.
  await handler?.stop();
  await shoal?.stop();
});

async function signIn(page, token) {
  await page.goto(`${shoal.base}/`);
  await page.waitForURL(/\/signin/);
  await page.getByLabel("Bearer token").fill(token);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

/// Focus is on the view's heading (level 1), named `name`.
async function focusedOnHeading(page, name) {
  await page.waitForFunction(
    (text) => document.activeElement?.tagName === "H1" && document.activeElement.textContent === text,
    name,
    { timeout: TIMEOUT },
  );
}

/// Answers the confirmation dialog an action opens with its action button (or Cancel).
async function confirm(page, action) {
  const dialog = page.getByRole("dialog");
  await dialog.waitFor();
  await dialog.getByRole("button", { name: action, exact: true }).click();
  await dialog.waitFor({ state: "detached" });
}

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/// Keeps a screenshot of the step, and checks the view with axe-core (injected inline, so it
/// makes no request): no serious or critical accessibility violation (with `anyImpact`, none
/// at all).
async function shot(page, name, { anyImpact = false } = {}) {
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
async function shotAtBothSizes(page, name) {
  await page.setViewportSize({ width: 1366, height: 768 });
  await shot(page, `${name}-1366`, { anyImpact: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, `${name}-390`, { anyImpact: true });
  await page.setViewportSize({ width: 1366, height: 768 });
}

test("a platform admin signs in, switches tenant and sees the apps list", async () => {
  const page = await context.newPage();
  await signIn(page, admin);
  await page.waitForURL(/\/tenants$/);
  assert.equal((await page.locator("#environment").textContent()).trim(), "Environment: e2e");
  await page.getByRole("link", { name: "contoso" }).click();
  await page.waitForURL(/\/tenants\/contoso\/apps$/);
  const rows = page.locator("#apps tbody tr");
  await rows.first().waitFor();
  // The route change moved focus to the new view's heading and named the view in the title.
  await focusedOnHeading(page, "Apps");
  assert.equal(await page.title(), "Apps · contoso · Shoal (e2e)");
  // The skip link moves focus to the content without rendering the view again (its heading
  // is the same element) or adding a history entry.
  await page.evaluate(() => { document.querySelector("main h1").dataset.kept = "yes"; });
  await page.locator("a.skip").focus();
  await page.keyboard.press("Enter");
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.kept), "yes");
  assert.ok(page.url().endsWith("/tenants/contoso/apps"), page.url());
  assert.deepEqual(await page.locator("#apps tbody th").allInnerTexts(), ["billing", "orders"]);
  // Instances now/desired and health come with the list: what the scheduler decided and
  // placed, as the API reports it.
  const listed = await call(shoal.base, admin, "GET", "/v1/tenants/contoso/apps?expand=status");
  const instances = listed.items
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((a) => [a.status.currentInstances, a.status.desiredInstances].map(String));
  assert.deepEqual(await page.locator("#apps tbody tr td.num").allInnerTexts(), instances);
  const health = page.locator("#apps tbody tr td:last-child");
  assert.match(await health.nth(0).innerText(), /^Error\b.*BillingStorage/s);
  assert.equal((await health.nth(1).innerText()).trim(), "Healthy");
  await shot(page, "01-apps-health");
  await page.getByLabel("Health").selectOption("error");
  assert.deepEqual(await page.locator("#apps tbody th").allInnerTexts(), ["billing"]);
  await page.getByLabel("Health").selectOption("");
  await page.getByLabel("Filter").fill("ord");
  assert.deepEqual(await page.locator("#apps tbody th").allInnerTexts(), ["orders"]);
  assert.equal(await page.locator("#apps-count").innerText(), "1 of 2 apps");
  await shot(page, "01-apps-list");
  await page.getByLabel("Tenant", { exact: true }).selectOption("fabrikam");
  await page.waitForURL(/\/tenants\/fabrikam\/apps$/);
  await page.locator("#apps tbody th", { hasText: "secret-plans" }).waitFor();
  await page.close();
});

test("opening an app shows its handler, masked settings revealed on request, and the scale toggle", async () => {
  const page = await context.newPage();
  await signIn(page, admin);
  await page.goto(`${shoal.base}/tenants/contoso/apps/orders`);
  await page.getByRole("heading", { name: "orders", level: 1 }).waitFor();
  assert.equal(await page.getByLabel("Handler URL").inputValue(), handler.url);
  await focusedOnHeading(page, "orders");
  assert.equal(await page.title(), "orders · contoso · Shoal (e2e)");
  // Secret values arrive masked and are revealed only through settings/list.
  assert.equal(await page.getByText("hunter2-e2e").count(), 0);
  await page.getByRole("button", { name: "Reveal values" }).click();
  await page.getByText("hunter2-e2e").waitFor();
  const mode = page.locator("#scale-mode");
  assert.equal(await mode.innerText(), "target");
  await page.getByLabel(/Target-based scaling/).uncheck();
  await page.locator("#scale-mode", { hasText: "incremental" }).waitFor();
  // The settings table shows the setting the toggle wrote.
  await page.locator('#settings-table tr[data-setting="TARGET_BASED_SCALING_ENABLED"]', { hasText: "0" }).waitFor();
  // Saved in place: announced, the toggle keeps focus.
  await page.locator("#scale-saved", { hasText: "Saved: scale mode incremental." }).waitFor();
  assert.equal(await page.evaluate(() => document.activeElement?.id), "target-based");
  await page.getByLabel(/Target-based scaling/).check();
  await page.locator("#scale-mode", { hasText: "target" }).waitFor();
  await shot(page, "02-app");
  await page.close();
});

test("a function edit the API refuses shows the 422 at the field it names", async () => {
  const page = await context.newPage();
  await signIn(page, admin);
  await page.goto(`${shoal.base}/tenants/contoso/apps/orders/functions/ship`);
  const queueName = page.locator('[data-path="bindings[0].queueName"]');
  await queueName.fill("Not A Queue!");
  await page.getByRole("button", { name: "Save" }).click();
  await page.locator('[data-path="bindings[0].queueName"][aria-invalid="true"]').waitFor();
  // The field is described by its error (and by its schema's help, when it has some).
  const describedBy = (await queueName.getAttribute("aria-describedby")).split(/\s+/).find((id) => id.startsWith("err-"));
  const message = await page.locator(`#${describedBy}`).innerText();
  assert.match(message, /\S/, "an error message sits at bindings[0].queueName");
  await shot(page, "03-function-422");
  // Nothing was written.
  const fn = await call(shoal.base, admin, "GET", "/v1/tenants/contoso/apps/orders/functions/ship");
  assert.equal(fn.bindings[0].queueName, "orders");

  // Put right and saved: "Saved" is announced where the form is, which stays as it was: the
  // page neither scrolls nor loses focus, and a second save needs no reload (the new ETag).
  await page.setViewportSize({ width: 1200, height: 500 });
  await queueName.fill("orders");
  const save = page.getByRole("button", { name: "Save" });
  await save.scrollIntoViewIfNeeded();
  const scrolled = await page.evaluate(() => window.scrollY);
  assert.ok(scrolled > 0, "the Save button is below the fold");
  await save.click();
  await page.locator("#fn-saved", { hasText: /^Saved at / }).waitFor();
  // Still where it was: the 422's message above went (the page is that much shorter), nothing
  // was drawn again from the top.
  assert.ok(await page.evaluate(() => window.scrollY) > 0, "the page scrolled back to the top");
  const box = await save.boundingBox();
  assert.ok(box && box.y >= 0 && box.y + box.height <= 500, `Save is off screen: ${JSON.stringify(box)}`);
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Save");
  assert.equal(await queueName.getAttribute("aria-invalid"), null);
  const [second] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === "PUT" && r.url().endsWith("/functions/ship")),
    save.click(),
  ]);
  assert.equal(second.status(), 200, "the second save sent the ETag of the first");
  await page.locator("#fn-saved", { hasText: /^Saved at / }).waitFor();
  await page.close();
});

test("a binding is built field by field from its type's schema, with the raw JSON beside it", async () => {
  const page = await context.newPage();
  await signIn(page, admin);
  await page.goto(`${shoal.base}/tenants/contoso/apps/orders/functions`);
  await page.getByLabel("Template").selectOption("timer");
  await page.getByLabel("Name", { exact: true }).fill("nightly");
  // Every property of the type is a field: required ones say so, a flag is a choice whose
  // "not set" is its own (useMonitor left out means true), a fixed set of values a choice.
  await page.getByLabel("schedule (required)").waitFor();
  const startup = page.locator('[data-path="bindings[0].runOnStartup"]');
  assert.deepEqual(await startup.locator("option").allInnerTexts(), ["(not set)", "true", "false"]);
  assert.deepEqual(await page.locator('[data-path="bindings[0].dataType"] option').allInnerTexts(), ["(not set)", "string", "binary", "stream"]);
  assert.equal(await page.locator('[data-path="bindings[0].direction"]').getAttribute("readonly"), "", "the type decides the direction");
  await startup.selectOption("true");
  // The raw bindings follow the fields; a field left unset is not written.
  await page.getByText("function.json bindings (raw)").click();
  let raw = JSON.parse(await page.locator("#fn-raw").inputValue());
  assert.equal(raw[0].runOnStartup, true);
  assert.equal("useMonitor" in raw[0], false);
  await shot(page, "03-function-typed-form");
  // Another trigger type keeps what it shares (the name) and drops the timer's schedule.
  await page.locator('[data-path="bindings[0].type"]').selectOption("queueTrigger");
  await page.getByLabel("queueName (required)").waitFor();
  assert.equal(await page.locator('[data-path="bindings[0].schedule"]').count(), 0);
  assert.equal(await page.locator('[data-path="bindings[0].name"]').inputValue(), "myTimer");
  await page.locator('[data-path="bindings[0].type"]').selectOption("timerTrigger");
  // Edited as JSON and applied: the fields show it; text that is not bindings says so.
  await page.locator("#fn-raw").fill("{}");
  await page.getByRole("button", { name: "Apply to the fields" }).click();
  await page.locator("#err-fn-raw", { hasText: "Expected an array of binding objects" }).waitFor();
  await page.locator("#fn-raw").fill(JSON.stringify([{ type: "timerTrigger", direction: "in", name: "myTimer", schedule: "0 0 3 * * *", runOnStartup: true }]));
  await page.getByRole("button", { name: "Apply to the fields" }).click();
  assert.equal(await page.locator('[data-path="bindings[0].schedule"]').inputValue(), "0 0 3 * * *");
  assert.equal(await page.locator("#err-fn-raw").innerText(), "");
  await page.getByLabel(/Created disabled/).check();
  await page.getByRole("button", { name: "Create function" }).click();
  await page.waitForURL(/\/functions\/nightly$/);
  const path = "/v1/tenants/contoso/apps/orders/functions/nightly";
  const fn = await call(shoal.base, admin, "GET", path);
  assert.deepEqual(fn.bindings, [{ type: "timerTrigger", direction: "in", name: "myTimer", schedule: "0 0 3 * * *", runOnStartup: true }]);
  assert.equal(fn.disabled, true);
  await fetch(`${shoal.base}${path}`, { method: "DELETE", headers: { Authorization: `Bearer ${admin}` } });
  await page.close();
});

test("a Save in the function editor keeps the function.json keys the form does not show", async () => {
  // Written through the API with what the editor has no field for. billing's connection
  // setting is missing: the function never runs, which this journey does not need.
  const path = "/v1/tenants/contoso/apps/billing/functions/refund";
  await call(shoal.base, admin, "PUT", path, {
    bindings: [{ type: "queueTrigger", direction: "in", name: "refund", queueName: "refunds", connection: "BillingStorage" }],
    retry: { strategy: "fixedDelay", maxRetryCount: 3, delayInterval: "00:00:05" },
    maxConcurrency: 4,
    circuitBreaker: { failureThreshold: 7 },
    scriptFile: "refund.js",
  });
  const written = await call(shoal.base, admin, "GET", path);
  const page = await context.newPage();
  await signIn(page, admin);
  await page.goto(`${shoal.base}/tenants/contoso/apps/billing/functions/refund`);
  await page.locator('[data-path="bindings[0].queueName"]').fill("refunds-v2");
  const [saved] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === "PUT" && r.url().endsWith("/functions/refund")),
    page.getByRole("button", { name: "Save" }).click(),
  ]);
  assert.equal(saved.status(), 200, await saved.text());
  const after = await call(shoal.base, admin, "GET", path);
  assert.equal(after.bindings[0].queueName, "refunds-v2");
  for (const key of ["retry", "maxConcurrency", "circuitBreaker", "scriptFile", "disabled", "excluded"]) {
    assert.deepEqual(after[key], written[key], `${key} survives the Save`);
  }

  // The cap has its own field: changed, then emptied (no cap), the rest still kept.
  const save = async (fn) => {
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "PUT" && r.url().endsWith(`/functions/${fn}`)),
      page.getByRole("button", { name: "Save" }).click(),
    ]);
    return answer.status();
  };
  const cap = page.getByLabel("Max concurrency");
  assert.equal(await cap.inputValue(), "4");
  await cap.fill("6");
  assert.equal(await save("refund"), 200);
  assert.equal((await call(shoal.base, admin, "GET", path)).maxConcurrency, 6);
  await cap.fill("");
  assert.equal(await save("refund"), 200);
  const uncapped = await call(shoal.base, admin, "GET", path);
  assert.equal(uncapped.maxConcurrency ?? null, null);
  assert.deepEqual(uncapped.retry, written.retry);
  await call(shoal.base, admin, "DELETE", path);

  // An HTTP-triggered function takes no cap: the API's 422 is said at the field, which gets focus.
  const hook = "/v1/tenants/contoso/apps/billing/functions/notify";
  await call(shoal.base, admin, "PUT", hook, { bindings: [{ type: "httpTrigger", direction: "in", name: "req", methods: ["post"] }] });
  await page.goto(`${shoal.base}/tenants/contoso/apps/billing/functions/notify`);
  await cap.fill("5");
  assert.equal(await save("notify"), 422);
  await page.locator('#fn-max-concurrency[aria-invalid="true"]').waitFor();
  assert.match(await page.locator("#err-fn-max-concurrency").innerText(), /webhooks\.requestsPerSecond/);
  assert.equal(await page.evaluate(() => document.activeElement?.id), "fn-max-concurrency");
  assert.equal(await page.locator("#fn-errors [role=alert]").count(), 0, "the error is at its field, not above the form");
  await shot(page, "03-function-cap-422");
  assert.equal((await call(shoal.base, admin, "GET", hook)).maxConcurrency ?? null, null);
  await call(shoal.base, admin, "DELETE", hook);
  await page.close();
});

test("a tenant Reader sees no other tenant, no write actions, and a refused write says 403 plainly", async () => {
  // A service principal that is Contributor when the page loads, then only Reader: the page
  // still offers Save, and the API's 403 is what the person sees.
  const sp = await call(shoal.base, admin, "PUT", "/v1/tenants/contoso/servicePrincipals/deployer");
  const contributor = randomUUID();
  const assign = (id, role) =>
    call(shoal.base, admin, "PUT", `/v1/tenants/contoso/roleAssignments/${id}`, {
      principalId: sp.principalId,
      roleDefinitionId: role,
      scope: "/tenants/contoso",
    });
  await assign(contributor, "Contributor");
  const form = new URLSearchParams({
    grant_type: "client_credentials",
    client_id: sp.clientId,
    client_secret: sp.clientSecret,
    scope: "api://shoal/.default",
  });
  const issued = await (await fetch(`${shoal.base}/oauth2/token`, { method: "POST", body: form })).json();
  assert.ok(issued.access_token, JSON.stringify(issued));

  const page = await context.newPage();
  await signIn(page, issued.access_token);
  await page.waitForURL(/\/tenants\/contoso\/apps$/);
  // The switcher fills in after the tenants list arrives: wait for it before reading it.
  await page.locator("#tenant-switcher option").first().waitFor({ state: "attached" });
  assert.deepEqual(await page.locator("#tenant-switcher option").allInnerTexts(), ["contoso"]);
  await page.goto(`${shoal.base}/tenants/fabrikam/apps`);
  await page.getByRole("alert").waitFor();
  assert.match(await page.getByRole("alert").innerText(), /Not found/);
  await page.goto(`${shoal.base}/tenants/contoso/apps/orders/functions/ship`);
  await page.getByRole("button", { name: "Save" }).waitFor();

  await call(shoal.base, admin, "DELETE", `/v1/tenants/contoso/roleAssignments/${contributor}`);
  await assign(randomUUID(), "Reader");
  // The API drops cached grants on the change's notification: wait until it sees the Reader.
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    const me = await call(shoal.base, issued.access_token, "GET", "/v1/me?tenant=contoso");
    if (!me.actions.includes("Shoal/apps/functions/write")) break;
    assert.ok(Date.now() < deadline, "the API still saw the Contributor assignment");
    await new Promise((r) => setTimeout(r, 100));
  }
  await page.locator('[data-path="bindings[0].queueName"]').fill("orders-v2");
  await page.getByRole("button", { name: "Save" }).click();
  const alert = page.locator("#fn-errors [role=alert]");
  await alert.waitFor();
  assert.match(await alert.innerText(), /^Not allowed: /);
  await shot(page, "04-reader-403");

  // Reloaded, the page no longer offers what the Reader cannot do.
  await page.reload();
  await page.locator('[data-path="bindings[0].queueName"]').waitFor();
  assert.equal(await page.getByRole("button", { name: "Save" }).count(), 0);
  assert.equal(await page.locator('[data-path="bindings[0].queueName"]').getAttribute("readonly"), "");
  await page.goto(`${shoal.base}/tenants/contoso/apps/orders`);
  await page.locator("#scale-mode").waitFor();
  assert.equal(await page.getByLabel(/Target-based scaling/).isDisabled(), true);
  assert.equal(await page.getByRole("button", { name: "Reveal values" }).count(), 0);
  // Nothing to edit or delete: the handler and limits read as facts, no settings form.
  for (const name of ["Save handler", "Save setting", "Save scale limits", "Delete orders"]) {
    assert.equal(await page.getByRole("button", { name }).count(), 0, name);
  }
  assert.equal(await page.getByRole("button", { name: /^(Change|Remove) / }).count(), 0);
  await page.getByText(handler.url).waitFor();
  await page.goto(`${shoal.base}/tenants/contoso/apps/orders/functions/ship`);
  await page.locator("#fn-health-state").waitFor();
  assert.equal(await page.getByRole("button", { name: /^(Delete|Disable) ship/ }).count(), 0);
  assert.equal(await page.getByRole("button", { name: "Send test message" }).count(), 0);
  assert.equal(await page.getByLabel("Max concurrency").getAttribute("readonly"), "");
  await page.goto(`${shoal.base}/tenants/contoso/apps`);
  await page.locator("#apps tbody tr").first().waitFor();
  assert.equal(await page.getByText("New app").count(), 0);
  await shot(page, "05-reader-apps");
  // Nor does the access view offer to assign or remove roles, or to create, change or delete
  // identities, service principals, users or roles.
  await page.goto(`${shoal.base}/tenants/contoso/access`);
  await page.getByRole("cell", { name: "deployer" }).first().waitFor();
  assert.equal(await page.getByText("Assign a role").count(), 0);
  for (const create of ["New identity", "New service principal", "New user", "New role"]) {
    assert.equal(await page.getByText(create, { exact: true }).count(), 0, create);
  }
  // The one form is Check access, which reads: a Reader may read role assignments (`*/read`).
  assert.equal(await page.locator('main form:not([aria-label="Check access"])').count(), 0);
  assert.equal(await page.getByRole("button", { name: /^(Remove|Delete|Change|New secret) / }).count(), 0);
  assert.deepEqual(await page.locator("main button").allInnerTexts(), ["Check access"]);
  await page.close();
});

test("from an empty app, its handler, settings and a queue function are built through the UI until it runs", async () => {
  await shoal.azurite.createQueue("dispatch-in");
  const page = await context.newPage();
  await signIn(page, admin);
  await page.goto(`${shoal.base}/tenants/contoso/apps`);
  await page.getByText("New app", { exact: true }).first().click();
  await page.getByLabel("Name").fill("Bad Name");
  await page.getByLabel("Handler URL").fill("http://127.0.0.1:9/api");
  await page.getByRole("button", { name: "Create app" }).click();
  await page.locator('#new-app-name[aria-invalid="true"]').waitFor();
  assert.match(await page.locator("#new-app-name-error").innerText(), /\S/);
  // A name in use: the API's 412 for a create, in words.
  await page.getByLabel("Name").fill("orders");
  await page.getByRole("button", { name: "Create app" }).click();
  await page.locator("#new-app-name-error", { hasText: "An app named orders exists already: choose another name." }).waitFor();
  await page.getByLabel("Name").fill("shipping");
  await page.getByRole("button", { name: "Create app" }).click();
  await page.waitForURL(/\/tenants\/contoso\/apps\/shipping$/);
  const app = () => call(shoal.base, admin, "GET", "/v1/tenants/contoso/apps/shipping");

  // The handler is aimed at the journeys' handler; saved in place, focus kept.
  await page.getByLabel("Handler URL").fill(handler.url);
  const saveHandler = page.getByRole("button", { name: "Save handler" });
  await saveHandler.click();
  await page.locator("#handler-form-said", { hasText: `Saved: the handler is ${handler.url}, timeout 30 s.` }).waitFor();
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Save handler");
  assert.equal((await app()).handler.url, handler.url);

  // A setting added, changed and removed; the page keeps its scroll position and focus.
  await page.setViewportSize({ width: 1200, height: 500 });
  const name = page.getByLabel("Setting name");
  const value = page.getByLabel("Setting value");
  const saveSetting = page.getByRole("button", { name: "Save setting" });
  await name.fill("Greeting");
  await value.fill("hello");
  await saveSetting.scrollIntoViewIfNeeded();
  const scrolled = await page.evaluate(() => window.scrollY);
  assert.ok(scrolled > 0, "the settings form is below the fold");
  await saveSetting.click();
  await page.locator("#settings-said", { hasText: "Saved: added Greeting." }).waitFor();
  // Not drawn again from the top: still scrolled, the button still on screen and focused.
  assert.ok(await page.evaluate(() => window.scrollY) > 0, "the page scrolled back to the top");
  const box = await saveSetting.boundingBox();
  assert.ok(box && box.y >= 0 && box.y + box.height <= 500, `Save setting is off screen: ${JSON.stringify(box)}`);
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Save setting");
  await page.getByRole("button", { name: "Change Greeting" }).click();
  assert.equal(await value.inputValue(), "hello");
  await value.fill("hello, world");
  await saveSetting.click();
  await page.locator("#settings-said", { hasText: "Saved: changed Greeting." }).waitFor();
  assert.equal((await app()).appSettings.Greeting, "hello, world");
  // Marked secret, a name the API does not mask: the page says so.
  await name.fill("Colour");
  await page.getByLabel(/^Secret: /).check();
  assert.equal(await value.getAttribute("type"), "password");
  await value.fill("blue");
  await saveSetting.click();
  await page.locator("#settings-said", { hasText: /^Saved: added Colour\. The API shows Colour in the clear/ }).waitFor();
  // One the API masks: the table says secret and shows no value.
  await name.fill("PartnerApiKey");
  await value.fill("k-123-e2e");
  await saveSetting.click();
  await page.locator("#settings-said", { hasText: /^Saved: added PartnerApiKey\.$/ }).waitFor();
  const keyRow = page.locator('#settings-table tr[data-setting="PartnerApiKey"]');
  assert.match(await keyRow.innerText(), /\*{8}\s+secret/);
  assert.equal(await page.getByText("k-123-e2e").count(), 0);
  await page.getByRole("button", { name: "Reveal values" }).click();
  await page.getByText("k-123-e2e").waitFor();
  // Removing asks first.
  await page.getByRole("button", { name: "Remove Colour" }).click();
  await confirm(page, "Remove");
  await page.locator("#settings-said", { hasText: "Saved: removed Colour." }).waitFor();
  assert.equal(await page.locator('#settings-table tr[data-setting="Colour"]').count(), 0);
  assert.deepEqual(Object.keys((await app()).appSettings).sort(), ["Greeting", "PartnerApiKey"]);

  // Someone else changes the app meanwhile: the next save is refused in words, nothing lost.
  await call(shoal.base, admin, "PATCH", "/v1/tenants/contoso/apps/shipping", { appSettings: { Greeting: "theirs" } });
  await name.fill("Greeting");
  await value.fill("mine");
  await saveSetting.click();
  const conflict = page.locator("#settings-problem [role=alert]");
  await conflict.waitFor();
  assert.match(await conflict.innerText(), /changed by someone else since this page loaded\. Reload/);
  assert.equal((await app()).appSettings.Greeting, "theirs");
  await shot(page, "08-app-settings");
  // Reloaded from the message: their value shows.
  await conflict.getByRole("button", { name: "Reload" }).click();
  await page.locator('#settings-table tr[data-setting="Greeting"]', { hasText: "theirs" }).waitFor();

  // Scale limits: a value the API refuses is said at its field, then a good one is saved.
  await page.getByLabel(/^Instance limit/).fill("2000");
  await page.getByRole("button", { name: "Save scale limits" }).click();
  await page.locator('#scale-limit[aria-invalid="true"]').waitFor();
  assert.match(await page.locator("#scale-limit-error").innerText(), /\S/);
  await page.getByLabel(/^Instance limit/).fill("4");
  await page.getByRole("button", { name: "Save scale limits" }).click();
  await page.locator("#limits-form-said", { hasText: "Saved: at most 4 instances, at least 0." }).waitFor();
  assert.equal((await app()).scale.limit, 4);
  await page.setViewportSize({ width: 1200, height: 900 });

  // A queue function from the template: before it exists, the form says the app lacks the
  // connection it names.
  await page.getByRole("link", { name: "Functions" }).click();
  await page.waitForURL(/\/functions$/);
  await page.locator("#connections-section", { hasText: "shipping has no setting AzureWebJobsStorage" }).waitFor();
  await page.getByLabel("Name", { exact: true }).fill("dispatch");
  await page.locator('[data-path="bindings[0].queueName"]').fill("dispatch-in");
  await page.getByRole("button", { name: "Create function" }).click();
  await page.waitForURL(/\/functions\/dispatch$/);
  await page.getByRole("heading", { name: "function.json of dispatch" }).waitFor();
  const fn = await call(shoal.base, admin, "GET", "/v1/tenants/contoso/apps/shipping/functions/dispatch");
  assert.equal(fn.triggerType, "queueTrigger");
  assert.equal(fn.bindings[0].queueName, "dispatch-in");
  // Its page says why it cannot run (the diagnostics' error), not "receiving" alone, and the
  // poison section says why it cannot read the poison queue.
  await page.locator("#fn-health-state", { hasText: "Not healthy: dispatch cannot run as it is." }).waitFor();
  assert.match(await page.locator("#fn-health").innerText(), /no connection settings found/);
  await page.locator("#poison-problem [role=alert]", { hasText: /^Not possible as things stand: / }).waitFor();
  await shot(page, "08-function-unhealthy");
  // The connection is added from there: Azurite's, which the stack runs.
  await page.getByLabel("Value of AzureWebJobsStorage").fill(shoal.azurite.connectionString);
  await page.getByRole("button", { name: "Add AzureWebJobsStorage" }).click();
  // The workers reload the app within seconds; the page reads the checks again until then.
  await page.locator("#fn-health-said", { hasText: /^Saved: added AzureWebJobsStorage\. (Not h|H)ealthy/ }).waitFor({ timeout: 30_000 });
  assert.equal(
    await page.locator("#fn-health-said").innerText(),
    "Saved: added AzureWebJobsStorage. Healthy: every check of dispatch passes.",
    await page.locator("#health-section").innerText(),
  );
  assert.equal((await app()).appSettings.AzureWebJobsStorage, "********");
  const diagnostics = await call(shoal.base, admin, "GET", "/v1/tenants/contoso/apps/shipping/diagnostics");
  assert.equal(diagnostics.healthy, true, JSON.stringify(diagnostics.checks));
  await page.reload();
  await page.locator("#poison-depth").waitFor();
  await shot(page, "08-function-healthy");

  // It runs: a message in its queue reaches the handler and shows in the monitor.
  await shoal.azurite.enqueue("dispatch-in", [JSON.stringify({ order: 900, outcome: "ok" })]);
  await until("the handler answered dispatch", 60_000, () => handler.answered().some((a) => a.function === "dispatch" && a.order === 900));
  await page.getByText("Last hour: 1 invocations, 0 failed.").waitFor({ timeout: 30_000 });

  // Disabled after a question, then enabled again.
  await page.getByRole("button", { name: "Disable dispatch" }).click();
  await confirm(page, "Disable");
  await page.locator("#fn-actions-said", { hasText: "Saved: dispatch is disabled." }).waitFor();
  assert.equal((await call(shoal.base, admin, "GET", "/v1/tenants/contoso/apps/shipping/functions/dispatch")).disabled, true);
  await page.getByRole("button", { name: "Enable dispatch" }).click();
  await page.locator("#fn-actions-said", { hasText: "Saved: dispatch is enabled." }).waitFor();
  // The editor's next save carries the version the toggle left (no 412) and keeps it enabled.
  const [saved] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === "PUT" && r.url().endsWith("/functions/dispatch")),
    page.getByRole("button", { name: "Save" }).click(),
  ]);
  assert.equal(saved.status(), 200);
  assert.equal((await call(shoal.base, admin, "GET", "/v1/tenants/contoso/apps/shipping/functions/dispatch")).disabled, false);

  // An HTTP function from its template: no connection to add, healthy at once.
  await page.goto(`${shoal.base}/tenants/contoso/apps/shipping/functions`);
  await page.getByLabel("Template").selectOption("http");
  await page.getByLabel("Name", { exact: true }).fill("hook");
  assert.equal(await page.locator('[data-path="bindings[0].type"]').inputValue(), "httpTrigger");
  assert.equal(await page.locator("#connections-section .missing-connection").count(), 0);
  await page.getByRole("button", { name: "Create function" }).click();
  await page.waitForURL(/\/functions\/hook$/);
  await page.locator("#fn-health-state", { hasText: "Healthy: every check of hook passes." }).waitFor();
  await page.goto(`${shoal.base}/tenants/contoso/apps/shipping/functions/dispatch`);

  // Deleted after a question: Cancel keeps it.
  await page.getByRole("button", { name: "Delete dispatch" }).click();
  await confirm(page, "Cancel");
  await page.getByRole("button", { name: "Delete dispatch" }).click();
  await confirm(page, "Delete function");
  await page.waitForURL(/\/apps\/shipping\/functions$/);
  const left = await call(shoal.base, admin, "GET", "/v1/tenants/contoso/apps/shipping/functions");
  assert.deepEqual(left.items.map((f) => f.name), ["hook"]);
  // And the app, from its page.
  await page.goto(`${shoal.base}/tenants/contoso/apps/shipping`);
  await page.getByRole("button", { name: "Delete shipping" }).click();
  await confirm(page, "Delete app");
  await page.waitForURL(/\/tenants\/contoso\/apps$/);
  const response = await fetch(`${shoal.base}/v1/tenants/contoso/apps/shipping`, { headers: { Authorization: `Bearer ${admin}` } });
  assert.equal(response.status, 404);
  await page.close();
});

test("the app view fits a phone's width", async () => {
  const page = await context.newPage();
  await page.setViewportSize({ width: 375, height: 740 });
  await signIn(page, admin);
  await page.goto(`${shoal.base}/tenants/contoso/apps/orders`);
  await page.locator("#scale-mode").waitFor();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
  await shot(page, "06-app-phone");
  await page.close();
});

test("a backlog scales the app out: the scale view charts it, logs the decision and places it on the workers", async () => {
  const api = (path) => call(shoal.base, admin, "GET", `/v1/tenants/contoso/apps/orders${path}`);
  // The handler holds these deliveries until released: the backlog stays in the queue (held
  // messages are invisible, not gone) while the scheduler reads it.
  const release = handler.hold();
  const backlog = Array.from({ length: 400 }, (_, i) => JSON.stringify({ order: 1000 + i, outcome: "hold" }));
  try {
    await shoal.azurite.enqueue("orders", backlog);
    const status = await until("the scheduler sampled the whole backlog, scaled orders out and placed it on every worker", 60_000, async () => {
      const [scale, history] = await Promise.all([api("/scale?decisions=50"), api("/scale/history")]);
      const sampled = history.samples.some((x) => x.metric === backlog.length);
      const scaledOut = scale.decisions.some((d) => d.to > d.from);
      return sampled && scaledOut && scale.currentInstances === WORKERS.length ? scale : null;
    });

    const page = await context.newPage();
    await signIn(page, admin);
    await page.goto(`${shoal.base}/tenants/contoso/apps/orders/scale`);
    // The queue-length chart: the backlog as the scheduler read it from Azurite.
    const n = backlog.length;
    await page.getByText(new RegExp(`^Queue length, .*; highest ${n} messages\\. Latest: queue length ${n}\\.`)).waitFor();
    await page.getByText(/^Desired and placed instances, .*; highest \d+ instances\. Latest: desired instances [1-9]\d*, placed instances \d+\./).waitFor();
    // The decision log: the first scale-out, with the reason the scheduler recorded.
    const first = status.decisions.filter((d) => d.to > d.from).at(-1);
    assert.match(first.reason, /^scale out: ship queueLength \d+ \/ \d+ per instance/);
    const decided = page.getByRole("row").filter({ has: page.getByRole("cell", { name: `${first.from} → ${first.to}`, exact: true }) });
    await decided.last().getByRole("cell", { name: first.reason, exact: true }).waitFor();
    // More instances are wanted than can be placed: one per worker at most.
    const current = Number(await page.locator("#current-instances").innerText());
    const desired = Number(await page.locator("#desired-instances").innerText());
    assert.equal(current, WORKERS.length);
    assert.ok(desired > current, `desired ${desired}, current ${current}`);
    // The header and the chart agree (the chart ends with the header's figures), and the page
    // says why fewer are placed than desired.
    const caption = await page.getByText(/^Desired and placed instances, /).innerText();
    assert.match(caption, new RegExp(`Latest: desired instances ${desired}, placed instances ${current}\\.`));
    const note = await page.locator("#placement-note").innerText();
    assert.match(note, new RegExp(`^Desired ${desired}, placed ${current}: ${desired - current} wait for a worker\\.`));
    assert.match(note, /one instance per live worker/);
    // Placement: an instance on each worker, and each worker is taking the backlog.
    for (const worker of WORKERS) await page.getByRole("cell", { name: worker, exact: true }).waitFor();
    await until("the handler has deliveries from every worker", TIMEOUT, () => {
      const callers = new Set(handler.received().filter((r) => r.function === "ship").map((r) => r.worker));
      return WORKERS.every((w) => callers.has(w));
    });
    await shot(page, "07-scale");

    // Released, the workers work the backlog off and the scheduler scales the app back in.
    release();
    await until("the handler answered every message of the backlog", 60_000, () => {
      const orders = new Set(handler.answered().filter((a) => a.outcome === "hold").map((a) => a.order));
      return orders.size === backlog.length;
    });
    await until("the orders queue is empty", 30_000, async () => (await shoal.azurite.length("orders")) === 0);
    await page.getByRole("cell", { name: /^scale in: / }).first().waitFor({ timeout: 30_000 });
    // The chart's next sample (every 10 s) shows the queue empty.
    await page.getByText(/^Queue length, .* Latest: queue length 0\./).waitFor({ timeout: 30_000 });
    await shot(page, "07-scale-in");
    await page.close();
  } finally {
    release();
  }
});

test("the tenants, workers and access views load and pass the accessibility check", async () => {
  const page = await context.newPage();
  await signIn(page, admin);
  await page.waitForURL(/\/tenants$/);
  await page.getByRole("cell", { name: "Fabrikam", exact: true }).waitFor();
  await shot(page, "09-tenants");
  await page.getByRole("link", { name: "Workers" }).click();
  await page.getByRole("heading", { name: "Workers", level: 1 }).waitFor();
  for (const worker of WORKERS) {
    const row = page.getByRole("row").filter({ has: page.getByRole("cell", { name: worker, exact: true }) });
    await row.getByText("alive", { exact: true }).waitFor();
  }
  await shot(page, "10-workers");
  await page.goto(`${shoal.base}/tenants/contoso/access`);
  await page.getByRole("cell", { name: "deployer" }).first().waitFor();
  await page.getByRole("cell", { name: "Function Invoker" }).waitFor();
  await page.getByRole("cell", { name: "Shoal/apps/functions/write" }).first().waitFor();
  await shot(page, "11-access");
  await page.close();
});

test("an owner assigns a role from the access view, sees a bad scope at its field, and removes it", async () => {
  const sp = await call(shoal.base, admin, "PUT", "/v1/tenants/contoso/servicePrincipals/auditor");
  const assignmentsOf = async () =>
    (await call(shoal.base, admin, "GET", "/v1/tenants/contoso/roleAssignments")).items.filter(
      (a) => a.principalId === sp.principalId,
    );
  const page = await context.newPage();
  await signIn(page, admin);
  await page.goto(`${shoal.base}/tenants/contoso/access`);
  await page.getByText("Assign a role", { exact: true }).first().click();
  await page.getByLabel("Principal", { exact: true }).selectOption(sp.principalId);
  await page.getByLabel("Role", { exact: true }).selectOption("Reader");
  await page.getByLabel("Scope", { exact: true }).fill("/tenants/fabrikam");
  await page.getByRole("button", { name: "Assign", exact: true }).click();
  await page.locator('#assign-scope[aria-invalid="true"]').waitFor();
  assert.match(await page.locator("#assign-scope-error").innerText(), /\/tenants\/contoso/);
  assert.deepEqual(await assignmentsOf(), []);
  await shot(page, "13-access-assign-422");

  await page.getByLabel("Scope", { exact: true }).fill("/tenants/contoso/apps/orders");
  await page.getByRole("button", { name: "Assign", exact: true }).click();
  const row = page.locator("#assignments ~ * tr, section[aria-labelledby=assignments] tr").filter({ hasText: "auditor" });
  await row.filter({ hasText: "/tenants/contoso/apps/orders" }).waitFor();
  const [assigned] = await assignmentsOf();
  assert.equal(assigned.roleDefinitionName, "Reader");
  assert.equal(assigned.scope, "/tenants/contoso/apps/orders");
  await shot(page, "14-access-assigned");

  // Check access: what auditor may do at the app, and through which assignment; nothing at
  // the tenant, said in words; a scope outside the tenant is refused at its field.
  const check = page.locator("section[aria-labelledby=check]");
  await check.getByLabel("Principal to check").selectOption(sp.principalId);
  await check.getByLabel("Scope to check").fill("/tenants/contoso/apps/orders");
  await check.getByRole("button", { name: "Check access" }).click();
  await page.locator("#check-summary").getByText(/^auditor \(servicePrincipal\) may take \d+ management actions at \/tenants\/contoso\/apps\/orders, through 1 role assignment\.$/).waitFor();
  const group = check.locator(".check-group").filter({ hasText: "Reader, assigned at /tenants/contoso/apps/orders (here)" });
  await group.getByText("Shoal/apps/read", { exact: true }).waitFor();
  assert.equal(await group.getByText("Shoal/apps/write", { exact: true }).count(), 0);
  await shotAtBothSizes(page, "14-access-check");
  await check.getByLabel("Scope to check").fill("/tenants/contoso");
  await check.getByRole("button", { name: "Check access" }).click();
  await page
    .locator("#check-summary")
    .getByText("auditor (servicePrincipal) has no role assignment at /tenants/contoso or above it, so it may do nothing there.")
    .waitFor();
  assert.equal(await check.locator(".check-group").count(), 0);
  await check.getByLabel("Scope to check").fill("/tenants/fabrikam");
  await check.getByRole("button", { name: "Check access" }).click();
  await page.locator('#check-scope[aria-invalid="true"]').waitFor();
  assert.match(await page.locator("#check-scope-error").innerText(), /\/tenants\/contoso/);

  // Removing asks first: Cancel keeps it.
  await page.getByRole("button", { name: /^Remove Reader of auditor/ }).click();
  await confirm(page, "Cancel");
  assert.equal((await assignmentsOf()).length, 1);
  await page.getByRole("button", { name: /^Remove Reader of auditor/ }).click();
  await confirm(page, "Remove");
  await row.waitFor({ state: "detached" });
  assert.deepEqual(await assignmentsOf(), []);
  await page.close();
});

test("an administrator creates an identity, a service principal, a user and a custom role, assigns it and deletes them", async () => {
  const list = async (collection) =>
    (await call(shoal.base, admin, "GET", `/v1/tenants/contoso/${collection}`)).items.map((i) => i.name);
  const page = await context.newPage();
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: shoal.base });
  await page.setViewportSize({ width: 1366, height: 768 });
  await signIn(page, admin);
  await page.goto(`${shoal.base}/tenants/contoso/access`);
  const said = page.locator("#access-said");
  const section = (id) => page.locator(`section[aria-labelledby=${id}]`);

  // An identity: a bad name is refused at its field, then one is made.
  await page.getByText("New identity", { exact: true }).first().click();
  await page.getByLabel("Identity name").fill("Orders MI");
  await page.getByRole("button", { name: "Create identity" }).click();
  await page.locator('#new-identity-name[aria-invalid="true"]').waitFor();
  assert.notEqual((await page.locator("#new-identity-name-error").innerText()).trim(), "");
  await page.getByLabel("Identity name").fill("orders-mi");
  await page.getByRole("button", { name: "Create identity" }).click();
  await said.getByText("Created the identity orders-mi.").waitFor();
  await section("identities").getByRole("cell", { name: "orders-mi", exact: true }).waitFor();
  // Focus is on the section written, not lost with the form.
  assert.equal(await page.evaluate(() => document.activeElement?.id), "identities");
  assert.ok((await list("identities")).includes("orders-mi"));
  // The same name again says it is taken (the API's PUT read the existing one back).
  await page.getByText("New identity", { exact: true }).first().click();
  await page.getByLabel("Identity name").fill("orders-mi");
  await page.getByRole("button", { name: "Create identity" }).click();
  await page.locator('#new-identity-name[aria-invalid="true"]').waitFor();
  assert.match(await page.locator("#new-identity-name-error").innerText(), /An identity named orders-mi exists already/);

  // A service principal: its secret is shown once, with a copy button, and it works.
  await page.getByText("New service principal", { exact: true }).first().click();
  await page.getByLabel("Service principal name").fill("ci-deploy");
  await page.getByRole("button", { name: "Create service principal" }).click();
  const dialog = page.getByRole("dialog", { name: "Secret of ci-deploy" });
  await dialog.waitFor();
  await dialog.getByText("it will not be shown again").waitFor();
  const secret = await dialog.getByLabel("Client secret").inputValue();
  assert.match(secret, /^shoal_sp_/);
  await dialog.getByRole("button", { name: "Copy secret" }).click();
  await dialog.getByText("Copied to the clipboard.").waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
  await shot(page, "14-access-secret-once", { anyImpact: true });
  const sp = (await call(shoal.base, admin, "GET", "/v1/tenants/contoso/servicePrincipals/ci-deploy"));
  const issued = await (
    await fetch(`${shoal.base}/oauth2/token`, {
      method: "POST",
      body: new URLSearchParams({ grant_type: "client_credentials", client_id: sp.clientId, client_secret: secret, scope: "api://shoal/.default" }),
    })
  ).json();
  assert.ok(issued.access_token, JSON.stringify(issued));
  await dialog.getByRole("button", { name: "Done" }).click();
  await dialog.waitFor({ state: "detached" });
  await section("sps").getByRole("cell", { name: "ci-deploy", exact: true }).waitFor();
  // Closed, the secret is nowhere in the page.
  assert.equal((await page.content()).includes(secret), false);

  // A user: an issuer Shoal does not trust is refused at its field, naming the one it does.
  await page.getByText("New user", { exact: true }).first().click();
  await page.getByLabel("User name").fill("ann");
  await page.getByLabel("Issuer").fill("https://login.elsewhere.example/");
  await page.getByLabel("Subject").fill("ann-oid");
  await page.getByRole("button", { name: "Create user" }).click();
  await page.locator('#new-user-issuer[aria-invalid="true"]').waitFor();
  assert.ok((await page.locator("#new-user-issuer-error").innerText()).includes(EXTERNAL_ISSUER));
  await shot(page, "14-access-user-422", { anyImpact: true });
  await page.getByLabel("Issuer").fill(EXTERNAL_ISSUER);
  await page.getByRole("button", { name: "Create user" }).click();
  await section("users").getByRole("cell", { name: "ann", exact: true }).waitFor();
  assert.ok((await list("users")).includes("ann"));

  // A custom role: an entry the API refuses is said at its list, with its line.
  await page.getByText("New role", { exact: true }).first().click();
  await page.getByLabel("Role name").fill("Order Reader");
  await page.getByLabel("Actions", { exact: true }).fill("Shoal/apps/read\nApps/read");
  await page.getByRole("button", { name: "Create role" }).click();
  await page.locator('#role-permissions-actions[aria-invalid="true"]').waitFor();
  assert.match(await page.locator("#role-permissions-actions-error").innerText(), /^line 2 \(Apps\/read\): /);
  await page.getByLabel("Actions", { exact: true }).fill("Shoal/apps/read\nShoal/apps/functions/read");
  await page.getByRole("button", { name: "Create role" }).click();
  await said.getByText("Created the role Order Reader.").waitFor();
  const role = (await call(shoal.base, admin, "GET", "/v1/tenants/contoso/roleDefinitions/Order%20Reader"));
  assert.deepEqual(role.permissions.actions, ["Shoal/apps/read", "Shoal/apps/functions/read"]);
  assert.deepEqual(role.assignableScopes, ["/tenants/contoso"]);
  // Changed: the form opens with what it holds, its name fixed.
  await page.getByRole("button", { name: "Change role Order Reader" }).click();
  assert.equal(await page.getByLabel("Role name").getAttribute("readonly"), "");
  assert.equal(await page.getByLabel("Actions", { exact: true }).inputValue(), "Shoal/apps/read\nShoal/apps/functions/read");
  await page.getByLabel("Description").fill("Reads apps and their functions");
  await page.getByRole("button", { name: "Save role" }).click();
  await said.getByText("Saved the role Order Reader.").waitFor();
  assert.equal((await call(shoal.base, admin, "GET", "/v1/tenants/contoso/roleDefinitions/Order%20Reader")).description, "Reads apps and their functions");

  // Assigned to the new service principal.
  await page.getByText("Assign a role", { exact: true }).first().click();
  await page.getByLabel("Principal", { exact: true }).selectOption(sp.principalId);
  await page.getByLabel("Role", { exact: true }).selectOption("Order Reader");
  await page.getByRole("button", { name: "Assign", exact: true }).click();
  await section("assignments").getByRole("row").filter({ hasText: "ci-deploy" }).filter({ hasText: "Order Reader" }).waitFor();

  // Every form open, the view passes axe at both sizes.
  await page.evaluate(() => document.querySelectorAll("main details").forEach((d) => { d.open = true; }));
  await shotAtBothSizes(page, "14-access-manage");

  // An assigned role is not deleted: the confirmation says so, and the API's 409 is shown.
  await page.getByRole("button", { name: "Delete role Order Reader" }).click();
  await page.getByRole("dialog").getByText("assigned once").waitFor();
  await confirm(page, "Delete");
  await section("roles").getByRole("alert").waitFor();
  assert.match(await section("roles").getByRole("alert").innerText(), /^Not possible as things stand: /);

  // Then everything goes, each after asking; Cancel keeps it.
  await page.getByRole("button", { name: /^Remove Order Reader of ci-deploy/ }).click();
  await confirm(page, "Remove");
  await said.getByText(/^Removed Order Reader of ci-deploy/).waitFor();
  await page.getByRole("button", { name: "Delete role Order Reader" }).click();
  await confirm(page, "Cancel");
  assert.ok((await list("roleDefinitions")).includes("Order Reader"));
  await page.getByRole("button", { name: "Delete role Order Reader" }).click();
  await confirm(page, "Delete");
  await said.getByText("Deleted the role Order Reader.").waitFor();
  await page.getByRole("button", { name: "Delete user ann" }).click();
  await confirm(page, "Delete");
  await said.getByText("Deleted the user ann.").waitFor();
  await page.getByRole("button", { name: "Delete service principal ci-deploy" }).click();
  await page.getByRole("dialog").getByText("stop working at once").waitFor();
  await confirm(page, "Delete");
  await said.getByText("Deleted the service principal ci-deploy.").waitFor();
  await page.getByRole("button", { name: "Delete identity orders-mi" }).click();
  await confirm(page, "Delete");
  await said.getByText("Deleted the identity orders-mi.").waitFor();
  assert.ok(!(await list("roleDefinitions")).includes("Order Reader"));
  assert.ok(!(await list("users")).includes("ann"));
  assert.ok(!(await list("servicePrincipals")).includes("ci-deploy"));
  assert.ok(!(await list("identities")).includes("orders-mi"));
  // The deleted service principal's token no longer works.
  const refused = await fetch(`${shoal.base}/v1/me`, { headers: { Authorization: `Bearer ${issued.access_token}` } });
  assert.equal(refused.status, 401);
  await page.close();
});

test("a platform administrator creates a tenant and deletes it after asking", async () => {
  const names = async () => (await call(shoal.base, admin, "GET", "/v1/tenants")).items.map((t) => t.name);
  const page = await context.newPage();
  await page.setViewportSize({ width: 1366, height: 768 });
  await signIn(page, admin);
  await page.waitForURL(/\/tenants$/);
  await page.getByText("New tenant", { exact: true }).first().click();
  // A taken name is said at the field (create only: the existing tenant is not replaced).
  await page.getByLabel("Tenant name").fill("contoso");
  await page.getByRole("button", { name: "Create tenant" }).click();
  await page.locator('#new-tenant-name[aria-invalid="true"]').waitFor();
  assert.match(await page.locator("#new-tenant-name-error").innerText(), /A tenant named contoso exists already/);
  assert.equal((await call(shoal.base, admin, "GET", "/v1/tenants/contoso")).displayName, "Contoso");
  await page.getByLabel("Tenant name").fill("Tailspin Toys");
  await page.getByRole("button", { name: "Create tenant" }).click();
  await page.locator("#new-tenant-name-error").filter({ hasText: /\S/, hasNotText: /exists already/ }).waitFor();
  await shotAtBothSizes(page, "09-tenants-create-422");
  await page.getByLabel("Tenant name").fill("tailspin");
  await page.getByLabel("Display name").fill("Tailspin Toys");
  await page.getByRole("button", { name: "Create tenant" }).click();
  await page.locator("#tenants-said").getByText("Created the tenant tailspin.").waitFor();
  await page.getByRole("cell", { name: "Tailspin Toys", exact: true }).waitFor();
  assert.ok((await names()).includes("tailspin"));
  // The header's switcher lists it too.
  await page.locator("#tenant-switcher option", { hasText: "tailspin" }).waitFor({ state: "attached" });

  await page.getByRole("button", { name: "Delete tenant tailspin" }).click();
  await page.getByRole("dialog").getByText("This cannot be undone").waitFor();
  await confirm(page, "Cancel");
  assert.ok((await names()).includes("tailspin"));
  await page.getByRole("button", { name: "Delete tenant tailspin" }).click();
  await confirm(page, "Delete tenant");
  await page.locator("#tenants-said").getByText("Deleted the tenant tailspin.").waitFor();
  await page.getByRole("cell", { name: "Tailspin Toys", exact: true }).waitFor({ state: "detached" });
  assert.ok(!(await names()).includes("tailspin"));
  await page.close();
});

test("the monitor shows the invocations the workers made and a failure's error and handler logs", async () => {
  // Three orders the handler ships, one it declines with a 500, one whose receipt is too large
  // for the output queue. The failing two are tried until maxDequeueCount (5), then poisoned.
  await shoal.azurite.enqueue("orders", [
    ...[41, 44, 45].map((order) => JSON.stringify({ order, outcome: "ok" })),
    JSON.stringify({ order: 42, outcome: "decline" }),
    JSON.stringify({ order: 43, outcome: "oversize" }),
  ]);
  await until("both failing orders are in orders-poison and the queue is empty", 60_000, async () =>
    (await shoal.azurite.length("orders-poison")) === 2 && (await shoal.azurite.length("orders")) === 0,
  );
  const answers = handler.answered().filter((a) => a.function === "ship");
  const failing = answers.filter((a) => a.outcome === "decline" || a.outcome === "oversize");
  assert.deepEqual(
    failing.map((a) => a.dequeueCount).sort(),
    [1, 1, 2, 2, 3, 3, 4, 4, 5, 5],
    "each failing order was tried once per dequeue, up to maxDequeueCount (5)",
  );
  // What the workers recorded (flushed every 5 s) adds up to what the handler answered.
  let seen;
  await until("the workers' telemetry counts every answer of the handler", 20_000, async () => {
    const telemetry = await call(shoal.base, admin, "GET", "/v1/tenants/contoso/apps/orders/functions/ship/invocations?minutes=60&failures=20");
    seen = {
      invocations: telemetry.minutes.reduce((n, m) => n + m.invocations, 0),
      failures: telemetry.minutes.reduce((n, m) => n + m.failures, 0),
    };
    return seen.invocations >= answers.length && seen.failures >= failing.length;
  });
  assert.deepEqual(seen, { invocations: answers.length, failures: failing.length });

  const page = await context.newPage();
  await signIn(page, admin);
  await page.goto(`${shoal.base}/tenants/contoso/apps/orders/functions/ship`);
  await page.getByText(`Last hour: ${answers.length} invocations, ${failing.length} failed.`).waitFor();
  await page.getByText(/^Duration percentiles per minute, .*; highest \d+ ms\./).waitFor();
  await page.getByText(/Percentiles are duration bucket upper bounds/).waitFor();
  // Every minute of the hour is drawn (idle ones as zero), each with its tooltip.
  const moments = await page.locator("#monitor-section svg").first().locator("rect.moment title").allTextContents();
  assert.equal(moments.length, 60);
  assert.ok(moments.some((m) => / · invocations \d+, failures \d+ \(attempts per minute\)$/.test(m)), moments.join("\n"));
  const failures = page.locator("#monitor-section tbody tr");
  // The 500: its error names the status and keeps the body it came with.
  const declined = failures.filter({ hasText: "the handler answered 500" });
  assert.equal(await declined.count(), failing.filter((a) => a.outcome === "decline").length);
  assert.match(await declined.first().innerText(), /card declined/);
  // The refused output: the handler answered 2xx, so its Logs are kept beside the error.
  const refused = failures.filter({ hasText: "writing output bindings failed" });
  assert.equal(await refused.count(), failing.filter((a) => a.outcome === "oversize").length);
  assert.equal(await refused.first().locator("pre.logs").innerText(), "charging order 43\nreceipt for order 43: 81920 characters");
  assert.ok(WORKERS.includes(await refused.first().locator("td").nth(3).innerText()));
  // Both failing orders wait in the poison queue.
  await page.locator("#poison-depth", { hasText: /^2 message\(s\) \(approximate\), for orders\.$/ }).waitFor();
  await page.locator("#monitor-section").screenshot({ path: `${ARTIFACTS}12-monitor-section.png` });
  await shot(page, "12-monitor");

  // It follows new invocations without a reload: two more orders show up in the totals.
  await shoal.azurite.enqueue("orders", [46, 47].map((order) => JSON.stringify({ order, outcome: "ok" })));
  await page.getByText(`Last hour: ${answers.length + 2} invocations, ${failing.length} failed.`).waitFor({ timeout: 40_000 });
  await page.close();
});

test("the explorer lists every invocation, finds a failed message by its id or a trace id with its attempts grouped and linked to the trace viewer, and follows new ones live", async () => {
  // After the monitor journey: orders 41–47 shipped, 42 (declined) and 43 (oversize) poisoned
  // after five dequeues each.
  const page = await context.newPage();
  await signIn(page, admin);
  await page.goto(`${shoal.base}/tenants/contoso/apps/orders/functions/ship`);
  const explorer = page.locator("#explorer-section");
  await explorer.getByText(/^Every invocation is kept, successes too, up to the newest 1000 /).waitFor();
  // Successes are listed too.
  await explorer.locator("tbody tr", { hasText: "succeeded" }).first().waitFor();
  const log = await call(shoal.base, admin, "GET", "/v1/tenants/contoso/apps/orders/functions/ship/invocationLog?status=failed");
  const declined = log.items.find((i) => (i.payload ?? "").includes('"decline"'));
  assert.ok(declined?.messageId, JSON.stringify(log));

  // Found by its message id: one row, its five deliveries grouped under it.
  await explorer.getByLabel("Message id").fill(declined.messageId);
  await explorer.getByRole("button", { name: "Search", exact: true }).click();
  await explorer.locator("#explorer-live", { hasText: "1 invocation shown." }).waitFor();
  const toggle = explorer.getByRole("button", { name: "Show 5 attempts" });
  await toggle.click();
  await explorer.getByRole("button", { name: "Hide 5 attempts" }).waitFor();
  assert.equal(await explorer.getByRole("button", { name: "Hide 5 attempts" }).getAttribute("aria-expanded"), "true");
  const attempts = explorer.locator(".invocation-details tbody tr");
  assert.equal(await attempts.count(), 5);
  const dequeues = await attempts.evaluateAll((rows) => rows.map((r) => r.querySelectorAll("td")[3].textContent));
  assert.deepEqual(dequeues, ["1", "2", "3", "4", "5"]);
  assert.match(await attempts.first().innerText(), /the handler answered 500/);
  assert.match(await attempts.first().innerText(), /card declined/);
  // The payload as JSON, decoded.
  await explorer.getByRole("heading", { name: "Payload (JSON)" }).waitFor();
  assert.match(await explorer.locator(".invocation-details pre.json").innerText(), /"outcome": "decline"/);
  await explorer.screenshot({ path: `${ARTIFACTS}13-explorer-section.png` });
  await shotAtBothSizes(page, "13-explorer");

  // Each attempt's trace id links to the configured trace viewer, in a new tab without opener
  // or referrer: the ids the API recorded, the template's {traceId} replaced.
  const traceIds = declined.attempts.map((a) => a.traceId);
  assert.ok(traceIds.every((id) => /^[0-9a-f]{32}$/.test(id)), JSON.stringify(declined.attempts));
  const links = attempts.locator('a[target="_blank"]');
  assert.deepEqual(
    await links.evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute("href"), a.getAttribute("rel")])),
    traceIds.map((id) => [id, TRACE_VIEWER_URL.replace("{traceId}", id), "noopener noreferrer"]),
  );

  // Found again from a trace seen in the viewer: a whole traceparent pasted works too.
  await explorer.getByRole("button", { name: "Clear", exact: true }).click();
  await explorer.locator("#explorer-live", { hasText: /^\d+ invocations shown/ }).waitFor();
  await explorer.getByLabel("Trace id").fill(`00-${traceIds[2]}-${declined.attempts[2].spanId}-01`);
  await explorer.getByRole("button", { name: "Search", exact: true }).click();
  await explorer.locator("#explorer-live", { hasText: "1 invocation shown." }).waitFor();
  await explorer.getByRole("button", { name: /^(Show|Hide) 5 attempts$/ }).waitFor();
  await explorer.getByLabel("Trace id").fill("not-a-trace");
  await explorer.getByRole("button", { name: "Search", exact: true }).click();
  await explorer.getByText("A trace id is 32 hex digits (or paste a whole traceparent).").waitFor();
  assert.equal(await explorer.getByLabel("Trace id").getAttribute("aria-invalid"), "true");
  await explorer.getByLabel("Trace id").fill("");

  // A bad filter is said at its field.
  await explorer.getByLabel("Invocation id").fill("not-a-uuid");
  await explorer.getByRole("button", { name: "Search", exact: true }).click();
  await explorer.getByText("An invocation id is a UUID.").waitFor();
  assert.equal(await explorer.getByLabel("Invocation id").getAttribute("aria-invalid"), "true");

  // The live tail: a new order shows up without a reload.
  await explorer.getByRole("button", { name: "Clear", exact: true }).click();
  await explorer.getByLabel("Follow new invocations").check();
  await explorer.getByText(/^Checking every 3 s\./).waitFor();
  await shoal.azurite.enqueue("orders", [JSON.stringify({ order: 48, outcome: "ok" })]);
  await explorer.locator("#explorer-live", { hasText: /^1 new invocation\.$/ }).waitFor({ timeout: 30_000 });
  await page.close();
});

test("a poison queue the API cannot read says why instead of disappearing", async () => {
  // billing's connection setting was never set: the poison read is a 409 naming the cause.
  const page = await context.newPage();
  await signIn(page, admin);
  await page.goto(`${shoal.base}/tenants/contoso/apps/billing/functions/invoice`);
  const refused = page.locator("#poison-problem [role=alert]");
  await refused.waitFor();
  assert.match(await refused.innerText(), /^Not possible as things stand: the trigger's queue cannot be used: .*BillingStorage/);
  await page.close();
});

test("a function is paused and resumed by hand from its page", async () => {
  const page = await context.newPage();
  await signIn(page, admin);
  await page.goto(`${shoal.base}/tenants/contoso/apps/orders/functions/ship`);
  const state = page.locator("#breaker-state");
  await state.getByText("receiving", { exact: true }).waitFor();
  // Pausing asks first; Cancel changes nothing.
  await page.locator("#breaker-pause").click();
  await confirm(page, "Cancel");
  const breaker = () => call(shoal.base, admin, "GET", "/v1/tenants/contoso/apps/orders/functions/ship/breaker");
  assert.equal((await breaker()).state, "closed");
  await page.locator("#breaker-pause").click();
  await confirm(page, "Pause");
  await state.getByText("paused", { exact: true }).waitFor();
  await page.locator("#reliability-said", { hasText: "Paused ship." }).waitFor();
  await page.getByRole("cell", { name: "paused by hand" }).first().waitFor();
  await page.locator("#reliability-section").screenshot({ path: `${ARTIFACTS}13-breaker-paused.png` });
  await page.locator("#breaker-resume").click();
  await confirm(page, "Resume");
  await state.getByText("receiving", { exact: true }).waitFor();
  await page.getByRole("cell", { name: "resumed by hand" }).first().waitFor();
  const log = await call(shoal.base, admin, "GET", "/v1/tenants/contoso/auditLog?limit=50");
  const audited = log.items.map((e) => e.action);
  assert.ok(audited.includes("Shoal/apps/functions/pause/action"), audited.join(", "));
  assert.ok(audited.includes("Shoal/apps/functions/resume/action"), audited.join(", "));
  await page.close();
});

test("poison messages are listed decoded, one selected is replayed after a preview, and a Reader sees bodies hidden", async () => {
  // After the monitor journey, orders 42 (declined) and 43 (oversize) wait in orders-poison.
  const page = await context.newPage();
  await signIn(page, admin);
  await page.goto(`${shoal.base}/tenants/contoso/apps/orders/functions/ship`);
  const poison = page.locator("#poison-section");
  await poison.locator("#poison-depth", { hasText: /^2 message\(s\) \(approximate\), for orders\.$/ }).waitFor();
  await poison.getByText("All 2 listed, oldest first.").waitFor();
  // Each body is decoded: the queue's base64 read as the JSON it holds.
  const declined = poison.locator("tbody tr", { hasText: '"outcome": "decline"' });
  assert.match(await declined.innerText(), /JSON, decoded from base64/);
  assert.equal(await poison.locator("#poison-bodies-hidden").count(), 0);
  const id = (await declined.locator("code.id").innerText()).trim();
  const oversize = (await poison.locator("tbody tr", { hasText: '"outcome": "oversize"' }).locator("code.id").innerText()).trim();
  const replaySelected = poison.locator("#poison-replay-selected");
  assert.equal(await replaySelected.innerText(), "Replay selected (0)");
  assert.equal(await replaySelected.isDisabled(), true);
  await poison.getByLabel(`Select message ${id}`).check();
  assert.equal(await replaySelected.innerText(), "Replay selected (1)");
  await page.locator("#poison-section").screenshot({ path: `${ARTIFACTS}14-poison-section.png` });
  await shotAtBothSizes(page, "14-poison");

  // The preview says how many, which and where; Cancel moves nothing.
  const freshDeliveries = () => handler.received().filter((r) => r.function === "ship" && r.order === 42 && r.dequeueCount === 1).length;
  const before = freshDeliveries();
  await replaySelected.click();
  const dialog = page.getByRole("dialog");
  await dialog.getByRole("heading", { name: "Replay 1 selected message?" }).waitFor();
  assert.match(await dialog.innerText(), new RegExp(`from orders-poison back to orders, .*: ${id}\\.`));
  await confirm(page, "Cancel");
  assert.equal(await shoal.azurite.length("orders-poison"), 2);
  await replaySelected.click();
  await confirm(page, "Replay");
  await poison.locator("#poison-said", { hasText: /^Replayed 1 message to orders\.$/ }).waitFor();
  // The list was read again; the order is delivered again as a new message (dequeue count 1),
  // and the other poison message was left where it was.
  await poison.locator("#poison-replay-selected", { hasText: "Replay selected (0)" }).waitFor();
  await until("the replayed order reached the handler as a new message", 30_000, async () => freshDeliveries() > before);
  const left = await call(shoal.base, admin, "GET", "/v1/tenants/contoso/apps/orders/functions/ship/poison?top=32");
  assert.ok(left.messages.some((m) => m.messageId === oversize), JSON.stringify(left));
  assert.ok(!left.messages.some((m) => m.messageId === id), JSON.stringify(left));
  await poison.getByRole("button", { name: "Refresh", exact: true }).click();
  await poison.locator("#poison-said", { hasText: /^Read again at / }).waitFor();
  assert.equal(await page.evaluate(() => document.activeElement?.id), "poison-refresh");
  const log = await call(shoal.base, admin, "GET", "/v1/tenants/contoso/auditLog?limit=50");
  assert.ok(log.items.some((e) => e.action === "Shoal/apps/functions/poison/replay/action"), "the replay is audited");
  await page.close();

  // A Reader may read the queue but neither its bodies nor replay: said, not shown as empty.
  const reader = await shoal.token("--tenant", "contoso", "--role", "Reader", "--subject", "e2e-poison-reader");
  const readerPage = await context.newPage();
  await signIn(readerPage, reader);
  await readerPage.goto(`${shoal.base}/tenants/contoso/apps/orders/functions/ship`);
  const hidden = readerPage.locator("#poison-bodies-hidden");
  await hidden.waitFor();
  assert.match(await hidden.innerText(), /only to callers who may list the app's settings/);
  assert.ok((await readerPage.locator("#poison-section .body-hidden").count()) >= 1);
  assert.equal(await readerPage.locator("#poison-section pre").count(), 0);
  assert.equal(await readerPage.locator("#poison-section input[type=checkbox]").count(), 0);
  assert.equal(await readerPage.getByRole("button", { name: /^Replay/ }).count(), 0);
  await shot(readerPage, "14-poison-reader");
  await readerPage.close();
});

test("a test message sent from a function's page reaches its handler; a refused one says why at its field", async () => {
  const page = await context.newPage();
  await signIn(page, admin);
  await page.goto(`${shoal.base}/tenants/contoso/apps/orders/functions/ship`);
  const body = page.getByLabel("Message body");
  const send = page.getByRole("button", { name: "Send test message" });
  // Not JSON while the body is read as JSON: said at the field, nothing sent.
  await body.fill("{order");
  await send.click();
  await page.locator('#send-body[aria-invalid="true"]').waitFor();
  assert.match(await page.locator("#send-body-error").innerText(), /^is not JSON/);
  // Larger than a Storage queue message may be: the API's 422, at the body.
  await page.getByLabel("Body is").selectOption("text");
  await body.fill("x".repeat(80 * 1024));
  const [refused] = await Promise.all([page.waitForResponse((r) => r.url().endsWith("/functions/ship/send")), send.click()]);
  assert.equal(refused.status(), 422);
  await page.locator("#fn-send-problem [role=alert]", { hasText: /^Not valid: / }).waitFor();
  assert.match(await page.locator("#send-body-error").innerText(), /\S/);
  assert.equal(await page.evaluate(() => document.activeElement?.id), "send-body");
  await shot(page, "15-send-422");

  await page.getByLabel("Body is").selectOption("json");
  await body.fill(JSON.stringify({ order: 960, outcome: "ok" }));
  await send.click();
  await page.locator("#fn-send-said", { hasText: /^Sent to orders \(message id .+, \d+ bytes\)\.$/ }).waitFor();
  assert.equal(await body.getAttribute("aria-invalid"), null);
  assert.equal(await page.locator("#fn-send-problem").innerText(), "");
  await until("the handler answered the test message", 30_000, () =>
    handler.answered().some((a) => a.function === "ship" && a.order === 960 && a.status === 200),
  );
  await shot(page, "15-send-sent");
  const log = await call(shoal.base, admin, "GET", "/v1/tenants/contoso/auditLog?limit=50");
  assert.ok(log.items.some((e) => e.action === "Shoal/apps/functions/send/action"), "the send is audited");
  await page.close();
});

test("a test request to an HTTP-triggered function is made as the signed-in person and shows the function's response", async () => {
  const fn = "/v1/tenants/contoso/apps/orders/functions/quote";
  await call(shoal.base, admin, "PUT", fn, {
    bindings: [
      { type: "httpTrigger", direction: "in", name: "req", methods: ["post", "get"] },
      { type: "http", direction: "out", name: "$return" },
    ],
  });
  const page = await context.newPage();
  await signIn(page, admin);
  await page.goto(`${shoal.base}/tenants/contoso/apps/orders/functions/quote`);
  const method = page.locator("#send-method");
  await method.waitFor();
  assert.deepEqual(await method.locator("option").allTextContents(), ["POST", "GET"]);
  const body = page.getByLabel("Request body");
  const send = page.getByRole("button", { name: "Send test message" });
  // A GET with a body: said at the field, nothing sent.
  await method.selectOption("GET");
  await body.fill("{}");
  await send.click();
  await page.locator('#send-body[aria-invalid="true"]').waitFor();
  assert.match(await page.locator("#send-body-error").innerText(), /^a GET request has no body/);

  await method.selectOption("POST");
  await page.getByLabel("Query string").fill("source=dashboard");
  await body.fill(JSON.stringify({ order: 970 }));
  const [answered] = await Promise.all([
    page.waitForResponse((r) => new URL(r.url()).pathname === "/webhooks/contoso/orders/quote"),
    send.click(),
  ]);
  assert.equal(answered.status(), 200);
  assert.equal(await answered.request().headerValue("authorization"), `Bearer ${admin}`);
  await page.locator("#fn-send-said", { hasText: /^The function answered 200 OK, with \d+ bytes of application\/json\.$/ }).waitFor();
  await page.getByRole("heading", { name: "Response body (JSON)" }).waitFor();
  assert.deepEqual(JSON.parse(await page.locator("#fn-send-answer pre").innerText()), { order: 970, quoted: true, query: { source: "dashboard" } });
  assert.ok(handler.received().some((r) => r.function === "quote" && r.order === 970));
  await shot(page, "15-send-http");
  await page.close();

  // A Contributor may send test messages but not invoke (a data action): the ingress's 403,
  // said plainly.
  const contributor = await shoal.token("--tenant", "contoso", "--role", "Contributor", "--subject", "e2e-http-contributor");
  const refusedPage = await context.newPage();
  await signIn(refusedPage, contributor);
  await refusedPage.goto(`${shoal.base}/tenants/contoso/apps/orders/functions/quote`);
  await refusedPage.getByLabel("Request body").fill(JSON.stringify({ order: 971 }));
  await refusedPage.getByRole("button", { name: "Send test message" }).click();
  const alert = refusedPage.locator("#fn-send-problem [role=alert]");
  await alert.waitFor();
  assert.match(await alert.innerText(), /^Not allowed: .*Shoal\/apps\/functions\/invoke\/action/);
  assert.ok(!handler.received().some((r) => r.function === "quote" && r.order === 971));
  await refusedPage.close();
  await call(shoal.base, admin, "DELETE", fn);
});

/// The views as a visitor sees them on arrival, at a laptop's and a phone's size, for
/// docs/dashboard/ (`deploy/local/web.sh screenshots` copies them there): the window only
/// (not the whole page) as JPEG, each checked by axe with no violation of any impact.
const GALLERY = [
  ["apps", "/tenants/contoso/apps"],
  ["app", "/tenants/contoso/apps/orders"],
  ["functions", "/tenants/contoso/apps/orders/functions"],
  ["function", "/tenants/contoso/apps/orders/functions/ship"],
  ["scale", "/tenants/contoso/apps/orders/scale"],
  ["access", "/tenants/contoso/access"],
  ["tenants", "/tenants"],
  ["workers", "/workers"],
];

async function galleryShot(page, name, prepare = async () => {}) {
  mkdirSync(`${ARTIFACTS}gallery`, { recursive: true });
  for (const [width, height] of [[1366, 768], [390, 844]]) {
    await page.setViewportSize({ width, height });
    await prepare();
    await page.screenshot({ path: `${ARTIFACTS}gallery/${name}-${width}.jpg`, type: "jpeg", quality: 70 });
    await page.addScriptTag({ content: AXE });
    const violations = await page.evaluate(async () => {
      const result = await window.axe.run(document, { resultTypes: ["violations"] });
      return result.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
    });
    assert.deepEqual(violations, [], `accessibility violations on ${name} at ${width}px`);
  }
  await page.setViewportSize({ width: 1366, height: 768 });
}

test("every view, at both sizes, for the dashboard's documentation", async () => {
  const page = await context.newPage();
  await page.goto(shoal.base);
  await page.getByLabel("Bearer token").waitFor();
  await galleryShot(page, "signin");
  await signIn(page, admin);
  for (const [name, path] of GALLERY) {
    await page.goto(`${shoal.base}${path}`);
    await page.locator("main h1").waitFor();
    // Loaded: nothing says "Loading" any more.
    await page.waitForFunction(() => !document.querySelector(".loading"));
    await galleryShot(page, name);
  }
  // The invocation explorer, below the fold of a function's page: one row's attempts open.
  await page.goto(`${shoal.base}/tenants/contoso/apps/orders/functions/ship`);
  const explorer = page.locator("#explorer-section");
  await explorer.getByRole("button", { name: /^Show \d+ attempts?$/ }).first().click();
  await explorer.locator(".invocation-details").first().waitFor();
  await galleryShot(page, "explorer", () => explorer.evaluate((el) => el.scrollIntoView({ block: "start" })));
  // The poison messages, below the explorer: one selected.
  const poison = page.locator("#poison-section");
  await poison.locator("input.poison-pick").first().check();
  await galleryShot(page, "poison", () => poison.evaluate((el) => el.scrollIntoView({ block: "start" })));
  await page.close();
});

test("an expired or refused token returns to sign-in", async () => {
  const page = await context.newPage();
  await signIn(page, "not-a-token");
  await page.getByText("Sign in to continue").waitFor();
  await page.waitForFunction(() => sessionStorage.getItem("shoal.token") === null);
  await page.getByLabel("Bearer token").waitFor();
  await page.close();
});

test("no request left the page's origin", () => {
  const origin = new URL(shoal.base).origin;
  assert.ok(requests.length > 10, `recorded ${requests.length} requests`);
  const foreign = requests.filter((url) => !url.startsWith("data:") && new URL(url).origin !== origin);
  assert.deepEqual(foreign, []);
});
