// A test message as the send form has it, turned into the API's `SendRequest`: the body as
// text or as JSON, and for Service Bus a session id and application properties (one
// `name=value` a line). What cannot be read is said at its field before anything is sent.

import type { Schemas } from "../../api/client";
import type { FieldError } from "../../problem";

export type SendRequest = Schemas["SendRequest"];
export type SendResult = Schemas["SendResult"];

/// The triggers the page offers a test message for: those whose message is a body on a queue
/// or topic (and, for Service Bus, a session and properties; for RabbitMQ, headers; for Kafka
/// and Event Hubs, a key and headers), which the form's fields cover. An HTTP trigger is
/// called at its webhook by its callers, not sent a message.
export const SENDS_TEST_MESSAGES = ["queueTrigger", "serviceBusTrigger", "rabbitMQTrigger", "kafkaTrigger", "eventHubTrigger"] as const;

/// Whether a trigger reads a stream (Kafka, and Event Hubs through its Kafka endpoint): its
/// records carry a key, and its dead letters are replayed in order, not picked one by one.
export function isStream(triggerType: string): boolean {
  return triggerType === "kafkaTrigger" || triggerType === "eventHubTrigger";
}

/// Whether a trigger's records carry a key.
export const hasKey = isStream;

export function sendsTestMessages(triggerType: string): boolean {
  return (SENDS_TEST_MESSAGES as readonly string[]).includes(triggerType);
}

export interface MessageForm {
  body: string;
  /// `text` sends the body as typed; `json` sends the JSON value it holds (the API sends it
  /// compact), so a handler reading JSON gets JSON.
  format: "text" | "json";
  sessionId: string;
  properties: string;
  /// Kafka and Event Hubs: the record's key (it picks the partition); empty sends none.
  key?: string;
}

export type Built = { ok: true; request: SendRequest } | { ok: false; errors: FieldError[] };

export function sendRequest(form: MessageForm): Built {
  const errors: FieldError[] = [];
  const request: SendRequest = {};
  if (form.format === "json") {
    try {
      request.body = JSON.parse(form.body);
    } catch (e) {
      errors.push({ path: "body", message: `is not JSON: ${(e as Error).message}` });
    }
  } else {
    request.body = form.body;
  }
  const session = form.sessionId.trim();
  if (session !== "") request.sessionId = session;
  if (form.key !== undefined && form.key !== "") request.key = form.key;
  const properties = parseProperties(form.properties, errors);
  if (Object.keys(properties).length > 0) request.properties = properties;
  return errors.length ? { ok: false, errors } : { ok: true, request };
}

/// `name=value` lines (blank lines skipped; the value may hold `=`); problems are said at `path`.
export function parseProperties(text: string, errors: FieldError[], path = "properties"): Record<string, string> {
  // A Map, not an object: a property named `constructor` is not already "given".
  const properties = new Map<string, string>();
  const lines = text.split("\n");
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === "") return;
    const cut = line.indexOf("=");
    const name = cut < 0 ? "" : line.slice(0, cut).trim();
    if (name === "") {
      errors.push({ path, message: `line ${i + 1}: write name=value` });
      return;
    }
    if (properties.has(name)) {
      errors.push({ path, message: `line ${i + 1}: ${name} is given twice` });
      return;
    }
    properties.set(name, line.slice(cut + 1).trim());
  });
  return Object.fromEntries(properties);
}

/// What was sent, in words, starting with "Sent".
export function sentText(result: SendResult): string {
  const parts = [`${result.size} bytes`];
  if (result.messageId) parts.unshift(`message id ${result.messageId}`);
  if (result.sessionId) parts.push(`session ${result.sessionId}`);
  return `Sent to ${result.destination} (${parts.join(", ")}).`;
}
