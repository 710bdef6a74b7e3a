import { describe, expect, it } from "vitest";
import { historySeries, placementNote } from "./history";

const history = {
  intervalSeconds: 10,
  samples: [
    { at: "2026-11-21T10:00:00Z", metric: null, desiredInstances: 1, placedInstances: 1 },
    { at: "2026-11-21T10:00:10Z", metric: 1000, desiredInstances: 5, placedInstances: 2 },
  ],
};

describe("historySeries", () => {
  it("plots the metric where it was read, a gap where not, and every sample's instances", () => {
    const [queue, desired, placed] = historySeries(history);
    const t0 = Date.parse("2026-11-21T10:00:00Z");
    const t1 = Date.parse("2026-11-21T10:00:10Z");
    expect(queue.points).toEqual([{ at: t0, value: null }, { at: t1, value: 1000 }]);
    expect(desired.points.map((p) => p.value)).toEqual([1, 5]);
    expect(placed.points.map((p) => p.value)).toEqual([1, 2]);
  });
  it("ends the instances with the status beside the chart, so both show the same figures", () => {
    const at = Date.parse("2026-11-21T10:00:14Z");
    const [queue, desired, placed] = historySeries(history, { at, desired: 12, placed: 3 });
    expect(desired.points.at(-1)).toEqual({ at, value: 12 });
    expect(placed.points.at(-1)).toEqual({ at, value: 3 });
    expect(queue.points).toHaveLength(2);
  });
});

describe("placementNote", () => {
  const status = (desired: number, placed: number, waiting?: string) => ({
    currentInstances: placed,
    desiredInstances: desired,
    waiting,
    mode: "target" as const,
    placement: [],
    decisions: [],
  });
  it("says how many wait and why, with the bounds", () => {
    const note = placementNote(status(12, 3, "waiting for capacity: no free worker"), { appLimit: 100, tenantMax: 20 });
    expect(note).toMatch(/^Desired 12, placed 3: 9 wait for a worker\. The scheduler says: waiting for capacity: no free worker\./);
    expect(note).toMatch(/one instance per live worker/);
    expect(note).toMatch(/scale limit \(100\)/);
    expect(note).toMatch(/quota \(20\)/);
  });
  it("says when all are placed, leaving out bounds it does not know", () => {
    const note = placementNote(status(2, 2), {});
    expect(note).toMatch(/^Desired 2, placed 2: every desired instance is placed\./);
    expect(note).not.toMatch(/limit|quota/);
  });
});
