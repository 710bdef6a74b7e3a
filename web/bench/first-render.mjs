// The dashboard's first render, for `shoal-bench --only dashboard`: loads the apps view of two
// tenants in headless Debian Chromium (driven by playwright-core, as the journeys are), each
// load in a fresh browser context (empty cache, like a first visit), alternating between them,
// and prints one JSON line: the milliseconds from navigation start to the list being in the
// DOM, per load and tenant.
//
// "In the DOM": a MutationObserver installed before the page's own scripts records
// performance.now() (whose origin is the navigation start) when the list's table has all its
// rows (or, for a tenant without apps, when the "No apps" paragraph appears).
//
//   node first-render.mjs --base http://127.0.0.1:PORT --token T --loads 7 \
//       --tenant bench-apps:1000 --tenant bench-empty:0 [--chromium /usr/bin/chromium]

import { parseArgs } from "node:util";
import { chromium } from "playwright-core";

const { values } = parseArgs({
  options: {
    base: { type: "string" },
    token: { type: "string" },
    loads: { type: "string", default: "7" },
    tenant: { type: "string", multiple: true },
    chromium: { type: "string", default: "/usr/bin/chromium" },
    timeout: { type: "string", default: "30000" },
  },
});
if (!values.base || !values.token || !values.tenant?.length) {
  console.error("usage: first-render.mjs --base URL --token T --tenant NAME:ROWS... [--loads N]");
  process.exit(2);
}
const loads = Number(values.loads);
const timeout = Number(values.timeout);
const tenants = values.tenant.map((spec) => {
  const [name, rows] = spec.split(":");
  return { name, rows: Number(rows) };
});

// The machine notes' flags; playwright's launch gives Chromium a fresh profile directory of
// its own (it refuses --user-data-dir) and removes it on close.
const browser = await chromium.launch({
  executablePath: values.chromium,
  headless: true,
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});

/// Runs in the page before its scripts: the time the list is complete.
function watchForList({ token, rows }) {
  sessionStorage.setItem("shoal.token", token);
  const done = () =>
    rows === 0
      ? document.querySelector("main .empty") !== null
      : document.querySelectorAll("#apps tbody tr").length >= rows;
  new MutationObserver((_, observer) => {
    if (window.__listAt === undefined && done()) {
      window.__listAt = performance.now();
      observer.disconnect();
    }
  }).observe(document, { childList: true, subtree: true });
}

async function load(tenant) {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const foreign = [];
  context.on("request", (request) => {
    if (!request.url().startsWith(values.base)) foreign.push(request.url());
  });
  try {
    await context.addInitScript(watchForList, { token: values.token, rows: tenant.rows });
    const page = await context.newPage();
    await page.goto(`${values.base}/tenants/${tenant.name}/apps`);
    await page.waitForFunction(() => window.__listAt !== undefined, null, { timeout });
    if (foreign.length) throw new Error(`requests left the origin: ${foreign.join(", ")}`);
    return await page.evaluate(() => window.__listAt);
  } finally {
    await context.close();
  }
}

try {
  const samples = Object.fromEntries(tenants.map((t) => [t.name, []]));
  for (let i = 0; i < loads; i++) {
    // Alternating which goes first, so drift on the machine affects both alike.
    const order = i % 2 === 0 ? tenants : [...tenants].reverse();
    for (const tenant of order) samples[tenant.name].push(await load(tenant));
  }
  console.log(JSON.stringify(samples));
} finally {
  await browser.close();
}
