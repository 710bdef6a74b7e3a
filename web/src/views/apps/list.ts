// Apps: every app of the tenant with its state, scale mode, instances now/desired and health,
// filtered and sorted in place; a form to create one for callers who may write apps. Instances
// and health come with the list itself (`expand=status`): one request per page of 1,000 apps,
// never one per app.

import { api, type Schemas } from "../../api/client";
import { actions, can, type Context } from "../../context";
import { h, link, replace } from "../../dom";
import { createRefused, placeErrors } from "../../problem";
import { paths } from "../../router";
import { loading, problemBanner } from "../common";
import { filterAndSort, type AppRow, type Health, type ListOptions, type SortKey } from "./filter";

const HEALTH_TEXT: Record<Health, string> = { healthy: "Healthy", warning: "Warning", error: "Error" };

async function allApps(tenant: string): Promise<{ items: Schemas["AppListItem"][] } | { error: unknown; status: number }> {
  const items: Schemas["AppListItem"][] = [];
  let continuationToken: string | undefined;
  do {
    const { data, error, response } = await api.GET("/v1/tenants/{tenant}/apps", {
      params: { path: { tenant }, query: { limit: 1000, continuationToken, expand: "status" } },
    });
    if (!data) return { error, status: response.status };
    items.push(...data.items);
    continuationToken = data.continuationToken ?? undefined;
  } while (continuationToken);
  return { items };
}

export async function renderApps(ctx: Context, main: HTMLElement, tenant: string): Promise<void> {
  // One heading for the view's life: focus put on it by the router stays there.
  const title = h("h1", {}, "Apps");
  replace(main, title, loading("apps"));
  const loaded = await allApps(tenant);
  if ("error" in loaded) {
    replace(main, title, problemBanner(loaded.error, loaded.status));
    return;
  }
  const rows: AppRow[] = loaded.items.map((app) => ({
    name: app.name,
    state: app.state,
    mode: app.scale.mode,
    current: app.status?.currentInstances ?? null,
    desired: app.status?.desiredInstances ?? null,
    health: app.status?.health.state ?? null,
    reasons: app.status?.health.reasons ?? [],
  }));
  const options: ListOptions = { text: "", state: "", health: "", sort: "name", descending: false };
  const body = h("tbody");
  const count = h("p", { role: "status", class: "hint", id: "apps-count" });
  const draw = () => {
    const shown = filterAndSort(rows, options);
    count.textContent = `${shown.length} of ${rows.length} apps`;
    replace(
      body,
      shown.map((row) =>
        h(
          "tr",
          {},
          h("th", { scope: "row" }, link(paths.app(tenant, row.name), row.name)),
          h("td", {}, h("span", { class: `state state-${row.state.toLowerCase()}` }, row.state)),
          h("td", {}, row.mode),
          h("td", { class: "num" }, row.current ?? "–"),
          h("td", { class: "num" }, row.desired ?? "–"),
          h("td", {}, healthCell(tenant, row)),
        ),
      ),
    );
  };
  const states = [...new Set(rows.map((r) => r.state))].sort();
  const controls = h(
    "div",
    { class: "controls" },
    h("label", { for: "apps-filter" }, "Filter"),
    h("input", {
      id: "apps-filter",
      type: "search",
      placeholder: "name contains…",
      oninput: (e: Event) => {
        options.text = (e.target as HTMLInputElement).value;
        draw();
      },
    }),
    h("label", { for: "apps-state" }, "State"),
    h(
      "select",
      {
        id: "apps-state",
        onchange: (e: Event) => {
          options.state = (e.target as HTMLSelectElement).value;
          draw();
        },
      },
      h("option", { value: "" }, "any"),
      states.map((s) => h("option", { value: s }, s)),
    ),
    h("label", { for: "apps-health" }, "Health"),
    h(
      "select",
      {
        id: "apps-health",
        onchange: (e: Event) => {
          options.health = (e.target as HTMLSelectElement).value as Health | "";
          draw();
        },
      },
      h("option", { value: "" }, "any"),
      (Object.keys(HEALTH_TEXT) as Health[]).map((s) => h("option", { value: s }, HEALTH_TEXT[s])),
    ),
    h("label", { for: "apps-sort" }, "Sort by"),
    h(
      "select",
      {
        id: "apps-sort",
        onchange: (e: Event) => {
          const [key, dir] = (e.target as HTMLSelectElement).value.split(":");
          options.sort = key as SortKey;
          options.descending = dir === "desc";
          draw();
        },
      },
      h("option", { value: "name:asc" }, "name"),
      h("option", { value: "state:asc" }, "state"),
      h("option", { value: "current:desc" }, "instances now (most first)"),
      h("option", { value: "desired:desc" }, "desired instances (most first)"),
      h("option", { value: "health:desc" }, "health (worst first)"),
    ),
  );
  const list =
    rows.length === 0
      ? h("p", { class: "empty" }, "No apps in this tenant yet.")
      : h(
          "div",
          { class: "table-wrap", tabindex: 0, role: "region", "aria-label": `Apps of ${tenant}` },
          h(
            "table",
            { id: "apps" },
            h("caption", {}, `Apps of ${tenant}`),
            h(
              "thead",
              {},
              h(
                "tr",
                {},
                ["Name", "State", "Scale mode", "Instances now", "Desired", "Health"].map((c) =>
                  h("th", { scope: "col" }, c),
                ),
              ),
            ),
            body,
          ),
        );
  replace(
    main,
    title,
    can(ctx, actions.appsWrite) ? createForm(ctx, tenant) : null,
    rows.length ? controls : null,
    rows.length ? count : null,
    list,
  );
  draw();
}

/// The health state, its reasons as the cell's description, and a link to the diagnostics
/// (on the app's page) when there is something to see.
function healthCell(tenant: string, row: AppRow): HTMLElement | string {
  if (!row.health) return "–";
  const label = h("span", { class: `health health-${row.health}` }, HEALTH_TEXT[row.health]);
  if (row.reasons.length === 0) return label;
  return h(
    "span",
    {},
    link(paths.app(tenant, row.name), label),
    h("span", { class: "hint health-reasons" }, ` ${row.reasons.join("; ")}`),
  );
}

function createForm(ctx: Context, tenant: string): HTMLElement {
  const fields = ["name", "handler.url"] as const;
  const inputs = {
    name: h("input", { id: "new-app-name", name: "name", required: true, "aria-describedby": "new-app-name-error" }),
    "handler.url": h("input", {
      id: "new-app-url",
      name: "handler.url",
      type: "url",
      required: true,
      placeholder: "https://handler.example.com/api",
      "aria-describedby": "new-app-url-error",
    }),
  };
  const errors = {
    name: h("p", { id: "new-app-name-error", class: "field-error" }),
    "handler.url": h("p", { id: "new-app-url-error", class: "field-error" }),
  };
  const banner = h("div");
  const form = h(
    "form",
    {
      class: "inline-form",
      "aria-label": "New app",
      onsubmit: async (event: Event) => {
        event.preventDefault();
        for (const f of fields) {
          errors[f].textContent = "";
          inputs[f].removeAttribute("aria-invalid");
        }
        replace(banner);
        const app = inputs.name.value.trim();
        const { error, response } = await api.PUT("/v1/tenants/{tenant}/apps/{app}", {
          params: { path: { tenant, app } },
          body: { handler: { url: inputs["handler.url"].value.trim() } },
          // Create only: an existing app of that name is a 412, never replaced.
          headers: { "If-None-Match": "*" },
        });
        if (response.ok) {
          ctx.navigate(paths.app(tenant, app));
          return;
        }
        const taken = createRefused(response.status, "An app", app);
        if (taken) {
          errors.name.textContent = taken;
          inputs.name.setAttribute("aria-invalid", "true");
          inputs.name.focus();
          return;
        }
        const problem = error as { errors?: { path: string; message: string }[] } | undefined;
        // A bad name is reported on the path parameter `app`.
        const mapped = (problem?.errors ?? []).map((e) => ({ ...e, path: e.path === "app" ? "name" : e.path }));
        const { byField, unplaced } = placeErrors(mapped, fields);
        for (const [field, messages] of byField) {
          const f = field as (typeof fields)[number];
          errors[f].textContent = messages.join("; ");
          inputs[f].setAttribute("aria-invalid", "true");
        }
        if (byField.size === 0 || unplaced.length) replace(banner, problemBanner(error, response.status));
      },
    },
    h("h2", {}, "New app"),
    h("label", { for: "new-app-name" }, "Name"),
    inputs.name,
    errors.name,
    h("label", { for: "new-app-url" }, "Handler URL"),
    inputs["handler.url"],
    errors["handler.url"],
    h("button", { type: "submit" }, "Create app"),
    banner,
  );
  return h("details", { class: "create" }, h("summary", {}, "New app"), form);
}
