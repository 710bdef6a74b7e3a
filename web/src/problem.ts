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

/// One line for a banner: 403s and 404s say plainly what happened.
export function describe(problem: Problem): string {
  switch (problem.status) {
    case 403:
      return `Not allowed: ${problem.detail}`;
    case 404:
      return `Not found: ${problem.detail}`;
    default:
      return `${problem.title}: ${problem.detail}`;
  }
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
