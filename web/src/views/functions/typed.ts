// Typed binding fields: the controls of a binding's properties, read from the schema the API
// publishes for its type (`GET /v1/bindingTypes`, generated from the very types validation
// reads bindings into), so the form keeps no list of its own. A property the schema lists is
// offered whether or not it is written (empty means "not set" and is left out); a property
// it does not list stays a plain row, as written, for validation to judge.

import type { Binding, FieldRow } from "./document";

export interface PropertySchema {
  type?: string;
  enum?: unknown[];
  description?: string;
  examples?: unknown[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
}

export interface BindingTypeInfo {
  type: string;
  direction: string;
  runs: boolean;
  schema: { properties?: Record<string, PropertySchema>; required?: string[] };
}

/// How a property is edited: a choice among its values, a number, a line of text, or JSON
/// text (arrays and objects).
export type Control =
  | { kind: "choice"; options: string[] }
  | { kind: "number"; min?: number; max?: number }
  | { kind: "text"; pattern?: string; minLength?: number; maxLength?: number }
  | { kind: "json" };

/// A row of the binding form; `control` is set for the properties the schema lists.
export interface TypedRow extends FieldRow {
  control?: Control;
  required?: boolean;
  description?: string;
  placeholder?: string;
}

/// The control for one property. A boolean is a choice, not a checkbox: an optional flag left
/// out may mean true (`useMonitor`), so "not set" has to be a choice of its own.
export function controlFor(schema: PropertySchema): Control {
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === "string")) {
    return { kind: "choice", options: schema.enum as string[] };
  }
  switch (schema.type) {
    case "boolean":
      return { kind: "choice", options: ["true", "false"] };
    case "integer":
    case "number":
      return { kind: "number", min: schema.minimum, max: schema.maximum };
    case "string":
      return { kind: "text", pattern: schema.pattern, minLength: schema.minLength, maxLength: schema.maxLength };
    default:
      return { kind: "json" };
  }
}

/// The rows of `binding` under its type's schema: `type` and `direction` first, then every
/// property the schema lists (required ones first, in the schema's order), then the written
/// properties it does not list.
export function typedRows(binding: Binding, info: BindingTypeInfo): TypedRow[] {
  const properties = info.schema.properties ?? {};
  const required = new Set(info.schema.required ?? []);
  const listed = Object.keys(properties).sort((a, b) => Number(required.has(b)) - Number(required.has(a)));
  const rows: TypedRow[] = [
    { key: "type", text: info.type, kind: "string" },
    { key: "direction", text: info.direction, kind: "string" },
  ];
  for (const key of listed) {
    const schema = properties[key];
    const control = controlFor(schema);
    const value = binding[key];
    const text = value === undefined || value === null ? "" : typeof value === "string" ? value : JSON.stringify(value);
    const example = schema.examples?.[0];
    rows.push({
      key,
      text,
      kind: control.kind === "text" || (control.kind === "choice" && schema.type === "string") ? "string" : "json",
      control,
      required: required.has(key),
      description: schema.description,
      placeholder: example === undefined ? undefined : typeof example === "string" ? example : JSON.stringify(example),
    });
  }
  for (const [key, value] of Object.entries(binding)) {
    if (key === "type" || key === "direction" || key in properties) continue;
    rows.push(typeof value === "string" ? { key, text: value, kind: "string" } : { key, text: JSON.stringify(value), kind: "json" });
  }
  return rows;
}

/// The binding the rows say: a listed property left empty is not written; every other row is
/// written as `fromRows` would (a plain row's empty text is kept, as typed).
export function typedBinding(rows: TypedRow[]): Binding {
  const binding: Binding = {};
  for (const row of rows) {
    const key = row.key.trim();
    if (key === "") continue;
    if (row.control && row.text.trim() === "") continue;
    binding[key] = row.kind === "string" ? row.text : parseJson(row.text);
  }
  return binding;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON: sent as typed, so validation names the field.
    return text;
  }
}

/// The rows for another type: a value the new type also has a property for is kept, and so is
/// a row no schema listed (the user's own); the old type's other properties go with it.
export function retype(rows: TypedRow[], info: BindingTypeInfo): TypedRow[] {
  const properties = info.schema.properties ?? {};
  const kept = rows.filter((r) => r.key !== "type" && r.key !== "direction" && (!r.control || r.key in properties));
  return typedRows(typedBinding(kept), info);
}

/// The types a binding may be changed to: the same direction (a trigger stays a trigger), the
/// ones Shoal runs first.
export function choices(types: BindingTypeInfo[], direction: string): BindingTypeInfo[] {
  return types.filter((t) => t.direction === direction).sort((a, b) => Number(b.runs) - Number(a.runs));
}
