// App: its handler, settings (secret values masked; revealed only through settings/list, on
// request), host config, scale limits with the TARGET_BASED_SCALING_ENABLED toggle, identity
// and diagnostics.

import { api, ifMatch, type Schemas } from "../../api/client";
import { actions, can, type Context } from "../../context";
import { h, link, replace } from "../../dom";
import { paths } from "../../router";
import { facts, json, loading, problemBanner, table, when } from "../common";

export const TARGET_BASED_SCALING = "TARGET_BASED_SCALING_ENABLED";

export async function renderApp(ctx: Context, main: HTMLElement, tenant: string, name: string): Promise<void> {
  // One heading for the view's life: focus put on it by the router stays there.
  const title = h("h1", {}, name);
  replace(main, title, loading("the app"));
  const path = { tenant, app: name };
  const [app, diagnostics] = await Promise.all([
    api.GET("/v1/tenants/{tenant}/apps/{app}", { params: { path } }),
    api.GET("/v1/tenants/{tenant}/apps/{app}/diagnostics", { params: { path } }),
  ]);
  if (!app.data) {
    replace(main, title, problemBanner(app.error, app.response.status));
    return;
  }
  const a = app.data;
  replace(
    main,
    title,
    h(
      "nav",
      { "aria-label": "App", class: "tabs" },
      link(paths.functions(tenant, name), "Functions"),
      link(paths.scale(tenant, name), "Scale"),
    ),
    h("section", { "aria-labelledby": "overview" }, h("h2", { id: "overview" }, "Overview"),
      facts([
        ["State", h("span", { class: `state state-${a.state.toLowerCase()}` }, a.state)],
        ["Handler URL", h("code", {}, a.handler.url)],
        ["Handler timeout", `${a.handler.timeoutSeconds} s`],
        ["Created", when(a.createdAt)],
        ["Updated", when(a.updatedAt)],
      ]),
    ),
    scaleSection(ctx, tenant, a),
    settingsSection(ctx, tenant, a),
    h("section", { "aria-labelledby": "identity" }, h("h2", { id: "identity" }, "Identity"),
      facts([
        ["Type", a.identity.type],
        ["User-assigned", a.identity.userAssignedIdentities.join(", ") || "—"],
        ["Principal id", a.identity.principalId ?? "—"],
        ["Client id", a.identity.clientId ?? "—"],
      ]),
    ),
    h("section", { "aria-labelledby": "host" }, h("h2", { id: "host" }, "Host config"), json(a.hostConfig)),
    diagnosticsSection(diagnostics.data, diagnostics.error, diagnostics.response.status),
  );
}

function scaleSection(ctx: Context, tenant: string, a: Schemas["App"]): HTMLElement {
  // Outlives every save, so "Saved" is announced; nothing else is redrawn (the page keeps its
  // scroll position and focus stays on the toggle).
  const status = h("div", { role: "status", class: "said", id: "scale-saved" });
  const mode = h("span", { id: "scale-mode" }, a.scale.mode);
  const toggle = h("input", {
    type: "checkbox",
    id: "target-based",
    checked: a.scale.mode === "target",
    disabled: !can(ctx, actions.appsWrite),
    onchange: async (event: Event) => {
      const on = (event.target as HTMLInputElement).checked;
      replace(status, "Saving…");
      // A merge patch touches only this setting; absent means target-based (the default).
      const { data, error, response } = await api.PATCH("/v1/tenants/{tenant}/apps/{app}", {
        params: { path: { tenant, app: a.name } },
        body: { appSettings: { [TARGET_BASED_SCALING]: on ? null : "0" } } as never,
        headers: { "Content-Type": "application/merge-patch+json", "If-Match": ifMatch(a.etag) },
      });
      if (response.ok && data) {
        a.etag = data.etag;
        mode.textContent = data.scale.mode;
        replace(status, `Saved: scale mode ${data.scale.mode}.`);
      } else {
        (event.target as HTMLInputElement).checked = !on;
        replace(status, problemBanner(error, response.status));
      }
    },
  });
  return h(
    "section",
    { "aria-labelledby": "scale" },
    h("h2", { id: "scale" }, "Scale"),
    facts([
      ["Mode", mode],
      ["Instance limit", a.scale.limit],
      ["Minimum instances", a.scale.minimumInstances],
      ["Scale on visible messages only", a.scale.visibleOnly ? "yes" : "no"],
    ]),
    h(
      "p",
      {},
      toggle,
      " ",
      h("label", { for: "target-based" }, `Target-based scaling (${TARGET_BASED_SCALING})`),
      can(ctx, actions.appsWrite) ? null : h("span", { class: "hint" }, " — your role cannot change it"),
    ),
    status,
  );
}

function settingsSection(ctx: Context, tenant: string, a: Schemas["App"]): HTMLElement {
  const names = Object.keys(a.appSettings).sort();
  const values = new Map(names.map((n) => [n, h("code", {}, a.appSettings[n])]));
  const status = h("div");
  const reveal = can(ctx, actions.settingsList)
    ? h(
        "button",
        {
          type: "button",
          class: "secondary",
          onclick: async () => {
            const { data, error, response } = await api.POST("/v1/tenants/{tenant}/apps/{app}/settings/list", {
              params: { path: { tenant, app: a.name } },
            });
            if (!data) {
              replace(status, problemBanner(error, response.status));
              return;
            }
            for (const [n, v] of Object.entries(data.appSettings)) values.get(n)?.replaceChildren(v);
            replace(status, h("p", { class: "hint", role: "status" }, "Values shown in the clear."));
          },
        },
        "Reveal values",
      )
    : null;
  return h(
    "section",
    { "aria-labelledby": "settings" },
    h("h2", { id: "settings" }, "Settings"),
    reveal,
    status,
    table("App settings", [
      { label: "Name", cell: (n: string) => h("code", {}, n) },
      { label: "Value", cell: (n: string) => values.get(n) ?? "" },
    ], names),
  );
}

function diagnosticsSection(
  d: Schemas["Diagnostics"] | undefined,
  error: unknown,
  status: number,
): HTMLElement {
  const body = d
    ? [
        h("p", { class: d.healthy ? "ok" : "bad" }, d.healthy ? "Healthy: no check in error." : "Unhealthy: a check is in error."),
        table("Checks", [
          { label: "Function", cell: (c: Schemas["Check"]) => c.function ?? "app" },
          { label: "Subject", cell: (c) => c.subject },
          { label: "Status", cell: (c) => h("span", { class: `check check-${c.status}` }, c.status) },
          { label: "Detail", cell: (c) => c.detail },
        ], d.checks),
      ]
    : [problemBanner(error, status)];
  return h("section", { "aria-labelledby": "diagnostics" }, h("h2", { id: "diagnostics" }, "Diagnostics"), body);
}
