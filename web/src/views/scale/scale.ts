// Scale: current and desired instances, the mode, a live chart of the last hour (the summed
// trigger metric — queue length — with desired and placed instances, as the scheduler sampled
// them), the decision log with each decision's reason and inputs, and the placement map
// (workers × instances). Refreshed every few seconds while the view is open.

import { api, type Schemas } from "../../api/client";
import type { Context } from "../../context";
import { h, link, replace } from "../../dom";
import { paths } from "../../router";
import { facts, json, loading, problemBanner, table, when } from "../common";
import { lineChart } from "./chart";
import { historySeries } from "./history";

const POLL_MS = 5000;

export async function renderScale(
  _ctx: Context,
  main: HTMLElement,
  tenant: string,
  app: string,
  stillShown: () => boolean,
): Promise<void> {
  const title = h("h1", {}, `${app} · scale`);
  replace(main, title, loading("the scale status"));
  const body = h("div");
  replace(main, title, h("p", {}, link(paths.app(tenant, app), `← ${app}`)), body);
  const params = { path: { tenant, app } };
  for (;;) {
    const [status, history] = await Promise.all([
      api.GET("/v1/tenants/{tenant}/apps/{app}/scale", { params: { ...params, query: { decisions: 50 } } }),
      api.GET("/v1/tenants/{tenant}/apps/{app}/scale/history", { params }),
    ]);
    if (!stillShown() || !document.body.contains(body)) return;
    if (!status.data) {
      replace(body, problemBanner(status.error, status.response.status));
      return;
    }
    draw(body, status.data, history.data, history.data ? null : problemBanner(history.error, history.response.status));
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function draw(
  body: HTMLElement,
  s: Schemas["ScaleStatus"],
  history: Schemas["ScaleHistory"] | undefined,
  historyProblem: HTMLElement | null,
): void {
  const [queue, desired, placed] = history ? historySeries(history) : [];
  const workers = [...new Set(s.placement.map((p) => p.worker))].sort();
  replace(
    body,
    facts([
      ["Instances now", h("span", { id: "current-instances" }, s.currentInstances)],
      ["Desired", h("span", { id: "desired-instances" }, s.desiredInstances)],
      ["Mode", s.mode],
    ]),
    h("h2", {}, "Last hour"),
    historyProblem ??
      h(
        "div",
        { class: "charts" },
        lineChart("Queue length", [queue]),
        lineChart("Desired and placed instances", [desired, placed]),
      ),
    h("h2", {}, "Decision log"),
    table("Scale decisions, newest first", [
      { label: "At", cell: (d: Schemas["RecordedDecision"]) => when(d.at) },
      { label: "From → to", cell: (d) => `${d.from} → ${d.to}` },
      { label: "Mode", cell: (d) => d.mode },
      { label: "Reason", cell: (d) => d.reason },
      { label: "Inputs", cell: (d) => h("details", {}, h("summary", {}, "inputs"), json(d.metrics)) },
    ], s.decisions),
    h("h2", {}, "Placement"),
    table("Placement: instances by worker", [
      { label: "Worker", cell: (w: string) => w },
      {
        label: "Instances",
        cell: (w) => s.placement.filter((p) => p.worker === w).map((p) => h("span", { class: "instance" }, `#${p.instance}`)),
      },
    ], workers),
  );
}
