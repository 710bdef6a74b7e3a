import { describe as suite, expect, it } from "vitest";
import { describe, nearestField, placeErrors } from "./problem";

suite("nearestField", () => {
  const fields = ["bindings[0].queueName", "bindings[0].type", "bindings[1]", "disabled"];
  it.each([
    ["bindings[0].queueName", "bindings[0].queueName"],
    ["bindings[0].type", "bindings[0].type"],
    ["bindings[1].name", "bindings[1]"],
    ["bindings[1]", "bindings[1]"],
    ["bindings[2].name", null],
    ["retry.maxRetryCount", null],
    ["disabled", "disabled"],
    ["", null],
  ])("%s → %s", (path, expected) => {
    expect(nearestField(path, fields)).toBe(expected);
  });
});

suite("placeErrors", () => {
  it("puts each error at its field and keeps the rest", () => {
    const { byField, unplaced } = placeErrors(
      [
        { path: "bindings[0].queueName", message: "must be 3-63 characters" },
        { path: "bindings[1].name", message: "is required" },
        { path: "bindings", message: "needs exactly one trigger" },
      ],
      ["bindings[0].queueName", "bindings[1]"],
    );
    expect(byField.get("bindings[0].queueName")).toEqual(["must be 3-63 characters"]);
    expect(byField.get("bindings[1]")).toEqual(["bindings[1].name: is required"]);
    expect(unplaced).toEqual([{ path: "bindings", message: "needs exactly one trigger" }]);
  });
});

suite("describe", () => {
  it("says a 403 plainly", () => {
    expect(
      describe({ type: "about:blank", title: "Forbidden", status: 403, detail: "no Shoal/apps/write" }),
    ).toBe("Not allowed: no Shoal/apps/write");
  });
});
