import { describe, expect, it } from "vitest";
import { moments, niceMax, scale } from "./chart";

describe("scale", () => {
  it("spreads time over the width and values from 0 to a round top", () => {
    const out = scale(
      [
        { name: "a", colour: "#000", points: [{ at: 0, value: 0 }, { at: 10, value: 4 }] },
        { name: "b", colour: "#111", points: [{ at: 5, value: 2 }] },
      ],
      100,
      40,
    );
    expect(out.max).toBe(5);
    expect(out.highest).toBe(4);
    expect([out.from, out.to]).toEqual([0, 10]);
    expect(out.paths[0]).toBe("M0.0,40.0 L100.0,8.0");
    // A lone point is a dot, not an invisible move.
    expect(out.paths[1]).toBe("");
    expect(out.dots[1]).toBe("M50.0,24.0 l0,0");
  });
  it("keeps a flat zero series on the axis (max at least 1)", () => {
    const out = scale([{ name: "a", colour: "#000", points: [{ at: 1, value: 0 }, { at: 2, value: 0 }] }], 10, 10);
    expect(out.max).toBe(1);
    expect(out.paths[0]).toBe("M0.0,10.0 L10.0,10.0");
  });
  it("breaks the line where a value is missing instead of joining across the gap", () => {
    const points = [
      { at: 0, value: 39 },
      { at: 1, value: null },
      { at: 2, value: null },
      { at: 3, value: 50 },
      { at: 4, value: 50 },
    ];
    const out = scale([{ name: "p95", colour: "#000", points }], 30, 100);
    expect(out.paths[0]).toBe("M22.5,0.0 L30.0,0.0");
    expect(out.dots[0]).toBe("M0.0,22.0 l0,0");
  });
  it("puts a single moment in the middle", () => {
    const out = scale([{ name: "a", colour: "#000", points: [{ at: 7, value: 3 }] }], 100, 10);
    expect(out.dots[0]).toBe("M50.0,4.0 l0,0");
  });
});

describe("niceMax", () => {
  it.each([
    [0, 1],
    [0.4, 1],
    [1, 1],
    [3, 5],
    [5, 5],
    [39, 50],
    [400, 500],
    [501, 1000],
    [6000, 10000],
  ])("%d → %d", (value, top) => expect(niceMax(value)).toBe(top));
});

describe("moments", () => {
  it("names every series' value at each moment, or that it had none", () => {
    const at = Date.parse("2026-11-24T10:31:00Z");
    const [m] = moments(
      [
        { name: "p50", colour: "#000", points: [{ at, value: 25 }] },
        { name: "p95", colour: "#000", points: [{ at, value: null }] },
      ],
      "ms",
    );
    expect(m.at).toBe(at);
    expect(m.text).toMatch(/ · p50 25, p95 no data \(ms\)$/);
  });
});
