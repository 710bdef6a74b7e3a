import { describe, expect, it } from "vitest";
import { bindingSettings, hasSetting } from "../app/settings-model";
import { fieldPath, fromRows, parseValue, TEMPLATES, toRows } from "./document";

describe("rows", () => {
  it("round-trip a binding with its value types", () => {
    const binding = { type: "serviceBusTrigger", name: "m", isSessionsEnabled: true, maxCount: 3, entity: { a: 1 } };
    expect(fromRows(toRows(binding))).toEqual(binding);
  });
  it("keep a string that looks like a number a string", () => {
    expect(fromRows([{ key: "queueName", text: "123", kind: "string" }])).toEqual({ queueName: "123" });
  });
  it("read a new property's value as JSON scalar or text", () => {
    expect(parseValue("true")).toBe(true);
    expect(parseValue("16")).toBe(16);
    expect(parseValue("orders")).toBe("orders");
    expect(parseValue('"quoted"')).toBe('"quoted"');
    expect(parseValue("")).toBe("");
  });
  it("drop rows without a property name", () => {
    expect(fromRows([{ key: " ", text: "x", kind: "string" }])).toEqual({});
  });
});

describe("fieldPath", () => {
  it("names a property as the API's errors do", () => {
    expect(fieldPath(2, "queueName")).toBe("bindings[2].queueName");
  });
});

describe("templates", () => {
  it("each start with exactly one trigger and round-trip through the rows", () => {
    for (const t of TEMPLATES) {
      expect(t.bindings.filter((b) => String(b.type).endsWith("Trigger"))).toHaveLength(1);
      for (const b of t.bindings) expect(fromRows(toRows(b))).toEqual(b);
    }
    expect(new Set(TEMPLATES.map((t) => t.id)).size).toBe(TEMPLATES.length);
  });
  it("cover every trigger kind Shoal runs", () => {
    expect(TEMPLATES.map((t) => t.bindings[0].type).sort()).toEqual(
      ["eventHubTrigger", "httpTrigger", "kafkaTrigger", "queueTrigger", "rabbitMQTrigger", "serviceBusTrigger", "timerTrigger"],
    );
  });
  it("name the setting each kind connects with, so a missing one can be offered", () => {
    const needs = Object.fromEntries(TEMPLATES.map((t) => [t.id, bindingSettings(t.bindings).map((n) => n.name)]));
    expect(needs).toEqual({
      queue: ["AzureWebJobsStorage"],
      serviceBus: ["AzureWebJobsServiceBus"],
      http: [],
      timer: [],
      rabbitMQ: ["RabbitMQConnection"],
      kafka: ["KafkaBrokerList"],
      eventHub: ["AzureWebJobsEventHub"],
    });
    // With the settings there, nothing is missing.
    const names = ["AzureWebJobsStorage", "AzureWebJobsServiceBus", "RabbitMQConnection", "KafkaBrokerList", "AzureWebJobsEventHub"];
    for (const t of TEMPLATES) expect(bindingSettings(t.bindings).filter((n) => !hasSetting(names, n))).toEqual([]);
  });
});
