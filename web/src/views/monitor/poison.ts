// A function's poison or dead-letter messages: the queue's depth and its oldest messages, each
// body decoded where it is text or JSON (and said to be hidden, not empty, for callers who may
// not list the app's settings), a refresh, and replay — of the messages selected one by one,
// or of all — asked for with a preview of what moves, then the list read again. The actions
// only for callers whose roles allow them; the API decides every request anyway, and every
// problem it answers is shown with the field path of each error.

import { api } from "../../api/client";
import { type Context, actions, can } from "../../context";
import { h, replace } from "../../dom";
import { loading, problemReport, table, when } from "../common";
import { confirmAction } from "../confirm";
import {
  bodiesHidden,
  bodyView,
  depthText,
  listedText,
  LISTED,
  MAX_REPLAY,
  replayedText,
  replayPreview,
  selectedReplay,
  selectsMessages,
  stillListed,
  type PoisonMessage,
  type PoisonQueue,
  type ReplayRequest,
} from "./poison-model";

type Path = { tenant: string; app: string; function: string };

/// Returned at once and filled when the API answers: reaching the queue can take it a while
/// (it asks the app's storage or broker).
export function poisonSection(ctx: Context, path: Path, triggerType: string): HTMLElement {
  // Outlives every redraw, so what it is told is announced.
  const said = h("p", { role: "status", id: "poison-said", class: "said" });
  const content = h("div", {}, loading("poison messages"));
  let selected = new Set<string>();

  const load = async (message?: string) => {
    const { data, error, response } = await api.GET("/v1/tenants/{tenant}/apps/{app}/functions/{function}/poison", {
      params: { path, query: { top: LISTED } },
    });
    if (data) {
      selected = stillListed(selected, data.messages);
      replace(content, queuePart(data));
    } else {
      selected = new Set();
      // 409: the function has no queue the API can read (an HTTP trigger, or a connection it
      // cannot resolve): the reason is what the person needs.
      replace(
        content,
        h("div", { id: "poison-problem" }, h("h3", {}, "Poison queue"), problemReport(error, response.status), h("p", {}, refreshButton())),
      );
    }
    said.textContent = message ?? "";
    if (message) (content.querySelector("#poison-refresh") as HTMLButtonElement | null)?.focus();
  };

  const refreshButton = () =>
    h("button", { type: "button", id: "poison-refresh", class: "secondary", onclick: () => load(`Read again at ${new Date().toLocaleTimeString()}.`) }, "Refresh");

  const replay = async (status: HTMLElement, request: ReplayRequest, q: PoisonQueue) => {
    replace(status, "Replaying…");
    const { data, error, response } = await api.POST("/v1/tenants/{tenant}/apps/{app}/functions/{function}/poison/replay", {
      params: { path },
      body: request,
    });
    if (data) {
      selected = new Set();
      await load(replayedText(data, q));
    } else replace(status, problemReport(error, response.status));
  };

  const queuePart = (q: PoisonQueue): HTMLElement => {
    const status = h("div", { id: "poison-status" });
    const replays = can(ctx, actions.functionsPoisonReplay);
    const picks = replays && selectsMessages(triggerType);
    const replaySelected = picks
      ? h("button", { type: "button", id: "poison-replay-selected" })
      : null;
    const showSelection = () => {
      if (!replaySelected) return;
      replaySelected.textContent = `Replay selected (${selected.size})`;
      replaySelected.disabled = selected.size === 0;
    };
    showSelection();
    replaySelected?.addEventListener("click", async () => {
      const request = selectedReplay(selected, q.messages);
      const ids = request.messageIds ?? [];
      if (!ids.length) return;
      const preview = replayPreview(ids, q, path.function);
      if (await confirmAction(preview.question, preview.detail, "Replay")) await replay(status, request, q);
    });
    const count = Math.min(q.approximateCount, MAX_REPLAY);
    const replayAll =
      replays && q.approximateCount > 0
        ? h(
            "button",
            {
              type: "button",
              id: "poison-replay",
              onclick: async () => {
                const yes = await confirmAction(
                  `Replay ${count} message(s)?`,
                  `About ${count} message(s) move from ${q.poisonQueue} back to ${q.triggerQueue}, where ${path.function} receives them again.`,
                  "Replay",
                );
                if (yes) await replay(status, { count: MAX_REPLAY }, q);
              },
            },
            `Replay all to ${q.triggerQueue}`,
          )
        : null;
    const pick = (m: PoisonMessage) =>
      h("input", {
        type: "checkbox",
        class: "poison-pick",
        "aria-label": `Select message ${m.messageId}`,
        checked: selected.has(m.messageId),
        onchange: (event: Event) => {
          if ((event.target as HTMLInputElement).checked) selected.add(m.messageId);
          else selected.delete(m.messageId);
          showSelection();
        },
      });
    return h(
      "div",
      {},
      h("h3", {}, q.poisonQueue),
      h("p", { id: "poison-depth" }, depthText(q)),
      h("p", { id: "poison-listed" }, listedText(q)),
      bodiesHidden(q)
        ? h(
            "p",
            { class: "hint", id: "poison-bodies-hidden" },
            "Message bodies are hidden from you: the API shows them only to callers who may list the app's settings " +
              "(Shoal/apps/settings/list/action), since a message often carries what settings protect.",
          )
        : null,
      h("p", { class: "actions-row" }, refreshButton(), replaySelected, replayAll),
      status,
      q.messages.length
        ? table(`Oldest messages in ${q.poisonQueue}`, [
            ...(picks ? [{ label: "Select", cell: pick }] : []),
            { label: "Id", cell: (m: PoisonMessage) => h("code", { class: "id" }, m.messageId) },
            { label: "Inserted", cell: (m) => when(m.insertedAt) },
            { label: "Dequeue / delivery count", cell: (m) => m.dequeueCount },
            { label: "Reason", cell: (m) => m.deadLetterReason ?? "—" },
            { label: "Body", cell: (m) => bodyCell(m, q.bodiesHidden) },
          ], q.messages)
        : null,
    );
  };

  void load();
  return h("div", { id: "poison-section" }, said, content);
}

function bodyCell(m: PoisonMessage, hidden: boolean): HTMLElement {
  const body = bodyView(m, hidden);
  switch (body.state) {
    case "hidden":
      return h("span", { class: "hint body-hidden" }, "Hidden: needs access to the app's settings");
    case "empty":
      return h("span", { class: "hint" }, "Empty body");
    case "binary":
      return h("div", {}, h("p", { class: "hint" }, "Binary (not UTF-8), as base64"), h("pre", { class: "json", tabindex: 0 }, body.base64));
    case "shown":
      return h("div", {}, h("p", { class: "hint" }, body.decoded.kind), h("pre", { class: "json", tabindex: 0 }, body.decoded.text));
  }
}
