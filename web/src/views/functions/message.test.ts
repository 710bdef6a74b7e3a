import { describe, expect, it } from "vitest";
import { parseProperties, sendRequest, sendsTestMessages, sentText } from "./message";

const form = { body: "", format: "json" as const, sessionId: "", properties: "" };

describe("sendRequest", () => {
  it("sends a JSON body as its value and a text body as typed", () => {
    expect(sendRequest({ ...form, body: '{"order": 7}' })).toEqual({ ok: true, request: { body: { order: 7 } } });
    expect(sendRequest({ ...form, body: '{"order": 7}', format: "text" })).toEqual({ ok: true, request: { body: '{"order": 7}' } });
    expect(sendRequest({ ...form, body: "", format: "text" })).toEqual({ ok: true, request: { body: "" } });
  });

  it("says at body when the JSON cannot be read, and sends nothing", () => {
    const built = sendRequest({ ...form, body: "{order" });
    expect(built.ok).toBe(false);
    if (!built.ok) expect(built.errors.map((e) => e.path)).toEqual(["body"]);
  });

  it("adds a session id and properties only when given", () => {
    expect(sendRequest({ ...form, body: "1", sessionId: " s-1 ", properties: "kind=test\n\nnote = a=b " })).toEqual({
      ok: true,
      request: { body: 1, sessionId: "s-1", properties: { kind: "test", note: "a=b" } },
    });
  });
});

describe("a Kafka or Event Hubs record", () => {
  it("is offered a test message, with its key sent only when given", () => {
    expect(sendsTestMessages("kafkaTrigger") && sendsTestMessages("eventHubTrigger")).toBe(true);
    expect(sendsTestMessages("httpTrigger")).toBe(false);
    expect(sendRequest({ ...form, body: "1", key: "order-7" })).toEqual({ ok: true, request: { body: 1, key: "order-7" } });
    expect(sendRequest({ ...form, body: "1", key: "" })).toEqual({ ok: true, request: { body: 1 } });
  });
});

describe("parseProperties", () => {
  it("names the line of a property without a name or given twice", () => {
    const errors: { path: string; message: string }[] = [];
    parseProperties("a=1\nnovalue\n=x\na=2\nconstructor=ok", errors);
    expect(errors).toEqual([
      { path: "properties", message: "line 2: write name=value" },
      { path: "properties", message: "line 3: write name=value" },
      { path: "properties", message: "line 4: a is given twice" },
    ]);
  });
});

describe("sendsTestMessages", () => {
  it("covers queue, Service Bus and RabbitMQ triggers only", () => {
    expect(sendsTestMessages("queueTrigger")).toBe(true);
    expect(sendsTestMessages("serviceBusTrigger")).toBe(true);
    expect(sendsTestMessages("rabbitMQTrigger")).toBe(true);
    expect(sendsTestMessages("httpTrigger")).toBe(false);
  });
});

describe("sentText", () => {
  it("says where it went, its id and size", () => {
    expect(sentText({ trigger: "queueTrigger", destination: "orders", messageId: "m-1", size: 12 })).toBe(
      "Sent to orders (message id m-1, 12 bytes).",
    );
    expect(sentText({ trigger: "serviceBusTrigger", destination: "q", size: 3, sessionId: "s" })).toBe("Sent to q (3 bytes, session s).");
  });
});
