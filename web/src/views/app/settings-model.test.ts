import { describe, expect, it } from "vitest";
import {
  bindingSettings,
  hasSetting,
  settingReferences,
  connectionSettingNames,
  hasConnection,
  isMasked,
  MASK,
  removePatch,
  secretNotMasked,
  setPatch,
  settingNameProblem,
} from "./settings-model";

describe("settings patches", () => {
  it("sets one setting and leaves the others out of the merge patch", () => {
    expect(setPatch("QueueName", "orders")).toEqual({ appSettings: { QueueName: "orders" } });
  });
  it("removes a setting with null, as RFC 7396 says", () => {
    expect(JSON.stringify(removePatch("Old"))).toBe('{"appSettings":{"Old":null}}');
  });
  it("says an empty name or one with spaces before asking the API", () => {
    expect(settingNameProblem("")).toMatch(/name/);
    expect(settingNameProblem("MY SETTING")).toMatch(/spaces/);
    expect(settingNameProblem("Conn__queueServiceUri")).toBeNull();
  });
});

describe("secret values", () => {
  it("knows the API's mask", () => {
    expect(isMasked(MASK)).toBe(true);
    expect(isMasked("hunter2")).toBe(false);
    expect(isMasked(undefined)).toBe(false);
  });
  it("warns when a setting meant to be secret came back in the clear", () => {
    expect(secretNotMasked("Color", "blue")).toMatch(/^The API shows Color in the clear: .*Color_SECRET/);
    expect(secretNotMasked("ApiKey", MASK)).toBeNull();
  });
});

describe("connections", () => {
  it("looks a connection up as AzureWebJobs<name> then <name>, Storage when absent", () => {
    expect(connectionSettingNames("Orders")).toEqual(["AzureWebJobsOrders", "Orders"]);
    expect(connectionSettingNames("")).toEqual(["AzureWebJobsStorage", "Storage"]);
    expect(connectionSettingNames("AzureWebJobsStorage")).toEqual(["AzureWebJobsStorage"]);
  });
  it("finds a value or an identity-based group, ignoring case", () => {
    expect(hasConnection(["azurewebjobsstorage"], "AzureWebJobsStorage")).toBe(true);
    expect(hasConnection(["Orders__queueServiceUri"], "Orders")).toBe(true);
    expect(hasConnection(["AzureWebJobsOrders"], "Orders")).toBe(true);
    expect(hasConnection(["OrdersStorage"], "Orders")).toBe(false);
    expect(hasConnection([], "AzureWebJobsStorage")).toBe(false);
  });
  it("names each binding's connection once, with the default setting of its kind", () => {
    expect(
      bindingSettings([
        { type: "queueTrigger", direction: "in", name: "m", queueName: "q", connection: "" },
        { type: "queue", direction: "out", name: "o", queueName: "r", connection: "Out" },
        { type: "serviceBusTrigger", direction: "in", name: "s", queueName: "x" },
        { type: "queue", direction: "out", name: "p", queueName: "z", connection: "out" },
        { type: "http", direction: "out", name: "$return" },
      ]),
    ).toEqual([
      { name: "AzureWebJobsStorage", lookup: "connection" },
      { name: "Out", lookup: "connection" },
      { name: "AzureWebJobsServiceBus", lookup: "connection" },
    ]);
  });
  it("names an event hub's connection, RabbitMQ's setting and Kafka's references", () => {
    expect(
      bindingSettings([
        { type: "eventHubTrigger", direction: "in", name: "e", eventHubName: "h" },
        { type: "rabbitMQTrigger", direction: "in", name: "r", queueName: "q", connectionStringSetting: "Rabbit" },
        { type: "kafkaTrigger", direction: "in", name: "k", brokerList: "%Brokers%", topic: "t", password: "%KafkaPassword%" },
        { type: "kafka", direction: "out", name: "o", brokerList: "%brokers%", topic: "u" },
        { type: "timerTrigger", direction: "in", name: "t", schedule: "0 */5 * * * *" },
      ]),
    ).toEqual([
      { name: "AzureWebJobsEventHub", lookup: "connectionString" },
      { name: "Rabbit", lookup: "exact" },
      { name: "Brokers", lookup: "exact" },
      { name: "KafkaPassword", lookup: "exact" },
    ]);
    expect(settingReferences("%A%:9092,%B%")).toEqual(["A", "B"]);
    expect(settingReferences("b:9092")).toEqual([]);
  });
  it("finds a setting as its binding looks it up", () => {
    expect(hasSetting(["rabbit"], { name: "Rabbit", lookup: "exact" })).toBe(true);
    expect(hasSetting(["AzureWebJobsRabbit"], { name: "Rabbit", lookup: "exact" })).toBe(false);
    expect(hasSetting(["AzureWebJobsHub"], { name: "Hub", lookup: "connectionString" })).toBe(true);
    expect(hasSetting(["Hub__fullyQualifiedNamespace"], { name: "Hub", lookup: "connectionString" })).toBe(false);
    expect(hasSetting(["Orders__queueServiceUri"], { name: "Orders", lookup: "connection" })).toBe(true);
  });
});
