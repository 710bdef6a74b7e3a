// The editor's Max concurrency field: `maxConcurrency`, a Shoal extension of function.json that
// keeps at most N calls of the function's handler in flight across every instance. Empty is no
// cap. The API refuses it on HTTP-triggered functions (422 at `maxConcurrency`), said here.

import { h } from "../../dom";
import { maxConcurrencyValue } from "./write";

export interface ConcurrencyField {
  el: HTMLElement;
  input: HTMLInputElement;
  error: HTMLElement;
  /// The field as `maxConcurrency`: null when empty (no cap).
  value: () => number | string | null;
}

export function concurrencyField(value: number | null | undefined, writable: boolean): ConcurrencyField {
  const id = "fn-max-concurrency";
  const input = h("input", {
    id,
    type: "number",
    inputmode: "numeric",
    min: 1,
    max: 10000,
    step: 1,
    value: value ?? "",
    readonly: !writable,
    "data-path": "maxConcurrency",
    "aria-describedby": `err-${id} ${id}-hint`,
  });
  const error = h("p", { class: "field-error", id: `err-${id}` });
  const el = h(
    "div",
    { class: "field" },
    h("label", { for: id }, "Max concurrency"),
    input,
    error,
    h(
      "p",
      { class: "hint", id: `${id}-hint` },
      "At most this many calls of the handler in flight at once, across every instance (1 to 10000). Empty: no cap. Not for HTTP-triggered functions.",
    ),
  );
  return { el, input, error, value: () => maxConcurrencyValue(input.value) };
}
