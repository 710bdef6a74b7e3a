// "Send test message": one message on the function's trigger queue or topic, as the app, so the
// function receives it like any other (POST …/send). Offered for queue, Service Bus, RabbitMQ,
// Kafka and Event Hubs triggers, to callers whose roles allow
// `Shoal/apps/functions/send/action`; the API decides anyway. For an HTTP trigger the test is a
// request to its webhook made as the signed-in person (invoke.ts says which role that takes),
// and the function's response is shown. Either answer is shown: what was sent and where, or
// the problem with each error at its field.

import { api, fetchWithToken } from "../../api/client";
import { h, replace } from "../../dom";
import { placeErrors, type FieldError } from "../../problem";
import { problemBanner } from "../common";
import { decodePayload } from "../payload";
import type { Binding } from "./document";
import { allowedMethods, answerText, HTTP_TRIGGER, httpRequest, problemOf, type Answer } from "./invoke";
import { hasKey, sendRequest, sentText, type MessageForm } from "./message";

/// `trigger` is the function's trigger binding (an HTTP trigger's `methods` are offered).
export function sendSection(tenant: string, app: string, fn: string, trigger: Binding): HTMLElement {
  const triggerType = String(trigger.type);
  const http = triggerType === HTTP_TRIGGER;
  const serviceBus = triggerType === "serviceBusTrigger";
  // A RabbitMQ message carries headers where a Service Bus one carries application properties.
  const rabbitMq = triggerType === "rabbitMQTrigger";
  // A Kafka (or Event Hubs) record has a key and headers.
  const keyed = hasKey(triggerType);
  const said = h("p", { role: "status", class: "said", id: "fn-send-said" });
  const top = h("div", { id: "fn-send-problem" });
  const answer = h("div", { id: "fn-send-answer" });
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
  const methods = http ? allowedMethods(trigger.methods) : [];
  const method = http
    ? field("send-method", "Method", h("select", {}, methods.map((m) => h("option", { value: m }, m))), methods.length ? undefined : "The trigger's methods allow none the webhook takes.")
    : null;
  const query = http ? field("send-query", "Query string", h("input", { autocomplete: "off" }), "name=value pairs joined by &; passed to the handler.") : null;
  const body = field("send-body", http ? "Request body" : "Message body", h("textarea", { rows: 4, spellcheck: "false" }));
  const format = field(
    "send-format",
    "Body is",
    h("select", {}, h("option", { value: "json" }, "JSON (sent as its JSON)"), h("option", { value: "text" }, "Text (sent as typed)")),
  );
  const session = serviceBus ? field("send-session", "Session id", h("input", { autocomplete: "off" }), "Required when the trigger reads sessions.") : null;
  const key = keyed ? field("send-key", "Record key", h("input", { autocomplete: "off" }), "Picks the partition; empty sends none.") : null;
  const properties =
    serviceBus || rabbitMq || keyed || http
      ? field(
          "send-properties",
          serviceBus ? "Application properties" : "Headers",
          h("textarea", { rows: 2, spellcheck: "false" }),
          "One name=value a line.",
        )
      : null;
  // Error slots by the path the errors name (`properties.<name>` lands on properties; an HTTP
  // request's own checks name `headers`).
  const slots = new Map([["body", body]]);
  if (method) slots.set("method", method);
  if (query) slots.set("query", query);
  if (session) slots.set("sessionId", session);
  if (key) slots.set("key", key);
  if (properties) slots.set(http ? "headers" : "properties", properties);

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
  const value = (slot: { input: HTMLElement } | null) => (slot?.input as HTMLInputElement | undefined)?.value ?? "";
  const bodyFormat = () => ((format.input as HTMLSelectElement).value === "text" ? "text" : "json");

  /// A message through the API's `…/send`.
  const sendMessage = async () => {
    const typed: MessageForm = {
      body: value(body),
      format: bodyFormat(),
      sessionId: value(session),
      properties: value(properties),
      key: key ? value(key) : undefined,
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
  };

  /// A request to the function's webhook, its response shown as the function gave it.
  const invoke = async () => {
    const built = httpRequest(
      { method: value(method), query: value(query), headers: value(properties), body: value(body), format: bodyFormat() },
      { tenant, app, function: fn },
    );
    if (!built.ok) {
      show(built.errors, null);
      return;
    }
    const { request } = built;
    let got: Answer;
    try {
      const response = await fetchWithToken(request.url, { method: request.method, headers: request.headers, body: request.body });
      got = { status: response.status, statusText: response.statusText, contentType: response.headers.get("content-type"), body: await response.text() };
    } catch (e) {
      show([], problemBanner(e));
      return;
    }
    const problem = problemOf(got);
    if (problem) {
      show((problem as { errors?: FieldError[] }).errors ?? [], problemBanner(problem, got.status));
      return;
    }
    show([], null);
    said.textContent = answerText(got);
    const decoded = got.body ? decodePayload(got.body) : null;
    replace(
      answer,
      decoded ? h("div", {}, h("h3", {}, `Response body (${decoded.kind})`), h("pre", { class: "json", tabindex: 0 }, decoded.text)) : null,
    );
  };

  const form = h(
    "form",
    {
      "aria-label": http ? `Send a test request to ${fn}` : `Send a test message to ${fn}`,
      onsubmit: async (event: Event) => {
        event.preventDefault();
        said.textContent = "";
        replace(answer);
        await (http ? invoke() : sendMessage());
      },
    },
    top,
    method?.el,
    query?.el,
    body.el,
    format.el,
    session?.el,
    key?.el,
    properties?.el,
    h("button", { type: "submit", id: "fn-send" }, "Send test message"),
    said,
    answer,
  );
  return h(
    "section",
    { "aria-labelledby": "fn-send-heading", id: "fn-send-section" },
    h("h2", { id: "fn-send-heading" }, "Send a test message"),
    h(
      "p",
      { class: "hint" },
      http
        ? `One request to ${fn}'s webhook, made as you: it needs the Function Invoker role (or Owner) at ${fn} or above, and ${fn}'s response is shown here.`
        : `One message on ${fn}'s trigger queue or topic, sent as the app: ${fn} receives it like any other message.`,
    ),
    form,
  );
}
