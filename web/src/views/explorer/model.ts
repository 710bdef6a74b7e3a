// The invocation explorer's pure part: the query a set of filters asks for, how a polled
// first page merges into what is on screen (the live tail) and where a trace id links to. How
// a payload reads is shared with the poison messages (`../payload`). No DOM here, so Vitest covers it all.

import type { Schemas } from "../../api/client";

export type Invocation = Schemas["LoggedInvocation"];
export type Attempt = Schemas["LoggedAttempt"];

/// How often the live tail asks for the first page. Polling, not server-sent events: workers
/// write the invocation log in batches about once a second, so a push could be no fresher than
/// this, and a plain GET carries the same RBAC, throttling and compression as every other read
/// (no long-lived connection per open tab held by the API).
export const TAIL_MS = 3_000;
/// Invocations per page.
export const PAGE_SIZE = 50;

export type StatusFilter = "" | "succeeded" | "failed";

/// What the filter form holds: text as typed; times as `<input type="datetime-local">` values
/// (the reader's local time).
export interface Filters {
  status: StatusFilter;
  messageId: string;
  invocationId: string;
  traceId: string;
  from: string;
  to: string;
}

export const NO_FILTERS: Filters = { status: "", messageId: "", invocationId: "", traceId: "", from: "", to: "" };

export interface FieldProblem {
  field: keyof Filters;
  message: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TRACE_ID = /^[0-9a-f]{32}$/;
const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}/;
/// What the operator's viewer template holds where the trace id goes (`--trace-viewer-url`).
export const TRACE_ID_PLACEHOLDER = "{traceId}";

/// The trace id the API searches by (32 lowercase hex digits, not all zero) from what was
/// pasted: a viewer's id in any case, or a whole `traceparent`. Null when it is neither.
export function traceIdOf(text: string): string | null {
  const t = text.trim().toLowerCase();
  const id = TRACE_ID.test(t) ? t : (TRACEPARENT.exec(t)?.[1] ?? null);
  return id && /[1-9a-f]/.test(id) ? id : null;
}

/// The trace viewer's page for `traceId`: the template with each `{traceId}` replaced
/// (encoded, though a trace id never needs it). Null without a template, or when the result
/// is not an http(s) URL (the API checks the template at start-up; this keeps a
/// `javascript:` link off the page whatever it says).
export function traceViewerLink(template: string | null | undefined, traceId: string): string | null {
  if (!template || !template.includes(TRACE_ID_PLACEHOLDER)) return null;
  const url = template.split(TRACE_ID_PLACEHOLDER).join(encodeURIComponent(traceId));
  try {
    const protocol = new URL(url).protocol;
    return protocol === "http:" || protocol === "https:" ? url : null;
  } catch {
    return null;
  }
}

/// A local `datetime-local` value as an RFC 3339 UTC time; null when it is not a time.
export function isoOf(local: string): string | null {
  const t = new Date(local);
  return Number.isNaN(t.getTime()) ? null : t.toISOString();
}

/// What is wrong with the filters before asking (the API checks them all again).
export function filterProblems(filters: Filters): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const id = filters.invocationId.trim();
  if (id && !UUID.test(id)) problems.push({ field: "invocationId", message: "An invocation id is a UUID." });
  if (filters.traceId.trim() && !traceIdOf(filters.traceId)) {
    problems.push({ field: "traceId", message: "A trace id is 32 hex digits (or paste a whole traceparent)." });
  }
  const from = filters.from ? isoOf(filters.from) : null;
  const to = filters.to ? isoOf(filters.to) : null;
  if (filters.from && !from) problems.push({ field: "from", message: "Not a time." });
  if (filters.to && !to) problems.push({ field: "to", message: "Not a time." });
  if (from && to && from > to) problems.push({ field: "to", message: "Must not be before From." });
  return problems;
}

export interface LogQuery {
  status?: Exclude<StatusFilter, "">;
  messageId?: string;
  invocationId?: string;
  traceId?: string;
  from?: string;
  to?: string;
  limit: number;
  continuationToken?: string;
}

/// The query string for `filters`: empty fields are left out, times sent as UTC.
export function queryOf(filters: Filters, continuationToken?: string): LogQuery {
  const query: LogQuery = { limit: PAGE_SIZE };
  if (filters.status) query.status = filters.status;
  const messageId = filters.messageId.trim();
  if (messageId) query.messageId = messageId;
  const invocationId = filters.invocationId.trim();
  if (invocationId) query.invocationId = invocationId;
  const traceId = traceIdOf(filters.traceId);
  if (traceId) query.traceId = traceId;
  const from = filters.from ? isoOf(filters.from) : null;
  if (from) query.from = from;
  const to = filters.to ? isoOf(filters.to) : null;
  if (to) query.to = to;
  if (continuationToken) query.continuationToken = continuationToken;
  return query;
}

/// Merges a freshly polled first page into what is shown: invocations seen again are replaced
/// (a new attempt, a new status), new ones go on top, older pages already loaded stay. Returns
/// how many are new, for the live region.
export function mergeTail(shown: Invocation[], fresh: Invocation[]): { items: Invocation[]; added: number } {
  const freshKeys = new Set(fresh.map((i) => i.deliveryKey));
  const shownKeys = new Set(shown.map((i) => i.deliveryKey));
  const added = fresh.filter((i) => !shownKeys.has(i.deliveryKey)).length;
  const rest = shown.filter((i) => !freshKeys.has(i.deliveryKey));
  const oldestFresh = fresh.length ? fresh[fresh.length - 1].startedAt : null;
  // What the first page no longer reaches is kept only below it (it was pushed down).
  const below = oldestFresh === null ? rest : rest.filter((i) => Date.parse(i.startedAt) <= Date.parse(oldestFresh));
  return { items: [...fresh, ...below], added };
}

/// "3 attempts (20 kept)" when some were pruned.
export function attemptsLabel(inv: Invocation): string {
  const n = inv.attemptCount;
  const word = n === 1 ? "attempt" : "attempts";
  return inv.attempts.length < n ? `${n} ${word} (latest ${inv.attempts.length} kept)` : `${n} ${word}`;
}

/// DequeueCount or DeliveryCount, as the trigger calls it; "—" for triggers without one.
export function deliveryCountLabel(attempt: Attempt): string {
  return attempt.deliveryCount === undefined || attempt.deliveryCount === null ? "—" : String(attempt.deliveryCount);
}

/// The retention policy in words, shown above the table.
export function policyText(r: Schemas["Retention"]): string {
  const kib = (bytes: number) => `${Math.round(bytes / 1024)} KiB`;
  return (
    `Every invocation is kept, successes too, up to the newest ${r.keptInvocations} of this function ` +
    `(older ones are pruned, never sampled), each with its latest ${r.keptAttempts} attempts; ` +
    `payloads are cut at ${kib(r.maxPayloadBytes)} and each attempt's logs at ${kib(r.maxLogBytes)}.`
  );
}
