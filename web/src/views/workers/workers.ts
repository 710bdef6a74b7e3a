// Workers (platform scope): liveness, capacity, assignments and listener counters from each
// worker's latest heartbeat.

import { api, type Schemas } from "../../api/client";
import type { Context } from "../../context";
import { h, replace } from "../../dom";
import { loading, problemBanner, table, when } from "../common";

export async function renderWorkers(_ctx: Context, main: HTMLElement): Promise<void> {
  const title = h("h1", {}, "Workers");
  replace(main, title, loading("workers"));
  const { data, error, response } = await api.GET("/v1/workers", { params: { query: { limit: 1000 } } });
  if (!data) {
    replace(main, title, problemBanner(error, response.status));
    return;
  }
  type W = Schemas["Worker"];
  replace(
    main,
    title,
    table("Workers", [
      { label: "Name", cell: (w: W) => w.name },
      { label: "State", cell: (w) => w.state },
      { label: "Alive", cell: (w) => h("span", { class: w.alive ? "ok" : "bad" }, w.alive ? "alive" : "dead") },
      { label: "Capacity", cell: (w) => `${w.assignments.length} / ${w.capacity}` },
      { label: "Last heartbeat", cell: (w) => when(w.lastHeartbeat) },
      { label: "Version", cell: (w) => w.version },
    ], data.items),
    data.items.map((w) =>
      h(
        "section",
        {},
        h("h2", {}, w.name),
        table(`Assignments of ${w.name}`, [
          { label: "Tenant", cell: (a: Schemas["WorkerAssignment"]) => a.tenant },
          { label: "App", cell: (a) => a.app },
          { label: "Instance", cell: (a) => a.instance },
          { label: "Epoch", cell: (a) => a.epoch },
        ], w.assignments),
        table(`Listeners of ${w.name}`, [
          { label: "App", cell: (l: Schemas["ListenerReport"]) => `${l.tenant}/${l.app}#${l.instance}` },
          { label: "Function", cell: (l) => l.function },
          { label: "Trigger", cell: (l) => `${l.trigger} ${l.source}` },
          { label: "Status", cell: (l) => l.status },
          { label: "Received", cell: (l) => l.received },
          { label: "Succeeded", cell: (l) => l.succeeded },
          { label: "Failed", cell: (l) => l.failed },
        ], w.listeners),
      ),
    ),
  );
}
