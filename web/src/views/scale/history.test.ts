import { describe, expect, it } from "vitest";
import { historySeries } from "./history";

describe("historySeries", () => {
  it("plots the metric only where it was read, and every sample's instances", () => {
    const [queue, desired, placed] = historySeries({
      intervalSeconds: 10,
      samples: [
        { at: "2026-11-21T10:00:00Z", metric: null, desiredInstances: 1, placedInstances: 1 },
        { at: "2026-11-21T10:00:10Z", metric: 1000, desiredInstances: 5, placedInstances: 2 },
      ],
    });
    const t1 = Date.parse("2026-11-21T10:00:10Z");
    expect(queue.points).toEqual([{ at: t1, value: 1000 }]);
    expect(desired.points.map((p) => p.value)).toEqual([1, 5]);
    expect(placed.points.map((p) => p.value)).toEqual([1, 2]);
  });
});
