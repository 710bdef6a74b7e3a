// What the API's problem+json answers mean to a person: a message for the page and, for a 422,
// each error at the field its `path` names.

import type { components } from "./api/schema";

export type Problem = components["schemas"]["Problem"];
export type FieldError = components["schemas"]["FieldError"];

export function isProblem(value: unknown): value is Problem {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Problem).status === "number" &&
    typeof (value as Problem).title === "string"
  );
}

/// One line for a banner, in plain words: what happened and, where it helps, what to do. The
/// API's own `detail` follows, since it names the thing.
export function describe(problem: Problem): string {
  const detail = problem.detail ?? problem.title;
  switch (problem.status) {
    case 400:
      return `The request could not be read: ${detail}`;
    case 403:
      return `Not allowed: ${detail}`;
    case 404:
      return `Not found: ${detail}`;
    case 409:
      return `Not possible as things stand: ${detail}`;
    case 412:
      return "It changed since this page loaded (someone else saved it first): reload the page and make your change again.";
    case 413:
      return `Too large: ${detail}`;
    case 422:
      return `Not valid: ${detail}`;
    case 429:
      return `Too many requests: ${detail}`;
    case 502:
    case 504:
      return `A service the API relies on did not answer as it should: ${detail}`;
    case 503:
      return `The API is unavailable right now; try again in a moment. (${detail})`;
    default:
      if (problem.status >= 500) {
        const id = problem.requestId ? ` Quote request id ${problem.requestId} when reporting it.` : "";
        return `The API failed: ${detail}.${id}`;
      }
      return `${problem.title}: ${detail}`;
  }
}

/// What a 412 means for a create sent with `If-None-Match: *`: the name is taken.
export function createRefused(status: number, what: "An app" | "A function" | "A tenant", name: string): string | null {
  return status === 412 ? `${what} named ${name} exists already: choose another name.` : null;
}

/// Splits validation errors between the fields a form shows (by exact path, or the nearest
/// shown ancestor) and the rest, which the form lists above itself.
export function placeErrors(
  errors: FieldError[],
  fields: readonly string[],
): { byField: Map<string, string[]>; unplaced: FieldError[] } {
  const byField = new Map<string, string[]>();
  const unplaced: FieldError[] = [];
  for (const error of errors) {
    const field = nearestField(error.path, fields);
    if (field === null) {
      unplaced.push(error);
      continue;
    }
    const messages = byField.get(field) ?? [];
    messages.push(field === error.path ? error.message : `${error.path}: ${error.message}`);
    byField.set(field, messages);
  }
  return { byField, unplaced };
}

/// `bindings[0].queueName` → itself if shown, else `bindings[0]`, else `bindings`.
export function nearestField(path: string, fields: readonly string[]): string | null {
  let current = path;
  for (;;) {
    if (fields.includes(current)) return current;
    const cut = Math.max(current.lastIndexOf("."), current.lastIndexOf("["));
    if (cut <= 0) return null;
    current = current.slice(0, cut);
  }
}

/// A problem's field errors as lines, each led by the path it names (`messageIds[0]: must be a
/// non-empty string`); an error about the whole request (empty path) is its message alone.
export function fieldLines(problem: unknown): string[] {
  if (!isProblem(problem)) return [];
  return (problem.errors ?? []).map((e) => (e.path ? `${e.path}: ${e.message}` : e.message));
}
