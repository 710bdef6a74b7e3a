import { describe, expect, it } from "vitest";
import { scale } from "./chart";

describe("scale", () => {
  it("spreads time over the width and values from 0 to the largest", () => {
    const out = scale(
      [
        { name: "a", colour: "#000", points: [{ at: 0, value: 0 }, { at: 10, value: 4 }] },
        { name: "b", colour: "#111", points: [{ at: 5, value: 2 }] },
      ],
      100,
      40,
    );
    expect(out.max).toBe(4);
    expect([out.from, out.to]).toEqual([0, 10]);
    expect(out.paths[0]).toBe("M0.0,40.0 L100.0,0.0");
    expect(out.paths[1]).toBe("M50.0,20.0");
  });
  it("keeps a flat zero series on the axis (max at least 1)", () => {
    const out = scale([{ name: "a", colour: "#000", points: [{ at: 1, value: 0 }, { at: 2, value: 0 }] }], 10, 10);
    expect(out.max).toBe(1);
    expect(out.paths[0]).toBe("M0.0,10.0 L10.0,10.0");
  });
});
