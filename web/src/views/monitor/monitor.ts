// Monitor: one function's invocations per minute over the last hour (attempts, failures,
// duration percentiles) and its latest failed attempts with their error and the handler's
// `Logs`, as the workers recorded them. It follows new invocations by polling every
// REFRESH_MS while it is on screen and the tab is visible. Polling, not a server-sent event
// stream: workers write telemetry in batches every second, so a push could be no fresher than a
// poll of that store, and one compressed read of a minute-per-row hour costs the API little.

import { api, type Schemas } from "../../api/client";
import { h, replace } from "../../dom";
import { loading, problemBanner, table, when } from "../common";
import { lineChart } from "../scale/chart";
import { countSeries, durationSeries, totals } from "./series";

export const REFRESH_MS = 2_000;

type Invocations = Schemas["Invocations"];

export function monitorSection(tenant: string, app: string, fn: string): HTMLElement {
  const heading = h("h2", { id: "monitor" }, `Monitor: ${fn}`);
  const updated = h("p", { class: "hint", id: "monitor-updated" });
  const figures = h("div", {}, loading("invocations"));
  const failures = h("div");
  const section = h(
    "section",
    { "aria-labelledby": "monitor", id: "monitor-section" },
    heading,
    updated,
    figures,
    h("h3", {}, "Recent failures"),
    failures,
  );
  void follow(section, { tenant, app, function: fn }, { updated, figures, failures });
  return section;
}

interface Parts {
  updated: HTMLElement;
  figures: HTMLElement;
  failures: HTMLElement;
}

async function follow(section: HTMLElement, path: { tenant: string; app: string; function: string }, parts: Parts) {
  let shownFigures = "";
  let shownFailures = "";
  // Until the section leaves the page (another view, or the function page re-rendered).
  for (let first = true; first || section.isConnected; first = false) {
    if (!document.hidden) {
      const { data, error, response } = await api.GET(
        "/v1/tenants/{tenant}/apps/{app}/functions/{function}/invocations",
        { params: { path, query: { minutes: 60, failures: 20 } } },
      );
      if (!first && !section.isConnected) return;
      if (!data) {
        replace(parts.figures, problemBanner(error, response.status));
      } else {
        // Only what changed is redrawn, so a reader's place in the failures table (a focused
        // log, a scrolled cell) survives a refresh that brought nothing new there.
        const figures = JSON.stringify(data.minutes);
        if (figures !== shownFigures) {
          drawFigures(parts.figures, data);
          shownFigures = figures;
        }
        const failed = JSON.stringify(data.failures);
        if (failed !== shownFailures) {
          drawFailures(parts.failures, data.failures);
          shownFailures = failed;
        }
        parts.updated.textContent = `Updated ${new Date().toLocaleTimeString()}; refreshes every ${REFRESH_MS / 1000} s.`;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, REFRESH_MS));
  }
}

function drawFigures(box: HTMLElement, data: Invocations): void {
  const { invocations, failures } = totals(data.minutes);
  replace(
    box,
    h("p", { id: "monitor-totals" }, `Last hour: ${invocations} invocations, ${failures} failed.`),
    lineChart("Invocations and failures per minute", countSeries(data.minutes), {
      unit: "attempts per minute",
      note: "Each retry counts as an attempt; idle minutes are zero.",
    }),
    lineChart("Duration percentiles per minute", durationSeries(data.minutes), {
      unit: "ms",
      note:
        "Percentiles are duration bucket upper bounds, not measured durations: p95 ≤ 4000 means 95 % of the minute's attempts took at most 4000 ms, the 95th somewhere in the bucket ending there. Minutes without attempts are gaps.",
    }),
  );
}

function drawFailures(box: HTMLElement, failures: Schemas["FailedInvocation"][]): void {
  type F = Schemas["FailedInvocation"];
  replace(
    box,
    table("Recent failed invocations, newest first", [
      { label: "At", cell: (f: F) => when(f.at) },
      { label: "Error", cell: (f) => f.error },
      { label: "Duration", cell: (f) => `${f.durationMs} ms` },
      { label: "Worker", cell: (f) => f.worker },
      { label: "Logs", cell: (f) => (f.logs.length ? h("pre", { class: "logs", tabindex: 0 }, f.logs.join("\n")) : "—") },
      { label: "Invocation id", cell: (f) => h("code", { class: "id" }, f.invocationId) },
    ], failures),
  );
}
