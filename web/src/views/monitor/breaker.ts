// A circuit breaker's states and causes in words for people: what the function is doing now,
// not the electrical metaphor (a paused function's breaker is "open").

import type { Schemas } from "../../api/client";

type Breaker = { state: Schemas["BreakerState"]; cause?: Schemas["BreakerCause"] | null };

/// What the function is doing: "receiving", "paused", "stopped after failures", "trying one
/// message", "waiting for the handler" (unreachable: messages in hand are held), "held back"
/// (the handler kept answering 429/503).
export function breakerStatus(b: Breaker): string {
  switch (b.state) {
    case "closed":
      return "receiving";
    case "halfOpen":
      return "trying one message";
    case "open":
      if (b.cause === "paused") return "paused";
      if (b.cause === "handlerUnreachable") return "waiting for the handler";
      if (b.cause === "throttled") return "held back: the handler is busy";
      return b.cause === "failures" || b.cause === "probeFailed" ? "stopped after failures" : "stopped";
  }
}

const CAUSES: Record<Schemas["BreakerCause"], string> = {
  failures: "too many failures",
  paused: "paused by hand",
  resumed: "resumed by hand",
  cooldown: "cool-down over: trying one message",
  probeSucceeded: "the trial message succeeded",
  probeFailed: "the trial message failed",
  handlerUnreachable: "the handler took no connections",
  handlerReachable: "the handler answered again",
  throttled: "the handler kept answering 429 or 503",
};

export function causeText(cause: Schemas["BreakerCause"] | null | undefined): string {
  return cause ? CAUSES[cause] : "—";
}

/// A transition's states in the same words: the cause is the transition's, so it tells what
/// the state moved to, not what it came from.
export function transitionText(t: Pick<Schemas["BreakerTransition"], "from" | "to" | "cause">): { from: string; to: string } {
  return { from: breakerStatus({ state: t.from }), to: breakerStatus({ state: t.to, cause: t.cause }) };
}
