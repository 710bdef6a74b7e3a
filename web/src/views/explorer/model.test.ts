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
  traceIdOf,
  traceViewerLink,
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
      { status: "failed", messageId: " m-1 ", invocationId: "", traceId: "", from: "2026-11-24T10:00", to: "" },
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

describe("trace ids", () => {
  const id = "4bf92f3577b34da6a3ce929d0e0e4736";
  it("reads a trace id as a viewer shows it, or from a whole traceparent", () => {
    for (const [text, want] of [
      [id, id],
      [` ${id.toUpperCase()} `, id],
      [`00-${id}-00f067aa0ba902b7-01`, id],
      ["", null],
      ["0".repeat(32), null],
      [id.slice(1), null],
      [`${id}0`, null],
      [`${id.slice(1)}g`, null],
      ["0193a5c0-7f1e-7c2a-9a41-2f5d8e1c0b7a", null],
      [`00-${"0".repeat(32)}-00f067aa0ba902b7-01`, null],
    ] as const) {
      expect(traceIdOf(text), text).toBe(want);
    }
  });
  it("is a search filter, sent as the API spells it, and a bad one names its field", () => {
    expect(queryOf({ ...NO_FILTERS, traceId: ` 00-${id}-00f067aa0ba902b7-01 ` })).toEqual({ limit: PAGE_SIZE, traceId: id });
    expect(filterProblems({ ...NO_FILTERS, traceId: id.toUpperCase() })).toEqual([]);
    expect(filterProblems({ ...NO_FILTERS, traceId: "abc" }).map((p) => p.field)).toEqual(["traceId"]);
  });
  it("links to the viewer's template with the id in place of {traceId}", () => {
    expect(traceViewerLink("http://jaeger.example:16686/trace/{traceId}", id)).toBe(
      `http://jaeger.example:16686/trace/${id}`,
    );
    const tempo = 'https://grafana.example.com/explore?left={"queries":[{"query":"{traceId}"}]}&again={traceId}';
    expect(traceViewerLink(tempo, id)).toBe(
      `https://grafana.example.com/explore?left={"queries":[{"query":"${id}"}]}&again=${id}`,
    );
    // Whatever is put in its place is encoded.
    expect(traceViewerLink("https://v.example/t/{traceId}", "a b/c")).toBe("https://v.example/t/a%20b%2Fc");
  });
  it("is no link without a template or with one that is not http(s)", () => {
    expect(traceViewerLink(null, id)).toBeNull();
    expect(traceViewerLink(undefined, id)).toBeNull();
    expect(traceViewerLink("", id)).toBeNull();
    expect(traceViewerLink("https://jaeger.example/trace/", id)).toBeNull();
    expect(traceViewerLink("javascript:alert('{traceId}')", id)).toBeNull();
    expect(traceViewerLink("/trace/{traceId}", id)).toBeNull();
  });
});
