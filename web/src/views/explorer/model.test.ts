import { describe, expect, it } from "vitest";
import {
  attemptsLabel,
  filterProblems,
  isoOf,
  mergeTail,
  NO_FILTERS,
  PAGE_SIZE,
  policyText,
  queryOf,
  type Invocation,
} from "./model";

function inv(key: string, startedAt: string, extra: Partial<Invocation> = {}): Invocation {
  return {
    deliveryKey: key,
    startedAt,
    lastAttemptAt: startedAt,
    status: "succeeded",
    attemptCount: 1,
    payloadTruncated: false,
    attempts: [],
    ...extra,
  };
}

describe("explorer query", () => {
  it("leaves out empty filters and sends times as UTC", () => {
    expect(queryOf(NO_FILTERS)).toEqual({ limit: PAGE_SIZE });
    const query = queryOf(
      { status: "failed", messageId: " m-1 ", invocationId: "", from: "2026-11-24T10:00", to: "" },
      "tok",
    );
    expect(query).toEqual({
      limit: PAGE_SIZE,
      status: "failed",
      messageId: "m-1",
      from: isoOf("2026-11-24T10:00"),
      continuationToken: "tok",
    });
  });
  it("names the field of a bad filter", () => {
    expect(filterProblems(NO_FILTERS)).toEqual([]);
    expect(filterProblems({ ...NO_FILTERS, invocationId: "42" }).map((p) => p.field)).toEqual(["invocationId"]);
    expect(
      filterProblems({ ...NO_FILTERS, from: "2026-11-24T10:00", to: "2026-11-24T09:00" }).map((p) => p.field),
    ).toEqual(["to"]);
    expect(filterProblems({ ...NO_FILTERS, from: "soon" }).map((p) => p.field)).toEqual(["from"]);
    expect(filterProblems({ ...NO_FILTERS, invocationId: "0193a5c0-7f1e-7c2a-9a41-2f5d8e1c0b7a" })).toEqual([]);
  });
});

describe("live tail", () => {
  const a = inv("a", "2026-11-24T10:00:00Z");
  const b = inv("b", "2026-11-24T10:00:05Z");
  const c = inv("c", "2026-11-24T10:00:10Z");
  it("puts new invocations on top and counts them", () => {
    const { items, added } = mergeTail([b, a], [c, b]);
    expect(items.map((i) => i.deliveryKey)).toEqual(["c", "b", "a"]);
    expect(added).toBe(1);
  });
  it("replaces an invocation seen again with its new attempts", () => {
    const retried: Invocation = { ...b, status: "failed", attemptCount: 2 };
    const { items, added } = mergeTail([b, a], [retried, a]);
    expect(items[0]).toBe(retried);
    expect(items).toHaveLength(2);
    expect(added).toBe(0);
  });
  it("keeps older pages already loaded below the first page", () => {
    const older = inv("z", "2026-11-24T09:00:00Z");
    const { items } = mergeTail([b, a, older], [c, b]);
    expect(items.map((i) => i.deliveryKey)).toEqual(["c", "b", "a", "z"]);
  });
});

describe("words", () => {
  it("say when attempts were pruned", () => {
    const attempt = {
      invocationId: "x",
      at: "2026-11-24T10:00:00Z",
      retryCount: 0,
      worker: "w",
      durationMs: 1,
      status: "failed" as const,
      logs: [],
    };
    expect(attemptsLabel(inv("a", "2026-11-24T10:00:00Z", { attempts: [attempt] }))).toBe("1 attempt");
    const many = inv("a", "2026-11-24T10:00:00Z", {
      attemptCount: 25,
      attempts: Array.from({ length: 20 }, () => attempt),
    });
    expect(attemptsLabel(many)).toBe("25 attempts (latest 20 kept)");
  });
  it("state the retention policy", () => {
    expect(policyText({ keptInvocations: 1000, keptAttempts: 20, maxPayloadBytes: 4096, maxLogBytes: 8192 })).toContain(
      "newest 1000",
    );
  });
});
