import { describe, expect, it } from "vitest";
import { countSeries, durationSeries } from "./series";

const minutes = [
  { minute: "2026-11-24T10:00:00Z", invocations: 3, failures: 1, p50Ms: 5, p95Ms: 5, p99Ms: 5 },
  { minute: "2026-11-24T10:01:00Z", invocations: 0, failures: 0, p50Ms: null, p95Ms: null, p99Ms: null },
];

describe("monitor series", () => {
  it("count every minute's invocations and failures", () => {
    const [invocations, failures] = countSeries(minutes);
    expect(invocations.points.map((p) => p.value)).toEqual([3, 0]);
    expect(failures.points.map((p) => p.value)).toEqual([1, 0]);
  });
  it("plot percentiles only for minutes that have them", () => {
    const [p50] = durationSeries(minutes);
    expect(p50.points).toEqual([{ at: Date.parse("2026-11-24T10:00:00Z"), value: 5 }]);
  });
});
