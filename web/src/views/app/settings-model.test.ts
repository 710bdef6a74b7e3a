import { describe, expect, it } from "vitest";
import {
  bindingConnections,
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
      bindingConnections([
        { type: "queueTrigger", direction: "in", name: "m", queueName: "q", connection: "" },
        { type: "queue", direction: "out", name: "o", queueName: "r", connection: "Out" },
        { type: "serviceBusTrigger", direction: "in", name: "s", queueName: "x" },
        { type: "queue", direction: "out", name: "p", queueName: "z", connection: "out" },
        { type: "http", direction: "out", name: "$return" },
      ]),
    ).toEqual(["AzureWebJobsStorage", "Out", "AzureWebJobsServiceBus"]);
  });
});
