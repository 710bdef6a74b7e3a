// A Service Bus function from empty, only through the UI, against the local stand-in
// (`shoal local-bus`, started by the stack with the queue `payments`, MaxDeliveryCount 3): an
// app, a setting holding the connection string and a serviceBusTrigger function are built; test
// messages are sent from the function's page and followed live in the explorer; a message the
// handler declines is delivered MaxDeliveryCount times, found by its id with its deliveries
// grouped, dead-lettered by the broker, and replayed from the dead-letter view after a preview
// once the handler works again.

import { test } from "node:test";
import assert from "node:assert/strict";
import { BUS_QUEUE, MAX_DELIVERY_COUNT } from "../local-bus.mjs";
import { call, until } from "../stack.mjs";
import {
  shoal,
  handler,
  context,
  admin,
  signIn,
  confirm,
  shot,
  shotAtBothSizes,
} from "../fixture.mjs";

const APP = "/v1/tenants/contoso/apps/payments";
const FUNCTION = `${APP}/functions/charge`;

/// Sends `message` as JSON from the function page's form; the message id the page says.
async function send(page, message) {
  await page.getByLabel("Message body").fill(JSON.stringify(message));
  const [answer] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith("/functions/charge/send")),
    page.getByRole("button", { name: "Send test message" }).click(),
  ]);
  assert.ok(answer.ok(), `${answer.status()}: ${await answer.text()}`);
  const { messageId } = await answer.json();
  assert.ok(messageId, "the API names the message it sent");
  // Said in words, naming the message (two sends of the same size differ only by it).
  const said = `Sent to ${BUS_QUEUE} (message id ${messageId}, `;
  await page.locator("#fn-send-said", { hasText: said }).waitFor();
  return messageId;
}

const JOURNEY =
  "a Service Bus function is built through the UI, followed live in the explorer, " +
  "and its dead letters replayed after a preview";

test(JOURNEY, async () => {
  const page = await context.newPage();
  await signIn(page, admin);
  await page.goto(`${shoal.base}/tenants/contoso/apps`);
  await page.getByText("New app", { exact: true }).first().click();
  await page.getByLabel("Name").fill("payments");
  await page.getByLabel("Handler URL").fill(handler.url);
  await page.getByRole("button", { name: "Create app" }).click();
  await page.waitForURL(/\/tenants\/contoso\/apps\/payments$/);

  // The connection string is a setting of the app.
  await page.getByLabel("Setting name").fill("PaymentsBus");
  await page.getByLabel("Setting value").fill(shoal.serviceBus.connectionString);
  await page.getByRole("button", { name: "Save setting" }).click();
  await page.locator("#settings-said", { hasText: /^Saved: added PaymentsBus\./ }).waitFor();

  // The function from the Service Bus template, reading the stand-in's queue with it.
  await page.getByRole("link", { name: "Functions" }).click();
  await page.waitForURL(/\/functions$/);
  await page.getByLabel("Template").selectOption("serviceBus");
  await page.getByLabel("Name", { exact: true }).fill("charge");
  const binding = (key) => page.locator(`[data-path="bindings[0].${key}"]`);
  assert.equal(await binding("type").inputValue(), "serviceBusTrigger");
  await binding("queueName").fill(BUS_QUEUE);
  await binding("connection").fill("PaymentsBus");
  await page.getByRole("button", { name: "Create function" }).click();
  await page.waitForURL(/\/functions\/charge$/);
  const fn = await call(shoal.base, admin, "GET", FUNCTION);
  assert.deepEqual(
    [fn.triggerType, fn.bindings[0].queueName, fn.bindings[0].connection],
    ["serviceBusTrigger", BUS_QUEUE, "PaymentsBus"],
  );
  // The workers pick the new function up within seconds (until then its checks say nothing
  // runs it); read again, the page says it is healthy.
  await until("the app's diagnostics say payments is healthy", 30_000, async () =>
    (await call(shoal.base, admin, "GET", `${APP}/diagnostics`)).healthy,
  );
  await page.reload();
  const healthy = "Healthy: every check of charge passes.";
  await page.locator("#fn-health-state", { hasText: healthy }).waitFor();
  const depth = (n) => `${n} message(s) (approximate), for ${BUS_QUEUE}.`;
  await page.locator("#poison-depth", { hasText: depth(0) }).waitFor();
  await shot(page, "16-service-bus-function");

  // A test message from the page, followed live in the explorer: it shows up without a reload
  // (the mark set on the window survives), with the handler's logs.
  const explorer = page.locator("#explorer-section");
  await explorer.getByText("No invocations match.").waitFor();
  await page.evaluate(() => { window.notReloaded = true; });
  await explorer.getByLabel("Follow new invocations").check();
  await explorer.getByText(/^Checking every 3 s\./).waitFor();
  const shipped = await send(page, { order: 2001, outcome: "ok" });
  const live = explorer.locator("#explorer-live");
  await live.filter({ hasText: /^1 new invocation\.$/ }).waitFor({ timeout: 30_000 });
  const row = explorer.locator("tbody tr", { hasText: shipped });
  await row.locator(".status-succeeded").waitFor();
  await row.getByRole("button", { name: "Show 1 attempt" }).click();
  const attempt = explorer.locator(".invocation-details tbody tr");
  await attempt.locator("pre.logs", { hasText: "shipped order 2001" }).waitFor();
  assert.equal(await attempt.locator("td").nth(3).innerText(), "1", "DeliveryCount 1");
  assert.equal(await page.evaluate(() => window.notReloaded), true, "the page was reloaded");
  await explorer.getByLabel("Follow new invocations").uncheck();

  // Two messages the handler declines: each is delivered MaxDeliveryCount times (abandoned
  // after each failure, the broker counting the delivery), then dead-lettered.
  const declined = await send(page, { order: 2002, outcome: "decline" });
  const other = await send(page, { order: 2003, outcome: "decline" });
  const deliveries = (order) =>
    handler
      .answered()
      .filter((a) => a.function === "charge" && a.order === order)
      .map((a) => a.deliveryCount);
  const every = Array.from({ length: MAX_DELIVERY_COUNT }, (_, i) => i + 1);
  await until("both declined orders were delivered MaxDeliveryCount times", 60_000, () =>
    [2002, 2003].every((order) => deliveries(order).length >= MAX_DELIVERY_COUNT),
  );
  assert.deepEqual(deliveries(2002), every);
  assert.deepEqual(deliveries(2003), every);

  // Found in the explorer by its message id, its deliveries grouped under it (once the
  // workers' telemetry has written the last of them).
  await until("the invocation log has every delivery of the declined order", 20_000, async () => {
    const query = `messageId=${encodeURIComponent(declined)}`;
    const log = await call(shoal.base, admin, "GET", `${FUNCTION}/invocationLog?${query}`);
    return log.items[0]?.attemptCount === MAX_DELIVERY_COUNT;
  });
  await explorer.getByLabel("Message id").fill(declined);
  await explorer.getByRole("button", { name: "Search", exact: true }).click();
  await live.filter({ hasText: "1 invocation shown." }).waitFor();
  await explorer.getByRole("button", { name: `Show ${MAX_DELIVERY_COUNT} attempts` }).click();
  const attempts = explorer.locator(".invocation-details tbody tr");
  assert.equal(await attempts.count(), MAX_DELIVERY_COUNT);
  const counts = await attempts.evaluateAll((rows) =>
    rows.map((r) => r.querySelectorAll("td")[3].textContent),
  );
  assert.deepEqual(counts, every.map(String));
  assert.match(await attempts.first().innerText(), /the handler answered 500/);
  assert.match(await attempts.first().innerText(), /card declined/);
  await explorer.getByRole("heading", { name: "Payload (JSON)" }).waitFor();
  assert.match(await explorer.locator(".invocation-details pre.json").innerText(), /"order": 2002/);
  await shotAtBothSizes(page, "16-service-bus-explorer");

  // The dead-letter queue: both messages, decoded, with the broker's reason.
  await until("the broker dead-lettered both declined orders", 30_000, async () =>
    (await call(shoal.base, admin, "GET", `${FUNCTION}/poison`)).approximateCount === 2,
  );
  const poison = page.locator("#poison-section");
  await poison.getByRole("button", { name: "Refresh", exact: true }).click();
  const deadLetters = `${BUS_QUEUE}/$DeadLetterQueue`;
  await poison.locator("#poison-depth", { hasText: depth(2) }).waitFor();
  await poison.getByText("All 2 listed, oldest first.").waitFor();
  assert.equal(await poison.getByRole("heading", { name: deadLetters }).count(), 1);
  const letter = poison.locator("tbody tr", { hasText: declined });
  assert.match(await letter.innerText(), /"order": 2002/);
  assert.match(await letter.innerText(), /MaxDeliveryCountExceeded/);
  assert.equal(await poison.locator("#poison-bodies-hidden").count(), 0);
  await poison.getByLabel(`Select message ${declined}`).check();
  const replaySelected = poison.locator("#poison-replay-selected");
  assert.equal(await replaySelected.innerText(), "Replay selected (1)");
  await shotAtBothSizes(page, "16-service-bus-poison");

  // The handler works again for that order; the preview says what moves where.
  handler.recover(2002);
  await replaySelected.click();
  const dialog = page.getByRole("dialog");
  await dialog.getByRole("heading", { name: "Replay 1 selected message?" }).waitFor();
  const where = `from ${deadLetters} back to ${BUS_QUEUE}, `.replace(/\$/g, "\\$");
  assert.match(await dialog.innerText(), new RegExp(`${where}.*: ${declined}\\.`));
  await confirm(page, "Replay");
  const replayed = `Replayed 1 message to ${BUS_QUEUE}.`;
  await poison.locator("#poison-said", { hasText: replayed }).waitFor();
  // Read again: only the other message is left, nothing selected.
  await poison.locator("#poison-replay-selected", { hasText: "Replay selected (0)" }).waitFor();
  await poison.locator("#poison-depth", { hasText: depth(1) }).waitFor();
  assert.deepEqual(await poison.locator("tbody code.id").allInnerTexts(), [other]);
  // Delivered again afresh (DeliveryCount 1), and shipped.
  await until("the replayed order was delivered again and shipped", 30_000, () =>
    handler.answered().some((a) => {
      const ok = a.function === "charge" && a.order === 2002 && a.status === 200;
      return ok && a.deliveryCount === 1;
    }),
  );
  await page.close();
});
