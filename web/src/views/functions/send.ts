// "Send test message": one message on the function's trigger queue or topic, as the app, so the
// function receives it like any other (POST …/send). Offered for queue, Service Bus, RabbitMQ,
// Kafka and Event Hubs triggers, to
// callers whose roles allow `Shoal/apps/functions/send/action`; the API decides anyway. Its
// answer is shown: what was sent and where, or the problem with each error at its field.

import { api } from "../../api/client";
import { h, replace } from "../../dom";
import { placeErrors, type FieldError } from "../../problem";
import { problemBanner } from "../common";
import { hasKey, sendRequest, sentText, type MessageForm } from "./message";

export function sendSection(tenant: string, app: string, fn: string, triggerType: string): HTMLElement {
  const serviceBus = triggerType === "serviceBusTrigger";
  // A RabbitMQ message carries headers where a Service Bus one carries application properties.
  const rabbitMq = triggerType === "rabbitMQTrigger";
  // A Kafka (or Event Hubs) record has a key and headers.
  const keyed = hasKey(triggerType);
  const said = h("p", { role: "status", class: "said", id: "fn-send-said" });
  const top = h("div", { id: "fn-send-problem" });
  const field = (id: string, label: string, input: HTMLElement, hint?: string) => {
    const error = h("p", { class: "field-error", id: `${id}-error` });
    input.setAttribute("id", id);
    input.setAttribute("aria-describedby", hint ? `${id}-error ${id}-hint` : `${id}-error`);
    return {
      input,
      error,
      el: h("div", { class: "field" }, h("label", { for: id }, label), input, error, hint ? h("p", { class: "hint", id: `${id}-hint` }, hint) : null),
    };
  };
  const body = field("send-body", "Message body", h("textarea", { rows: 4, spellcheck: "false" }));
  const format = field(
    "send-format",
    "Body is",
    h("select", {}, h("option", { value: "json" }, "JSON (sent as its JSON)"), h("option", { value: "text" }, "Text (sent as typed)")),
  );
  const session = serviceBus ? field("send-session", "Session id", h("input", { autocomplete: "off" }), "Required when the trigger reads sessions.") : null;
  const key = keyed ? field("send-key", "Record key", h("input", { autocomplete: "off" }), "Picks the partition; empty sends none.") : null;
  const properties =
    serviceBus || rabbitMq || keyed
      ? field(
          "send-properties",
          serviceBus ? "Application properties" : "Headers",
          h("textarea", { rows: 2, spellcheck: "false" }),
          "One name=value a line.",
        )
      : null;
  // Error slots by the path the API's errors name (`properties.<name>` lands on properties).
  const slots = new Map([["body", body]]);
  if (session) slots.set("sessionId", session);
  if (key) slots.set("key", key);
  if (properties) slots.set("properties", properties);

  const show = (errors: FieldError[], banner: HTMLElement | null) => {
    for (const slot of slots.values()) {
      slot.error.textContent = "";
      slot.input.removeAttribute("aria-invalid");
    }
    const { byField, unplaced } = placeErrors(errors, [...slots.keys()]);
    for (const [path, messages] of byField) {
      const slot = slots.get(path)!;
      slot.error.textContent = messages.join("; ");
      slot.input.setAttribute("aria-invalid", "true");
    }
    replace(top, banner, unplaced.length ? h("ul", {}, unplaced.map((e) => h("li", {}, `${e.path}: ${e.message}`))) : null);
    const first = [...slots.values()].find((s) => s.input.getAttribute("aria-invalid") === "true");
    first?.input.focus();
  };

  const form = h(
    "form",
    {
      "aria-label": `Send a test message to ${fn}`,
      onsubmit: async (event: Event) => {
        event.preventDefault();
        said.textContent = "";
        const typed: MessageForm = {
          body: (body.input as HTMLTextAreaElement).value,
          format: (format.input as HTMLSelectElement).value === "text" ? "text" : "json",
          sessionId: (session?.input as HTMLInputElement | undefined)?.value ?? "",
          properties: (properties?.input as HTMLTextAreaElement | undefined)?.value ?? "",
          key: (key?.input as HTMLInputElement | undefined)?.value,
        };
        const built = sendRequest(typed);
        if (!built.ok) {
          show(built.errors, null);
          return;
        }
        const { data, error, response } = await api.POST("/v1/tenants/{tenant}/apps/{app}/functions/{function}/send", {
          params: { path: { tenant, app, function: fn } },
          body: built.request,
        });
        if (response.ok && data) {
          show([], null);
          said.textContent = sentText(data);
          return;
        }
        const problem = error as { errors?: FieldError[] } | undefined;
        show(problem?.errors ?? [], problemBanner(error, response.status));
      },
    },
    top,
    body.el,
    format.el,
    session?.el,
    key?.el,
    properties?.el,
    h("button", { type: "submit", id: "fn-send" }, "Send test message"),
    said,
  );
  return h(
    "section",
    { "aria-labelledby": "fn-send-heading", id: "fn-send-section" },
    h("h2", { id: "fn-send-heading" }, "Send a test message"),
    h("p", { class: "hint" }, `One message on ${fn}'s trigger queue or topic, sent as the app: ${fn} receives it like any other message.`),
    form,
  );
}
