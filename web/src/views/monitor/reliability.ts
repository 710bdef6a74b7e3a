// Reliability: a function's circuit breaker (what the function is doing, why, the failures that
// stopped it, its history) with pause and resume, and its poison or dead-letter messages
// (poison.ts) — the actions only for callers whose roles allow them, each asked for
// confirmation; the API decides every request anyway. A queue the API cannot read (no queue
// trigger, a connection it cannot resolve, the storage service failing) is said, not hidden.

import { api, type Schemas } from "../../api/client";
import { type Context, actions, can } from "../../context";
import { h, replace } from "../../dom";
import { facts, loading, problemReport, table, when } from "../common";
import { confirmAction } from "../confirm";
import { breakerStatus, causeText, transitionText } from "./breaker";
import { poisonSection } from "./poison";

/// Returned at once and filled in when the reads answer; the breaker and the poison messages
/// load apart, since reaching the poison queue can take the API a while (it asks the app's
/// storage) and the breaker need not wait for it.
export function reliabilitySection(ctx: Context, tenant: string, app: string, fn: string, triggerType: string): HTMLElement {
  const path = { tenant, app, function: fn };
  const content = h("div", {}, loading("circuit breaker"));
  // Outlives every redraw, so what it is told is announced.
  const said = h("p", { role: "status", id: "reliability-said", class: "said" });
  const section = h(
    "section",
    { "aria-labelledby": "reliability", id: "reliability-section" },
    h("h2", { id: "reliability" }, "Circuit breaker and poison messages"),
    said,
    content,
    poisonSection(ctx, path, triggerType),
  );
  void fill(ctx, { content, said }, path);
  return section;
}

type Path = { tenant: string; app: string; function: string };

/// Reads the breaker and draws it in place (the page keeps its scroll position); `message`,
/// after an action, is announced once it is drawn.
async function fill(ctx: Context, box: { content: HTMLElement; said: HTMLElement }, path: Path, message?: string): Promise<void> {
  const breaker = await api.GET("/v1/tenants/{tenant}/apps/{app}/functions/{function}/breaker", { params: { path } });
  const redraw = (next: string) => fill(ctx, box, path, next);
  replace(box.content, breaker.data ? breakerPart(ctx, path, breaker.data, redraw) : problemReport(breaker.error, breaker.response.status));
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
          else replace(status, problemReport(error, response.status));
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
