// Poison messages' pure part: what a message's body shows (hidden from this caller, empty,
// binary, or decoded), which messages stay selected when the list is read again, the replay
// request a selection asks for, and what a replay did, in words. No DOM here, so Vitest
// covers it all.

import type { Schemas } from "../../api/client";
import { isStream } from "../functions/message";
import { decodePayload, type Decoded } from "../payload";

export type PoisonQueue = Schemas["PoisonQueue"];
export type PoisonMessage = Schemas["PoisonMessage"];
export type ReplayRequest = Schemas["ReplayRequest"];
export type ReplayResult = Schemas["ReplayResult"];

/// How many of the oldest messages are listed: the most the API shows at once.
export const LISTED = 32;
/// Most messages "Replay all" moves: the most one replay request may.
export const MAX_REPLAY = 1000;

/// Where a Service Bus body that is not UTF-8 starts (the API sends it as `base64:…`).
const BINARY = "base64:";

export type BodyView =
  /// The API left it out: the caller may not list the app's settings.
  | { state: "hidden" }
  /// An empty body, or none at all (the API says when it hid one: `bodiesHidden`).
  | { state: "empty" }
  | { state: "binary"; base64: string }
  | { state: "shown"; decoded: Decoded };

/// A message's body as the view shows it. The API sends `body` only to callers who may list
/// the app's settings and says so in the queue's `bodiesHidden`: a body is hidden only then, so
/// a message that has none reads as empty, not as hidden.
export function bodyView(message: PoisonMessage, hidden: boolean): BodyView {
  if (hidden) return { state: "hidden" };
  const body = message.body;
  if (body === undefined || body === null || body === "") return { state: "empty" };
  if (body.startsWith(BINARY)) return { state: "binary", base64: body.slice(BINARY.length) };
  return { state: "shown", decoded: decodePayload(body) };
}

/// Whether the listed messages' bodies were left out for this caller: the API says so (a
/// missing body alone cannot tell hidden from absent). Nothing is hidden when nothing is listed.
export function bodiesHidden(queue: PoisonQueue): boolean {
  return queue.bodiesHidden && queue.messages.length > 0;
}

/// Whether a trigger's failed messages can be replayed one by one: a stream's dead letters are
/// replayed in order from its replay position, so the API refuses a selection (422 at
/// `messageIds`) and only "Replay all" is offered.
export function selectsMessages(triggerType: string): boolean {
  return !isStream(triggerType);
}

/// The selection after the list is read again: only messages still listed stay selected (a
/// message replayed or expired meanwhile cannot be replayed by id).
export function stillListed(selected: ReadonlySet<string>, messages: PoisonMessage[]): Set<string> {
  return new Set(messages.map((m) => m.messageId).filter((id) => selected.has(id)));
}

/// Exactly the selected messages, in the order they are listed (oldest first). Without a
/// `count` the API moves at most as many as are named.
export function selectedReplay(selected: ReadonlySet<string>, messages: PoisonMessage[]): ReplayRequest {
  return { messageIds: messages.map((m) => m.messageId).filter((id) => selected.has(id)) };
}

/// The confirmation's words for replaying `ids`: how many, which, from where to where.
export function replayPreview(ids: string[], queue: PoisonQueue, fn: string): { question: string; detail: string } {
  const n = ids.length;
  return {
    question: `Replay ${n} selected message${n === 1 ? "" : "s"}?`,
    detail:
      `${n === 1 ? "This message moves" : `These ${n} messages move`} from ${queue.poisonQueue} back to ${queue.triggerQueue}, ` +
      `each as a new message with its body unchanged, and ${fn} receives ${n === 1 ? "it" : "them"} again: ${ids.join(", ")}.`,
  };
}

/// What a replay did: how many moved where, and the named messages it did not find.
export function replayedText(result: ReplayResult, queue: PoisonQueue): string {
  const moved = `Replayed ${result.replayed} message${result.replayed === 1 ? "" : "s"} to ${queue.triggerQueue}.`;
  if (!result.notFound.length) return moved;
  return `${moved} Not found in ${queue.poisonQueue} (replayed or expired meanwhile): ${result.notFound.join(", ")}.`;
}

/// The queue's depth, in words (`#poison-depth`).
export function depthText(queue: PoisonQueue): string {
  return `${queue.approximateCount} message(s) (approximate), for ${queue.triggerQueue}.`;
}

/// What the list shows of the queue: all of it, or its oldest messages only.
export function listedText(queue: PoisonQueue): string {
  const shown = queue.messages.length;
  if (shown === 0) return "No message is waiting.";
  return shown >= queue.approximateCount ? `All ${shown} listed, oldest first.` : `The oldest ${shown} listed.`;
}
