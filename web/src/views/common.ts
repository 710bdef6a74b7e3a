// Pieces every view uses: problem banners, tables, key/value lists, loading states.

import { h } from "../dom";
import { describe, fieldLines, isProblem, type Problem } from "../problem";

type Child = Node | string | number | null | undefined | false;

/// A failed call's message, for people: problem+json says what happened, plainly.
export function problemBanner(error: unknown, status?: number): HTMLElement {
  let text: string;
  if (isProblem(error)) text = describe(error as Problem);
  else if (status) text = `The API answered ${status}.`;
  else text = `The request failed: ${String(error)}`;
  return h("div", { role: "alert", class: "problem" }, text);
}

/// A failed call's message with every field error the problem lists under it, each at its path:
/// for sections with no form field to put an error beside.
export function problemReport(error: unknown, status?: number): HTMLElement {
  const banner = problemBanner(error, status);
  const lines = fieldLines(error);
  if (lines.length) banner.append(h("ul", { class: "field-errors" }, lines.map((line) => h("li", {}, line))));
  return banner;
}

export interface Column<T> {
  label: string;
  cell: (item: T) => Child | Child[];
}

export function table<T>(caption: string, columns: Column<T>[], items: T[]): HTMLElement {
  if (items.length === 0) return h("p", { class: "empty" }, `${caption}: none.`);
  return h(
    "div",
    // Focusable, so a keyboard can scroll a table wider than the screen.
    { class: "table-wrap", tabindex: 0, role: "region", "aria-label": caption },
    h(
      "table",
      {},
      h("caption", {}, caption),
      h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c.label)))),
      h(
        "tbody",
        {},
        items.map((item) => h("tr", {}, columns.map((c) => h("td", {}, c.cell(item))))),
      ),
    ),
  );
}

export function facts(pairs: [string, Child | Child[]][]): HTMLElement {
  return h("dl", { class: "facts" }, pairs.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]).flat());
}

export function loading(what: string): HTMLElement {
  return h("p", { class: "loading", role: "status" }, `Loading ${what}…`);
}

export function json(value: unknown): HTMLElement {
  return h("pre", { class: "json", tabindex: 0 }, JSON.stringify(value, null, 2));
}

export function when(at: string | null | undefined): string {
  if (!at) return "—";
  const d = new Date(at);
  return Number.isNaN(d.getTime()) ? at : d.toLocaleString();
}
