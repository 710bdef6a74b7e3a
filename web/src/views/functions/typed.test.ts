import { describe, expect, it } from "vitest";
import { choices, controlFor, retype, typedBinding, typedRows, type BindingTypeInfo } from "./typed";

// As `GET /v1/bindingTypes` answers (trimmed to the properties used here).
const timer: BindingTypeInfo = {
  type: "timerTrigger",
  direction: "in",
  runs: true,
  schema: {
    required: ["name", "schedule"],
    properties: {
      name: { type: "string", pattern: "^([A-Za-z_][A-Za-z0-9_]*|\\$return)$", examples: ["myQueueItem"] },
      schedule: { type: "string", description: "An NCRONTAB expression" },
      runOnStartup: { type: "boolean" },
      useMonitor: { type: "boolean" },
      dataType: { type: "string", enum: ["string", "binary", "stream"] },
    },
  },
};
const queue: BindingTypeInfo = {
  type: "queueTrigger",
  direction: "in",
  runs: true,
  schema: {
    required: ["name", "queueName"],
    properties: {
      name: { type: "string" },
      queueName: { type: "string", minLength: 3, maxLength: 1024 },
      connection: { type: "string" },
      dataType: { type: "string", enum: ["string", "binary", "stream"] },
    },
  },
};
const queueOut: BindingTypeInfo = { ...queue, type: "queue", direction: "out" };
const cosmos: BindingTypeInfo = { type: "cosmosDBTrigger", direction: "in", runs: false, schema: {} };

describe("controlFor", () => {
  it("offers a choice for enums and for flags, whose absence may mean true", () => {
    expect(controlFor({ type: "string", enum: ["string", "binary"] })).toEqual({ kind: "choice", options: ["string", "binary"] });
    expect(controlFor({ type: "boolean" })).toEqual({ kind: "choice", options: ["true", "false"] });
  });
  it("keeps the schema's bounds and patterns for the browser to check", () => {
    expect(controlFor({ type: "integer", minimum: 1, maximum: 5 })).toEqual({ kind: "number", min: 1, max: 5 });
    expect(controlFor({ type: "string", minLength: 3 })).toMatchObject({ kind: "text", minLength: 3 });
    expect(controlFor({ type: "array" })).toEqual({ kind: "json" });
  });
});

describe("typed rows", () => {
  it("list every property of the type, required first, with what was written", () => {
    const rows = typedRows({ type: "timerTrigger", direction: "in", name: "t", schedule: "0 * * * * *", useMonitor: false }, timer);
    expect(rows.map((r) => r.key)).toEqual(["type", "direction", "name", "schedule", "runOnStartup", "useMonitor", "dataType"]);
    expect(rows.find((r) => r.key === "useMonitor")).toMatchObject({ text: "false", kind: "json", required: false });
    expect(rows.find((r) => r.key === "schedule")).toMatchObject({ required: true, description: "An NCRONTAB expression" });
    expect(rows.find((r) => r.key === "name")?.placeholder).toBe("myQueueItem");
  });
  it("write back what was set, leave out what was not, keep what the schema does not list", () => {
    const written = { type: "timerTrigger", direction: "in", name: "t", schedule: "0 * * * * *", useMonitor: false, custom: 3 };
    const rows = typedRows(written, timer);
    expect(typedBinding(rows)).toEqual(written);
    const monitor = rows.find((r) => r.key === "useMonitor");
    if (monitor) monitor.text = "";
    const dataType = rows.find((r) => r.key === "dataType");
    if (dataType) dataType.text = "binary";
    expect(typedBinding(rows)).toEqual({ type: "timerTrigger", direction: "in", name: "t", schedule: "0 * * * * *", dataType: "binary", custom: 3 });
  });
  it("keep the values a new type shares when the type changes", () => {
    const rows = typedRows({ type: "timerTrigger", direction: "in", name: "t", schedule: "x", dataType: "binary", mine: 1 }, timer);
    const changed = retype(rows, queue);
    // The timer's schedule goes with the timer; the user's own property stays.
    expect(typedBinding(changed)).toEqual({ type: "queueTrigger", direction: "in", name: "t", dataType: "binary", mine: 1 });
    expect(changed.find((r) => r.key === "queueName")).toMatchObject({ text: "", required: true });
  });
  it("offer the types of the same direction, those Shoal runs first", () => {
    expect(choices([cosmos, queueOut, timer, queue], "in").map((t) => t.type)).toEqual(["timerTrigger", "queueTrigger", "cosmosDBTrigger"]);
  });
});
