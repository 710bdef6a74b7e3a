// The scheduler's samples of an app (`…/scale/history`) as chart series, ending with the scale
// status read with them, so the chart's latest values are the header's.

import type { Schemas } from "../../api/client";
import type { Series } from "./chart";

export interface Now {
  at: number;
  desired: number;
  placed: number;
}

/// The history as chart series: the metric where it was read (a gap where it was not), desired
/// and placed instances, and `now` (the status beside the chart) as their last point.
export function historySeries(history: Schemas["ScaleHistory"], now?: Now): Series[] {
  const at = (s: Schemas["ScaleSample"]) => Date.parse(s.at);
  const last = history.samples.at(-1);
  const tail = now && (!last || now.at > at(last)) ? [now] : [];
  return [
    {
      name: "queue length",
      colour: "#2e7d32",
      points: history.samples.map((s) => ({ at: at(s), value: typeof s.metric === "number" ? s.metric : null })),
    },
    {
      name: "desired instances",
      colour: "#b3261e",
      points: [...history.samples.map((s) => ({ at: at(s), value: s.desiredInstances })), ...tail.map((n) => ({ at: n.at, value: n.desired }))],
    },
    {
      name: "placed instances",
      colour: "#1f4fa8",
      dashed: true,
      points: [...history.samples.map((s) => ({ at: at(s), value: s.placedInstances })), ...tail.map((n) => ({ at: n.at, value: n.placed }))],
    },
  ];
}

export interface Limits {
  /// The app's `scale.limit`.
  appLimit?: number;
  /// The tenant's `maxInstances` in effect.
  tenantMax?: number;
}

/// Why desired and placed differ, in words: the scheduler's own reason when it gave one, and
/// what bounds each figure.
export function placementNote(status: Schemas["ScaleStatus"], limits: Limits): string {
  const { desiredInstances: desired, currentInstances: placed } = status;
  const bounds = [
    "Each instance runs on its own worker, so an app has at most one instance per live worker",
    limits.appLimit !== undefined ? `desired is capped by the app's scale limit (${limits.appLimit})` : null,
    limits.tenantMax !== undefined ? `and the tenant's instance quota (${limits.tenantMax}) bounds what its apps hold together` : null,
  ]
    .filter(Boolean)
    .join("; ");
  if (desired === placed) return `Desired ${desired}, placed ${placed}: every desired instance is placed. ${bounds}.`;
  if (placed > desired) return `Desired ${desired}, placed ${placed}: extra instances are being released. ${bounds}.`;
  const why = status.waiting ? ` The scheduler says: ${status.waiting}.` : "";
  return `Desired ${desired}, placed ${placed}: ${desired - placed} wait for a worker.${why} ${bounds}.`;
}
