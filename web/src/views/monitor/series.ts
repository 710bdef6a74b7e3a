// A function's invocation minutes (`…/invocations`) as chart series. The API sends every minute
// of the window (idle ones with zero counts and no percentiles): counts are drawn as they are,
// percentiles break where a minute had no attempt instead of joining its neighbours.

import type { Series } from "../scale/chart";

export interface Minute {
  minute: string;
  invocations: number;
  failures: number;
  p50Ms?: number | null;
  p95Ms?: number | null;
  p99Ms?: number | null;
}

export function countSeries(minutes: Minute[]): Series[] {
  const at = (m: Minute) => Date.parse(m.minute);
  return [
    { name: "invocations", colour: "#1f4fa8", points: minutes.map((m) => ({ at: at(m), value: m.invocations })) },
    { name: "failures", colour: "#b3261e", dashed: true, points: minutes.map((m) => ({ at: at(m), value: m.failures })) },
  ];
}

/// Percentiles as the API gives them: the upper bound of the duration bucket each falls in.
export function durationSeries(minutes: Minute[]): Series[] {
  const at = (m: Minute) => Date.parse(m.minute);
  const of = (name: string, colour: string, pick: (m: Minute) => number | null | undefined, dashed = false): Series => ({
    name,
    colour,
    dashed,
    points: minutes.map((m) => {
      const value = pick(m);
      return { at: at(m), value: typeof value === "number" ? value : null };
    }),
  });
  return [
    of("p50 ≤", "#2e7d32", (m) => m.p50Ms),
    of("p95 ≤", "#7a4b00", (m) => m.p95Ms, true),
    of("p99 ≤", "#b3261e", (m) => m.p99Ms),
  ];
}

/// The window's totals.
export function totals(minutes: Minute[]): { invocations: number; failures: number } {
  return {
    invocations: minutes.reduce((n, m) => n + m.invocations, 0),
    failures: minutes.reduce((n, m) => n + m.failures, 0),
  };
}
