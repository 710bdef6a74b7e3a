// The gallery of every view for docs/dashboard/. Last but the origin check: the explorer and
// poison shots need the invocations and poison messages the journeys before left.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { shoal, context, admin, signIn, ARTIFACTS, AXE } from "../fixture.mjs";

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
