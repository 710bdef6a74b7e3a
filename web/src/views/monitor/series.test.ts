import { describe, expect, it } from "vitest";
import { countSeries, durationSeries, totals } from "./series";

const minutes = [
  { minute: "2026-11-24T10:00:00Z", invocations: 3, failures: 1, p50Ms: 5, p95Ms: 5, p99Ms: 8 },
  { minute: "2026-11-24T10:01:00Z", invocations: 0, failures: 0, p50Ms: null, p95Ms: null, p99Ms: null },
  { minute: "2026-11-24T10:02:00Z", invocations: 2, failures: 0, p50Ms: 10 },
];

describe("monitor series", () => {
  it("count every minute's invocations and failures, idle minutes as zero", () => {
    const [invocations, failures] = countSeries(minutes);
    expect(invocations.points.map((p) => p.value)).toEqual([3, 0, 2]);
    expect(failures.points.map((p) => p.value)).toEqual([1, 0, 0]);
  });
  it("leave a gap in the percentiles where a minute had no attempt", () => {
    const [p50, , p99] = durationSeries(minutes);
    expect(p50.points).toEqual([
      { at: Date.parse("2026-11-24T10:00:00Z"), value: 5 },
      { at: Date.parse("2026-11-24T10:01:00Z"), value: null },
      { at: Date.parse("2026-11-24T10:02:00Z"), value: 10 },
    ]);
    expect(p99.points.map((p) => p.value)).toEqual([8, null, null]);
  });
  it("add up the window", () => {
    expect(totals(minutes)).toEqual({ invocations: 5, failures: 1 });
  });
});
