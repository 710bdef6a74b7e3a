import { describe, expect, it } from "vitest";
import { breakerStatus, causeText, transitionText } from "./breaker";

describe("breaker words", () => {
  it.each([
    ["closed", null, "receiving"],
    ["closed", "resumed", "receiving"],
    ["open", "paused", "paused"],
    ["open", "failures", "stopped after failures"],
    ["open", "probeFailed", "stopped after failures"],
    ["halfOpen", "cooldown", "trying one message"],
    ["open", "handlerUnreachable", "waiting for the handler"],
    ["open", "throttled", "held back: the handler is busy"],
    ["closed", "handlerReachable", "receiving"],
  ] as const)("%s after %s reads %s", (state, cause, words) => {
    expect(breakerStatus({ state, cause })).toBe(words);
  });
  it("says a transition's states, the cause telling where it went", () => {
    expect(transitionText({ from: "closed", to: "open", cause: "paused" })).toEqual({ from: "receiving", to: "paused" });
    expect(transitionText({ from: "open", to: "closed", cause: "resumed" })).toEqual({ from: "stopped", to: "receiving" });
  });
  it("names causes plainly", () => {
    expect(causeText("paused")).toBe("paused by hand");
    expect(causeText(undefined)).toBe("—");
  });
});
