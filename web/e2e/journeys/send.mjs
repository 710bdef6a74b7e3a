// Test messages from a function's page: to a queue, and as an HTTP request to a webhook.

import { test } from "node:test";
import assert from "node:assert/strict";
import { call, until } from "../stack.mjs";
import { shoal, handler, context, admin, signIn, shot } from "../fixture.mjs";

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
