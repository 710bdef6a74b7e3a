// A function's invocation minutes (`…/invocations`) as chart series.

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

export function durationSeries(minutes: Minute[]): Series[] {
  const at = (m: Minute) => Date.parse(m.minute);
  const of = (name: string, colour: string, pick: (m: Minute) => number | null | undefined): Series => ({
    name,
    colour,
    points: minutes
      .filter((m) => typeof pick(m) === "number")
      .map((m) => ({ at: at(m), value: pick(m) as number })),
  });
  return [
    of("p50 ms", "#2e7d32", (m) => m.p50Ms),
    of("p95 ms", "#7a4b00", (m) => m.p95Ms),
    of("p99 ms", "#b3261e", (m) => m.p99Ms),
  ];
}
