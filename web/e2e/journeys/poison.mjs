// Poison messages: a poison queue the API cannot read says why; the messages the monitor
// journey poisoned are listed decoded, one is replayed after a preview, a Reader sees bodies
// hidden.

import { test } from "node:test";
import assert from "node:assert/strict";
import { call, until } from "../stack.mjs";
import { shoal, handler, context, admin, signIn, confirm, shot, shotAtBothSizes, ARTIFACTS } from "../fixture.mjs";

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
