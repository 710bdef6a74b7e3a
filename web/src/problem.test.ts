import { describe as suite, expect, it } from "vitest";
import { createRefused, describe, fieldLines, nearestField, placeErrors } from "./problem";

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
  const problem = (status: number, title: string, detail: string, requestId?: string) => ({ type: "about:blank", title, status, detail, requestId });
  it.each([
    [403, "Forbidden", "no Shoal/apps/write", "Not allowed: no Shoal/apps/write"],
    [404, "Not Found", "no app orders", "Not found: no app orders"],
    [409, "Conflict", "the trigger's queue cannot be used: no connection settings found", "Not possible as things stand: the trigger's queue cannot be used: no connection settings found"],
    [422, "Unprocessable Entity", "handler.url: must be https", "Not valid: handler.url: must be https"],
  ])("says a %d plainly", (status, title, detail, words) => {
    expect(describe(problem(status, title, detail))).toBe(words);
  });
  it("never shows a 412 as an ETag mismatch", () => {
    const words = describe(problem(412, "Precondition Failed", "the resource's ETag does not match"));
    expect(words).not.toMatch(/ETag|Precondition/);
    expect(words).toMatch(/changed since this page loaded/);
  });
  it("gives a 500's request id to quote", () => {
    expect(describe(problem(500, "Internal Server Error", "internal error", "r-1"))).toBe(
      "The API failed: internal error. Quote request id r-1 when reporting it.",
    );
  });
});

suite("createRefused", () => {
  it("reads a create's 412 as the name being taken, and nothing else", () => {
    expect(createRefused(412, "An app", "orders")).toBe("An app named orders exists already: choose another name.");
    expect(createRefused(422, "An app", "orders")).toBeNull();
  });
});

suite("fieldLines", () => {
  it("leads each field error with its path, and leaves the whole request's bare", () => {
    const problem = {
      type: "about:blank",
      title: "Unprocessable Entity",
      status: 422,
      detail: "the request is not valid",
      errors: [
        { path: "messageIds[1]", message: "must be a non-empty string" },
        { path: "", message: "expected an object {count?, messageIds?}" },
      ],
    };
    expect(fieldLines(problem)).toEqual(["messageIds[1]: must be a non-empty string", "expected an object {count?, messageIds?}"]);
  });
  it("has none for a problem without errors or for what is not a problem", () => {
    expect(fieldLines({ type: "about:blank", title: "Bad Gateway", status: 502, detail: "x" })).toEqual([]);
    expect(fieldLines("boom")).toEqual([]);
  });
});
