// Monitor: one function's invocations per minute over the last hour (attempts, failures,
// duration percentiles) and its latest failed attempts with their error and the handler's
// `Logs`, as the workers recorded them.

import { api, type Schemas } from "../../api/client";
import { h, replace } from "../../dom";
import { loading, problemBanner, table, when } from "../common";
import { lineChart } from "../scale/chart";
import { countSeries, durationSeries } from "./series";

export async function monitorSection(tenant: string, app: string, fn: string): Promise<HTMLElement> {
  const section = h("section", { "aria-labelledby": "monitor", id: "monitor-section" }, h("h2", { id: "monitor" }, `Monitor: ${fn}`), loading("invocations"));
  const { data, error, response } = await api.GET(
    "/v1/tenants/{tenant}/apps/{app}/functions/{function}/invocations",
    { params: { path: { tenant, app, function: fn }, query: { minutes: 60, failures: 20 } } },
  );
  const heading = h("h2", { id: "monitor" }, `Monitor: ${fn}`);
  if (!data) {
    replace(section, heading, problemBanner(error, response.status));
    return section;
  }
  const total = data.minutes.reduce((n, m) => n + m.invocations, 0);
  const failed = data.minutes.reduce((n, m) => n + m.failures, 0);
  type F = Schemas["FailedInvocation"];
  replace(
    section,
    heading,
    h("p", { id: "monitor-totals" }, `Last hour: ${total} invocations, ${failed} failed.`),
    lineChart("Invocations and failures per minute", countSeries(data.minutes)),
    lineChart("Duration percentiles per minute (ms)", durationSeries(data.minutes)),
    h("h3", {}, "Recent failures"),
    table("Recent failed invocations, newest first", [
      { label: "At", cell: (f: F) => when(f.at) },
      { label: "Error", cell: (f) => f.error },
      { label: "Duration", cell: (f) => `${f.durationMs} ms` },
      { label: "Worker", cell: (f) => f.worker },
      { label: "Logs", cell: (f) => (f.logs.length ? h("pre", { class: "logs", tabindex: 0 }, f.logs.join("\n")) : "—") },
    ], data.failures),
  );
  return section;
}
