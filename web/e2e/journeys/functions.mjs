// Building and editing functions and apps through the UI: the typed binding form and its raw
// JSON, the API's 422 at its field, keys the form does not show kept on Save, and an app with
// its handler, settings, scale limits and a queue function built from empty until it runs.

import { test } from "node:test";
import assert from "node:assert/strict";
import { call, until } from "../stack.mjs";
import { shoal, handler, context, admin, signIn, confirm, shot } from "../fixture.mjs";

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
