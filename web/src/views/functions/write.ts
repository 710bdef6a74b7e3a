// What the function.json editor's Save sends. The PUT replaces the whole function, so the body
// carries every key of function.json the API returned, as it returned it, except those the form
// edits; anything else would be dropped without a word (a retry policy, a dead-letter target).
// Only `FunctionWrite`'s keys are sent: it refuses unknown fields, and the GET view adds
// read-only ones (name, app, triggerType, etag, createdAt, updatedAt).

import type { Schemas } from "../../api/client";
import type { Binding } from "./document";

export type FunctionRead = Schemas["Function"];
export type FunctionWrite = Schemas["FunctionWrite"];

/// How Save treats each key `FunctionWrite` takes. A `Record` over its keys: a key the API
/// gains is a type error here until it is given its treatment, never silently dropped.
///   edited   the form's value (bindings, maxConcurrency; disabled, which the toggle changes);
///   carried  sent back as read, left out when absent or null (nothing was written);
///   default  sent back unless it is the API's filled-in default (see `carriedValue`).
const TREATMENT: Record<keyof FunctionWrite, "edited" | "carried" | "default"> = {
  bindings: "edited",
  disabled: "edited",
  maxConcurrency: "edited",
  excluded: "default",
  retry: "carried",
  circuitBreaker: "default",
  deadLetter: "carried",
  scriptFile: "carried",
  entryPoint: "carried",
  configurationSource: "carried",
  generatedBy: "carried",
};

/// The `circuitBreaker` the GET view shows when none was written (docs: every default filled
/// in). Sending it back would write a `circuitBreaker` nobody wrote, which on an HTTP-triggered
/// function the diagnostics then report as having no effect.
export const DEFAULT_BREAKER: Schemas["CircuitBreaker"] = {
  enabled: true,
  failureThreshold: 100,
  window: "00:00:30",
  halfOpen: true,
  cooldown: "00:01:00",
};

/// What the form edits.
export interface Edits {
  bindings: Binding[];
  disabled: boolean;
  /// No cap when null.
  maxConcurrency: number | string | null;
}

/// The body of Save: `current` (the function as read, null for a new one) with the edits.
export function functionWrite(current: FunctionRead | null, edits: Edits): FunctionWrite {
  const body: Record<string, unknown> = {};
  for (const [key, treatment] of Object.entries(TREATMENT) as [keyof FunctionWrite, string][]) {
    if (treatment === "edited" || current === null) continue;
    const value = carriedValue(key, (current as Record<string, unknown>)[key]);
    if (value !== undefined) body[key] = value;
  }
  body.bindings = edits.bindings;
  body.disabled = edits.disabled;
  if (edits.maxConcurrency !== null) body.maxConcurrency = edits.maxConcurrency;
  return body as FunctionWrite;
}

/// A read key's value as Save sends it back; undefined leaves it out.
function carriedValue(key: keyof FunctionWrite, value: unknown): unknown {
  if (value === undefined || value === null) return undefined;
  if (TREATMENT[key] !== "default") return value;
  if (key === "excluded") return value === true ? true : undefined;
  return isDefaultBreaker(value) ? undefined : value;
}

function isDefaultBreaker(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  const b = value as Record<string, unknown>;
  const keys = new Set([...Object.keys(DEFAULT_BREAKER), ...Object.keys(b)]);
  for (const key of keys) {
    const given = b[key] ?? null;
    const fallback = (DEFAULT_BREAKER as Record<string, unknown>)[key] ?? null;
    if (given !== fallback) return false;
  }
  return true;
}

/// The Max concurrency field's text as `maxConcurrency`: empty is no cap; a whole number is
/// sent as one; anything else is sent as typed, for the API to say why at the field.
export function maxConcurrencyValue(text: string): number | string | null {
  const trimmed = text.trim();
  if (trimmed === "") return null;
  return /^\d+$/.test(trimmed) ? Number(trimmed) : trimmed;
}
