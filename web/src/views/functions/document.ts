// The function.json editor's model: bindings as rows of property/value text fields, turned
// back into the JSON the API takes. Values keep their JSON type (a number stays a number);
// a new property's value is read as JSON when it is a number, boolean or null, else as text.

export type Binding = Record<string, unknown>;

export interface FieldRow {
  key: string;
  text: string;
  kind: "string" | "json";
}

export function toRows(binding: Binding): FieldRow[] {
  return Object.entries(binding).map(([key, value]) =>
    typeof value === "string"
      ? { key, text: value, kind: "string" }
      : { key, text: JSON.stringify(value), kind: "json" },
  );
}

export function fromRows(rows: FieldRow[]): Binding {
  const binding: Binding = {};
  for (const row of rows) {
    const key = row.key.trim();
    if (key === "") continue;
    binding[key] = row.kind === "string" ? row.text : parseValue(row.text);
  }
  return binding;
}

/// A typed value from text: JSON where it parses as a non-string, the text itself otherwise.
export function parseValue(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === "") return "";
  try {
    const value: unknown = JSON.parse(trimmed);
    return typeof value === "string" ? text : value;
  } catch {
    return text;
  }
}

/// The path a 422 names for a binding's property: `bindings[0].queueName`.
export function fieldPath(index: number, key: string): string {
  return `bindings[${index}].${key}`;
}

export const QUEUE_TRIGGER_TEMPLATE: Binding = {
  type: "queueTrigger",
  direction: "in",
  name: "message",
  queueName: "",
  connection: "AzureWebJobsStorage",
};

/// The templates a new function starts from: one trigger each, its connection named by the
/// setting the API looks up by default for its kind, so the page can offer to add it.
export const TEMPLATES: readonly { id: string; label: string; bindings: readonly Binding[] }[] = [
  { id: "queue", label: "Storage queue trigger", bindings: [QUEUE_TRIGGER_TEMPLATE] },
  {
    id: "serviceBus",
    label: "Service Bus queue trigger",
    bindings: [{ type: "serviceBusTrigger", direction: "in", name: "message", queueName: "", connection: "AzureWebJobsServiceBus" }],
  },
  { id: "http", label: "HTTP trigger (webhook)", bindings: [{ type: "httpTrigger", direction: "in", name: "req", methods: ["post"] }] },
];
