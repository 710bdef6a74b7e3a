// Reliability: a function's circuit breaker (state, why, the failures that opened it, its
// history) with pause and resume, and its poison or dead-letter queue (depth, the oldest
// messages, bodies only for settings readers) with replay — the actions only for callers whose
// roles allow them; the API decides every request anyway.

import { api, type Schemas } from "../../api/client";
import { type Context, actions, can } from "../../context";
import { h, replace } from "../../dom";
import { facts, loading, problemBanner, table, when } from "../common";

/// Returned at once and filled in when both reads answer: reaching the poison queue can take
/// the API a while (it asks the app's storage), and the rest of the page need not wait for it.
export function reliabilitySection(ctx: Context, tenant: string, app: string, fn: string): HTMLElement {
  const section = h("section", { "aria-labelledby": "reliability", id: "reliability-section" }, loading("circuit breaker"));
  void fill(ctx, section, { tenant, app, function: fn });
  return section;
}

async function fill(ctx: Context, section: HTMLElement, path: Path): Promise<void> {
  const [breaker, poison] = await Promise.all([
    api.GET("/v1/tenants/{tenant}/apps/{app}/functions/{function}/breaker", { params: { path } }),
    api.GET("/v1/tenants/{tenant}/apps/{app}/functions/{function}/poison", { params: { path, query: { top: 10 } } }),
  ]);
  replace(
    section,
    h("h2", { id: "reliability" }, "Circuit breaker and poison messages"),
    breaker.data ? breakerPart(ctx, path, breaker.data) : problemBanner(breaker.error, breaker.response.status),
    // 409: the trigger has no poison queue (an HTTP trigger): nothing to show.
    poison.data
      ? poisonPart(ctx, path, poison.data)
      : poison.response.status === 409
        ? null
        : problemBanner(poison.error, poison.response.status),
  );
}

type Path = { tenant: string; app: string; function: string };

function breakerPart(ctx: Context, path: Path, b: Schemas["Breaker"]): HTMLElement {
  const status = h("div", { role: "status" });
  const act = (label: string, action: string, op: "pause" | "resume") =>
    can(ctx, action)
      ? h(
          "button",
          {
            type: "button",
            id: `breaker-${op}`,
            onclick: async () => {
              replace(status, `${label}…`);
              const url = op === "pause"
                ? "/v1/tenants/{tenant}/apps/{app}/functions/{function}/pause"
                : "/v1/tenants/{tenant}/apps/{app}/functions/{function}/resume";
              const { error, response } = await api.POST(url, { params: { path } });
              if (response.ok) ctx.refresh();
              else replace(status, problemBanner(error, response.status));
            },
          },
          label,
        )
      : null;
  type T = Schemas["BreakerTransition"];
  return h(
    "div",
    {},
    facts([
      ["State", h("strong", { id: "breaker-state" }, b.state)],
      ["Why", b.cause ?? "—"],
      ["Since", when(b.changedAt)],
      ["Rule", `more than ${b.settings.failureThreshold} final failures in ${b.settings.window}${b.settings.enabled ? "" : " (counting off)"}`],
      ["Half-open", b.settings.halfOpen ? `after ${b.settings.cooldown}` : "no: stays open until resumed"],
    ]),
    h(
      "p",
      {},
      b.state === "closed" ? act("Pause", actions.functionsPause, "pause") : act("Resume", actions.functionsResume, "resume"),
    ),
    status,
    b.failures.length
      ? table(b.state === "closed" ? "Latest final failures" : "The failures that opened it", [
          { label: "At", cell: (f: Schemas["Failure"]) => when(f.at) },
          { label: "Reason", cell: (f) => f.reason },
        ], b.failures)
      : null,
    b.transitions.length
      ? table("Transitions, newest first", [
          { label: "At", cell: (t: T) => when(t.at) },
          { label: "From", cell: (t) => t.from },
          { label: "To", cell: (t) => t.to },
          { label: "Why", cell: (t) => t.cause },
          { label: "By", cell: (t) => t.actor },
        ], b.transitions)
      : null,
  );
}

function poisonPart(ctx: Context, path: Path, q: Schemas["PoisonQueue"]): HTMLElement {
  const status = h("div", { role: "status" });
  const replay = can(ctx, actions.functionsPoisonReplay) && q.approximateCount > 0
    ? h(
        "button",
        {
          type: "button",
          id: "poison-replay",
          onclick: async () => {
            replace(status, "Replaying…");
            const { data, error, response } = await api.POST(
              "/v1/tenants/{tenant}/apps/{app}/functions/{function}/poison/replay",
              { params: { path }, body: { count: 1000 } as never },
            );
            if (data) ctx.refresh();
            else replace(status, problemBanner(error, response.status));
          },
        },
        "Replay all to the trigger queue",
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
          { label: "Deliveries", cell: (m) => m.dequeueCount },
          { label: "Reason", cell: (m) => m.deadLetterReason ?? "—" },
          { label: "Body", cell: (m) => (m.body === undefined || m.body === null ? h("span", { class: "hint" }, "hidden: needs settings access") : h("code", {}, m.body)) },
        ], q.messages)
      : null,
  );
}
