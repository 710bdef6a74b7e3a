// Scale: current and desired instances and why they differ (one instance per worker, the app's
// limit, the tenant's quota, the scheduler's own reason), the mode, a live chart of the last
// hour (the summed trigger metric — queue length — with desired and placed instances, as the
// scheduler sampled them, ending with the figures of the header), the decision log with each
// decision's reason and inputs, and the placement map (workers × instances). Refreshed every
// few seconds while the view is open.

import { api, type Schemas } from "../../api/client";
import type { Context } from "../../context";
import { h, link, replace } from "../../dom";
import { paths } from "../../router";
import { facts, json, loading, problemBanner, table, when } from "../common";
import { lineChart } from "./chart";
import { historySeries, placementNote, type Limits } from "./history";

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
  // What bounds the desired count changes rarely: read once, and leave out what is not readable.
  const [appRead, tenantRead] = await Promise.all([
    api.GET("/v1/tenants/{tenant}/apps/{app}", { params }),
    api.GET("/v1/tenants/{tenant}", { params: { path: { tenant } } }),
  ]);
  const limits: Limits = {
    appLimit: appRead.data?.scale.limit,
    tenantMax: tenantRead.data?.effectiveLimits.maxInstances ?? undefined,
  };
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
    draw(body, status.data, limits, history.data, history.data ? null : problemBanner(history.error, history.response.status));
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function draw(
  body: HTMLElement,
  s: Schemas["ScaleStatus"],
  limits: Limits,
  history: Schemas["ScaleHistory"] | undefined,
  historyProblem: HTMLElement | null,
): void {
  const now = { at: Date.now(), desired: s.desiredInstances, placed: s.currentInstances };
  const [queue, desired, placed] = history ? historySeries(history, now) : [];
  const workers = [...new Set(s.placement.map((p) => p.worker))].sort();
  replace(
    body,
    facts([
      ["Instances now", h("span", { id: "current-instances" }, s.currentInstances)],
      ["Desired", h("span", { id: "desired-instances" }, s.desiredInstances)],
      ["Mode", s.mode],
    ]),
    h("p", { id: "placement-note", class: "hint" }, placementNote(s, limits)),
    h("h2", {}, "Last hour"),
    historyProblem ??
      h(
        "div",
        { class: "charts" },
        lineChart("Queue length", [queue], {
          unit: "messages",
          note: "The trigger functions' summed reading, every 10 s; a gap where none could be read.",
        }),
        lineChart("Desired and placed instances", [desired, placed], {
          unit: "instances",
          note: "Sampled every 10 s; the last point is now, as above.",
        }),
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
