// The apps list, an app's page and signing in: the tenant switcher, focus and titles on
// route changes, masked settings, the scale toggle, a phone's width, a refused token.

import { test } from "node:test";
import assert from "node:assert/strict";
import { call } from "../stack.mjs";
import { shoal, handler, context, admin, signIn, focusedOnHeading, shot } from "../fixture.mjs";

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

test("an expired or refused token returns to sign-in", async () => {
  const page = await context.newPage();
  await signIn(page, "not-a-token");
  await page.getByText("Sign in to continue").waitFor();
  await page.waitForFunction(() => sessionStorage.getItem("shoal.token") === null);
  await page.getByLabel("Bearer token").waitFor();
  await page.close();
});
