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

/// The templates a new function starts from: one trigger each, for every trigger kind Shoal
/// runs, its connection named by the setting the API looks up by default for its kind
/// (docs/triggers.md), so the page can offer to add it. RabbitMQ and Kafka have no default:
/// their templates name a setting (`connectionStringSetting`, a `%Setting%` reference in
/// `brokerList`) the page offers the same way. A timer needs no setting: its `schedule` is an
/// NCRONTAB expression (every five minutes here), checked when the function is saved.
export const TEMPLATES: readonly { id: string; label: string; bindings: readonly Binding[] }[] = [
  { id: "queue", label: "Storage queue trigger", bindings: [QUEUE_TRIGGER_TEMPLATE] },
  {
    id: "serviceBus",
    label: "Service Bus queue trigger",
    bindings: [{ type: "serviceBusTrigger", direction: "in", name: "message", queueName: "", connection: "AzureWebJobsServiceBus" }],
  },
  { id: "http", label: "HTTP trigger (webhook)", bindings: [{ type: "httpTrigger", direction: "in", name: "req", methods: ["post"] }] },
  { id: "timer", label: "Timer trigger (schedule)", bindings: [{ type: "timerTrigger", direction: "in", name: "myTimer", schedule: "0 */5 * * * *" }] },
  {
    id: "rabbitMQ",
    label: "RabbitMQ queue trigger",
    bindings: [{ type: "rabbitMQTrigger", direction: "in", name: "message", queueName: "", connectionStringSetting: "RabbitMQConnection" }],
  },
  {
    id: "kafka",
    label: "Kafka topic trigger",
    bindings: [{ type: "kafkaTrigger", direction: "in", name: "event", brokerList: "%KafkaBrokerList%", topic: "", consumerGroup: "$Default" }],
  },
  {
    id: "eventHub",
    label: "Event Hubs trigger",
    bindings: [{ type: "eventHubTrigger", direction: "in", name: "event", eventHubName: "", connection: "AzureWebJobsEventHub" }],
  },
];
