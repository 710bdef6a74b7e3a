// Watching a function run: the monitor's totals, charts and failures, the invocation explorer
// (search, attempts grouped, trace links, live tail) and pausing by hand. The monitor journey
// poisons orders 42 and 43, which the explorer and poison journeys look for.

import { test } from "node:test";
import assert from "node:assert/strict";
import { TRACE_VIEWER_URL, WORKERS, call, until } from "../stack.mjs";
import { shoal, handler, context, admin, signIn, confirm, shot, shotAtBothSizes, ARTIFACTS } from "../fixture.mjs";

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
