// Reliability: a function's circuit breaker (what the function is doing, why, the failures that
// stopped it, its history) with pause and resume, and its poison or dead-letter queue (depth,
// the oldest messages, bodies only for settings readers) with replay — the actions only for
// callers whose roles allow them, each asked for confirmation; the API decides every request
// anyway. A queue the API cannot read (no queue trigger, a connection it cannot resolve, the
// storage service failing) is said, not hidden.

import { api, type Schemas } from "../../api/client";
import { type Context, actions, can } from "../../context";
import { h, replace } from "../../dom";
import { facts, loading, problemBanner, table, when } from "../common";
import { confirmAction } from "../confirm";
import { breakerStatus, causeText, transitionText } from "./breaker";

/// Returned at once and filled in when both reads answer: reaching the poison queue can take
/// the API a while (it asks the app's storage), and the rest of the page need not wait for it.
export function reliabilitySection(ctx: Context, tenant: string, app: string, fn: string): HTMLElement {
  const content = h("div", {}, loading("circuit breaker"));
  // Outlives every redraw, so what it is told is announced.
  const said = h("p", { role: "status", id: "reliability-said", class: "said" });
  const section = h(
    "section",
    { "aria-labelledby": "reliability", id: "reliability-section" },
    h("h2", { id: "reliability" }, "Circuit breaker and poison messages"),
    said,
    content,
  );
  void fill(ctx, { content, said }, { tenant, app, function: fn });
  return section;
}

type Path = { tenant: string; app: string; function: string };

/// Reads both and draws them in place (the page keeps its scroll position); `message`, after
/// an action, is announced once they are drawn.
async function fill(ctx: Context, box: { content: HTMLElement; said: HTMLElement }, path: Path, message?: string): Promise<void> {
  const [breaker, poison] = await Promise.all([
    api.GET("/v1/tenants/{tenant}/apps/{app}/functions/{function}/breaker", { params: { path } }),
    api.GET("/v1/tenants/{tenant}/apps/{app}/functions/{function}/poison", { params: { path, query: { top: 10 } } }),
  ]);
  const redraw = (next: string) => fill(ctx, box, path, next);
  replace(
    box.content,
    breaker.data ? breakerPart(ctx, path, breaker.data, redraw) : problemBanner(breaker.error, breaker.response.status),
    poison.data
      ? poisonPart(ctx, path, poison.data, redraw)
      : h(
          "div",
          { id: "poison-problem" },
          h("h3", {}, "Poison queue"),
          // 409: the function has no queue the API can read (an HTTP trigger, or a connection
          // it cannot resolve): the reason is what the person needs.
          problemBanner(poison.error, poison.response.status),
        ),
  );
  box.said.textContent = message ?? "";
}

function breakerPart(ctx: Context, path: Path, b: Schemas["Breaker"], redraw: (said: string) => Promise<void>): HTMLElement {
  const status = h("div", { role: "status" });
  const fn = path.function;
  const act = (op: "pause" | "resume") => {
    const allowed = can(ctx, op === "pause" ? actions.functionsPause : actions.functionsResume);
    if (!allowed) return null;
    const label = op === "pause" ? "Pause" : "Resume";
    return h(
      "button",
      {
        type: "button",
        id: `breaker-${op}`,
        onclick: async () => {
          const yes =
            op === "pause"
              ? await confirmAction(
                  `Pause ${fn}?`,
                  `${fn} stops receiving messages on every worker until someone resumes it. Messages wait in its queue meanwhile.`,
                  "Pause",
                )
              : await confirmAction(`Resume ${fn}?`, `${fn} starts receiving messages again, its backlog first.`, "Resume");
          if (!yes) return;
          replace(status, op === "pause" ? "Pausing…" : "Resuming…");
          const url = op === "pause"
            ? "/v1/tenants/{tenant}/apps/{app}/functions/{function}/pause"
            : "/v1/tenants/{tenant}/apps/{app}/functions/{function}/resume";
          const { error, response } = await api.POST(url, { params: { path } });
          if (response.ok) await redraw(op === "pause" ? `Paused ${fn}.` : `Resumed ${fn}.`);
          else replace(status, problemBanner(error, response.status));
        },
      },
      label,
    );
  };
  type T = Schemas["BreakerTransition"];
  return h(
    "div",
    {},
    facts([
      ["State", h("strong", { id: "breaker-state", "data-state": b.state }, breakerStatus(b))],
      ["Why", causeText(b.cause)],
      ["Since", when(b.changedAt)],
      ["Rule", `stops after more than ${b.settings.failureThreshold} final failures in ${b.settings.window}${b.settings.enabled ? "" : " (counting off)"}`],
      ["Trying again", b.settings.halfOpen ? `one message after ${b.settings.cooldown}` : "no: stays stopped until resumed"],
    ]),
    h("p", {}, b.state === "closed" ? act("pause") : act("resume")),
    status,
    b.failures.length
      ? table(b.state === "closed" ? "Latest final failures" : "The failures that stopped it", [
          { label: "At", cell: (f: Schemas["Failure"]) => when(f.at) },
          { label: "Reason", cell: (f) => f.reason },
        ], b.failures)
      : null,
    b.transitions.length
      ? table("Changes, newest first", [
          { label: "At", cell: (t: T) => when(t.at) },
          { label: "From", cell: (t) => transitionText(t).from },
          { label: "To", cell: (t) => transitionText(t).to },
          { label: "Why", cell: (t) => causeText(t.cause) },
          { label: "By", cell: (t) => t.actor },
        ], b.transitions)
      : null,
  );
}

function poisonPart(ctx: Context, path: Path, q: Schemas["PoisonQueue"], redraw: (said: string) => Promise<void>): HTMLElement {
  const status = h("div", { role: "status" });
  const count = Math.min(q.approximateCount, 1000);
  const replay = can(ctx, actions.functionsPoisonReplay) && q.approximateCount > 0
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
            if (!yes) return;
            replace(status, "Replaying…");
            const { data, error, response } = await api.POST(
              "/v1/tenants/{tenant}/apps/{app}/functions/{function}/poison/replay",
              { params: { path }, body: { count: 1000 } as never },
            );
            if (data) await redraw(`Replayed ${data.replayed} message(s) to ${q.triggerQueue}.`);
            else replace(status, problemBanner(error, response.status));
          },
        },
        `Replay all to ${q.triggerQueue}`,
      )
    : null;
  type M = Schemas["PoisonMessage"];
  return h(
    "div",
    {},
    h("h3", {}, `${q.poisonQueue}`),
    h("p", { id: "poison-depth" }, `${q.approximateCount} message(s) (approximate), for ${q.triggerQueue}.`),
    replay,
    status,
    q.messages.length
      ? table("Oldest poison messages", [
          { label: "Id", cell: (m: M) => m.messageId },
          { label: "Inserted", cell: (m) => when(m.insertedAt) },
          { label: "Dequeue / delivery count", cell: (m) => m.dequeueCount },
          { label: "Reason", cell: (m) => m.deadLetterReason ?? "—" },
          { label: "Body", cell: (m) => (m.body === undefined || m.body === null ? h("span", { class: "hint" }, "hidden: needs settings access") : h("code", {}, m.body)) },
        ], q.messages)
      : null,
  );
}
