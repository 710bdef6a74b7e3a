import { describe, expect, it } from "vitest";
import { DEFAULT_BREAKER, functionWrite, maxConcurrencyValue, type FunctionRead } from "./write";

const trigger = { type: "queueTrigger", direction: "in", name: "m", queueName: "orders" };

/// A function as the GET view returns it: read-only fields and the breaker's defaults filled in.
function read(extra: Partial<FunctionRead> = {}): FunctionRead {
  return {
    name: "ship",
    app: "orders",
    bindings: [trigger],
    triggerType: "queueTrigger",
    disabled: false,
    excluded: false,
    circuitBreaker: { ...DEFAULT_BREAKER, notifyUrl: null },
    etag: "abc",
    createdAt: "2026-01-01T00:00:00Z",
    updatedAt: "2026-01-01T00:00:00Z",
    ...extra,
  } as FunctionRead;
}

const edits = { bindings: [trigger], disabled: false, maxConcurrency: null };

describe("functionWrite", () => {
  it("carries every function.json key the form does not edit", () => {
    const retry = { strategy: "fixedDelay" as const, maxRetryCount: 3, delayInterval: "00:00:05" };
    const breaker = { ...DEFAULT_BREAKER, failureThreshold: 7, notifyUrl: null };
    const current = read({
      retry,
      circuitBreaker: breaker,
      deadLetter: { topic: "dead" } as never,
      excluded: true,
      scriptFile: "run.js",
      entryPoint: "main",
      configurationSource: "config",
      generatedBy: "func",
    });
    expect(functionWrite(current, edits)).toEqual({
      bindings: [trigger],
      disabled: false,
      excluded: true,
      retry,
      circuitBreaker: breaker,
      deadLetter: { topic: "dead" },
      scriptFile: "run.js",
      entryPoint: "main",
      configurationSource: "config",
      generatedBy: "func",
    });
  });

  it("sends only FunctionWrite's keys: none of the view's read-only fields", () => {
    const body = functionWrite(read(), edits);
    for (const key of ["name", "app", "triggerType", "etag", "createdAt", "updatedAt"]) expect(body).not.toHaveProperty(key);
  });

  it("leaves out what the view filled in but nobody wrote: the default breaker, excluded false, nulls", () => {
    expect(functionWrite(read({ retry: null, scriptFile: null }), edits)).toEqual({ bindings: [trigger], disabled: false });
    // Also when the view leaves notifyUrl out rather than null.
    expect(functionWrite(read({ circuitBreaker: { ...DEFAULT_BREAKER } }), edits)).toEqual({ bindings: [trigger], disabled: false });
  });

  it("keeps a breaker that differs from the defaults in any field, notifyUrl included", () => {
    const breaker = { ...DEFAULT_BREAKER, notifyUrl: "https://ops.example/hooks" };
    expect(functionWrite(read({ circuitBreaker: breaker }), edits).circuitBreaker).toEqual(breaker);
  });

  it("takes the form's bindings, disabled and maxConcurrency over what was read", () => {
    const current = read({ disabled: false, maxConcurrency: 4 } as Partial<FunctionRead>);
    const other = [{ ...trigger, queueName: "orders-v2" }];
    expect(functionWrite(current, { bindings: other, disabled: true, maxConcurrency: 6 })).toEqual({
      bindings: other,
      disabled: true,
      maxConcurrency: 6,
    });
    // Emptied: no cap, so the key is left out.
    expect(functionWrite(current, { ...edits, maxConcurrency: null })).not.toHaveProperty("maxConcurrency");
  });

  it("builds a new function from the form alone", () => {
    expect(functionWrite(null, { bindings: [trigger], disabled: true, maxConcurrency: 2 })).toEqual({
      bindings: [trigger],
      disabled: true,
      maxConcurrency: 2,
    });
  });
});

describe("maxConcurrencyValue", () => {
  it("reads empty as no cap, digits as a number, anything else as typed for the API to refuse", () => {
    expect(maxConcurrencyValue("")).toBeNull();
    expect(maxConcurrencyValue("  ")).toBeNull();
    expect(maxConcurrencyValue("12")).toBe(12);
    expect(maxConcurrencyValue(" 7 ")).toBe(7);
    expect(maxConcurrencyValue("1.5")).toBe("1.5");
  });
});
