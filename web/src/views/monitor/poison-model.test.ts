import { describe, expect, it } from "vitest";
import {
  bodiesHidden,
  bodyView,
  depthText,
  listedText,
  replayedText,
  replayPreview,
  selectedReplay,
  selectsMessages,
  stillListed,
  type PoisonMessage,
  type PoisonQueue,
} from "./poison-model";

function message(messageId: string, body?: string | null): PoisonMessage {
  const m: PoisonMessage = { messageId, insertedAt: "2026-11-30T08:00:00Z", dequeueCount: 5 };
  if (body !== undefined) m.body = body;
  return m;
}

const queue = (messages: PoisonMessage[], approximateCount = messages.length, bodiesHidden = false): PoisonQueue => ({
  triggerQueue: "orders",
  poisonQueue: "orders-poison",
  approximateCount,
  messages,
  bodiesHidden,
});

describe("a poison message's body", () => {
  it("is hidden when the API says it left the bodies out", () => {
    expect(bodyView(message("a"), true)).toEqual({ state: "hidden" });
    expect(bodyView(message("a", null), true)).toEqual({ state: "hidden" });
    expect(bodyView(message("a", "x"), true)).toEqual({ state: "hidden" });
  });
  it("is empty, not hidden, when the message has none and nothing was hidden", () => {
    expect(bodyView(message("a"), false)).toEqual({ state: "empty" });
    expect(bodyView(message("a", null), false)).toEqual({ state: "empty" });
    expect(bodyView(message("a", ""), false)).toEqual({ state: "empty" });
  });
  it("is decoded where it is base64 text or JSON", () => {
    expect(bodyView(message("a", btoa('{"order":42}')), false)).toEqual({
      state: "shown",
      decoded: { kind: "JSON, decoded from base64", text: '{\n  "order": 42\n}' },
    });
    expect(bodyView(message("a", "ship it"), false)).toEqual({
      state: "shown",
      decoded: { kind: "text", text: "ship it" },
    });
  });
  it("says a Service Bus body that is not UTF-8 is binary", () => {
    expect(bodyView(message("a", "base64:AAEC"), false)).toEqual({ state: "binary", base64: "AAEC" });
  });
  it("is said to be hidden only when the API says so and something is listed", () => {
    expect(bodiesHidden(queue([message("a"), message("b")], 2, true))).toBe(true);
    expect(bodiesHidden(queue([message("a"), message("b", "")], 2, false))).toBe(false);
    expect(bodiesHidden(queue([], 0, true))).toBe(false);
  });
});

describe("selecting poison messages", () => {
  const listed = [message("m1"), message("m2"), message("m3")];
  it("is offered for queues, Service Bus and RabbitMQ, not for streams", () => {
    expect(["queueTrigger", "serviceBusTrigger", "rabbitMQTrigger"].map(selectsMessages)).toEqual([true, true, true]);
    expect(["kafkaTrigger", "eventHubTrigger"].map(selectsMessages)).toEqual([false, false]);
  });
  it("keeps only what is still listed after a refresh", () => {
    expect([...stillListed(new Set(["m3", "gone", "m1"]), listed)]).toEqual(["m1", "m3"]);
  });
  it("asks to replay exactly the selected messages, oldest first, with no count", () => {
    expect(selectedReplay(new Set(["m3", "m1"]), listed)).toEqual({ messageIds: ["m1", "m3"] });
    expect(selectedReplay(new Set(), listed)).toEqual({ messageIds: [] });
  });
  it("previews how many move, which, and where to", () => {
    const two = replayPreview(["m1", "m3"], queue(listed), "ship");
    expect(two.question).toBe("Replay 2 selected messages?");
    expect(two.detail).toBe(
      "These 2 messages move from orders-poison back to orders, each as a new message with its body unchanged, and ship receives them again: m1, m3.",
    );
    expect(replayPreview(["m2"], queue(listed), "ship").question).toBe("Replay 1 selected message?");
  });
});

describe("a replay's result and the queue in words", () => {
  it("says how many moved and which named ones were not found", () => {
    const q = queue([message("m1")]);
    expect(replayedText({ replayed: 1, messageIds: ["m1"], notFound: [] }, q)).toBe("Replayed 1 message to orders.");
    expect(replayedText({ replayed: 2, messageIds: ["m1", "m2"], notFound: ["m9"] }, q)).toBe(
      "Replayed 2 messages to orders. Not found in orders-poison (replayed or expired meanwhile): m9.",
    );
  });
  it("says whether the list holds the whole queue", () => {
    expect(depthText(queue([message("m1")], 40))).toBe("40 message(s) (approximate), for orders.");
    expect(listedText(queue([]))).toBe("No message is waiting.");
    expect(listedText(queue([message("m1"), message("m2")]))).toBe("All 2 listed, oldest first.");
    expect(listedText(queue([message("m1"), message("m2")], 40))).toBe("The oldest 2 listed.");
  });
});
