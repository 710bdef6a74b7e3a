// Scaling: a backlog in Azurite scales orders out on the workers and back in, as the scale
// view charts and logs it.

import { test } from "node:test";
import assert from "node:assert/strict";
import { WORKERS, call, until } from "../stack.mjs";
import { shoal, handler, context, admin, signIn, shot, TIMEOUT } from "../fixture.mjs";

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
