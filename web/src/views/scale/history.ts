// The scheduler's samples of an app (`…/scale/history`) as chart series.

import type { Schemas } from "../../api/client";
import type { Series } from "./chart";

/// The history as chart series: the metric where it was read, desired and placed instances.
export function historySeries(history: Schemas["ScaleHistory"]): Series[] {
  const at = (s: Schemas["ScaleSample"]) => Date.parse(s.at);
  return [
    {
      name: "queue length",
      colour: "#2e7d32",
      points: history.samples
        .filter((s) => typeof s.metric === "number")
        .map((s) => ({ at: at(s), value: s.metric as number })),
    },
    { name: "desired instances", colour: "#b3261e", points: history.samples.map((s) => ({ at: at(s), value: s.desiredInstances })) },
    { name: "placed instances", colour: "#1f4fa8", dashed: true, points: history.samples.map((s) => ({ at: at(s), value: s.placedInstances })) },
  ];
}
