// The dashboard in real headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core; no browser is downloaded) against a real Shoal stack (stack.mjs): Postgres,
// Azurite, the local Service Bus stand-in, `shoal serve`, one `shoal scheduler` and two
// `shoal worker`s, with the apps' handler in this process (handler.mjs). Nothing is seeded in
// the database: the scale journey enqueues a backlog into Azurite and watches the scheduler
// scale the app out and back in, the monitor journey reads what the workers recorded of the
// handler's answers, failures included; the Service Bus journey sends from the dashboard.
//
// This file is the one entry: it starts ONE stack and browser for the run (fixture.mjs), then
// loads the journeys (journeys/*.mjs), each of which registers its tests as it is loaded, in the
// order below. The order matters where a journey reads what an earlier one left: the Reader
// journey creates the `deployer` principal the access views journey looks for (both in
// access.mjs); the monitor journey poisons orders 42 and 43, which the explorer, poison and
// gallery journeys find; the gallery needs those invocations and poison messages. Every request
// the page makes is recorded: none may leave the page's origin, checked last.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { requests, setUp, shoal, tearDown } from "./fixture.mjs";

before(setUp);
after(tearDown);

// Loaded one after another (not as static imports) so their tests register after the hooks
// above and in this order.
const JOURNEYS = [
  "apps",
  "functions",
  "access",
  "scale",
  "monitor",
  "poison",
  "send",
  "service-bus",
  "gallery",
];
for (const journey of JOURNEYS) await import(`./journeys/${journey}.mjs`);

test("no request left the page's origin", () => {
  const origin = new URL(shoal.base).origin;
  assert.ok(requests.length > 10, `recorded ${requests.length} requests`);
  const foreign = requests.filter((url) => !url.startsWith("data:") && new URL(url).origin !== origin);
  assert.deepEqual(foreign, []);
});
