// Tenants (platform administrators): every tenant with the quotas that apply to it (its own, or
// the platform's default where it sets none), and the way into its apps. Callers whose roles
// allow it (`GET /v1/me` at `/`) create a tenant (never replacing one: `If-None-Match: *`) and
// delete one after asking (under the ETag the list showed). A write renders the whole route
// again, since the header's tenant switcher lists the tenants too; what was done is said then.

import { api, ifMatch, type Schemas } from "../../api/client";
import { actions, can, type Context } from "../../context";
import { h, link, replace } from "../../dom";
import { createRefused } from "../../problem";
import { paths } from "../../router";
import { loading, problemBanner, table, when, type Column } from "../common";
import { confirmAction } from "../confirm";
import { fieldForm } from "../form";
import { tenantBody, tenantDeletionDetail, tenantErrors } from "./tenants-model";

type T = Schemas["Tenant"];

/// What the last write did, said once the view is drawn again.
let pending = "";

export async function renderTenants(ctx: Context, main: HTMLElement): Promise<void> {
  const title = h("h1", {}, "Tenants");
  // In the page before it is told anything, so what it is told is announced.
  const said = h("div", { role: "status", id: "tenants-said", class: "said" });
  replace(main, title, said, loading("tenants"));
  const { data, error, response } = await api.GET("/v1/tenants", { params: { query: { limit: 1000 } } });
  if (!data) {
    replace(main, title, said, problemBanner(error, response.status));
    return;
  }
  type Limit = keyof T["effectiveLimits"];
  // The value that applies, marked when it is the platform's default rather than the tenant's.
  const quota = (t: T, limit: Limit) =>
    t.limits[limit] == null ? `${t.effectiveLimits[limit]} (default)` : `${t.effectiveLimits[limit]}`;
  const status = h("div");
  const columns: Column<T>[] = [
    { label: "Name", cell: (t) => link(paths.apps(t.name), t.name) },
    { label: "Display name", cell: (t) => t.displayName },
    { label: "Max apps", cell: (t) => quota(t, "maxApps") },
    { label: "Max instances", cell: (t) => quota(t, "maxInstances") },
    { label: "Functions per app", cell: (t) => quota(t, "maxFunctionsPerApp") },
    { label: "Created", cell: (t) => when(t.createdAt) },
  ];
  if (can(ctx, actions.tenantsDelete)) {
    columns.push({ label: "Delete", cell: (t) => deleteButton(ctx, t, status) });
  }
  replace(
    main,
    title,
    said,
    can(ctx, actions.tenantsWrite) ? createForm(ctx) : null,
    status,
    table("Tenants", columns, data.items),
  );
  said.textContent = pending;
  pending = "";
}

function deleteButton(ctx: Context, t: T, status: HTMLElement): HTMLElement {
  return h(
    "button",
    {
      type: "button",
      class: "secondary",
      "aria-label": `Delete tenant ${t.name}`,
      onclick: async () => {
        if (!(await confirmAction(`Delete the tenant ${t.name}?`, tenantDeletionDetail(t.name), "Delete tenant"))) return;
        replace(status);
        const { error, response } = await api.DELETE("/v1/tenants/{tenant}", {
          params: { path: { tenant: t.name } },
          headers: { "If-Match": ifMatch(t.etag) },
        });
        if (response.ok) {
          pending = `Deleted the tenant ${t.name}.`;
          ctx.refresh();
          return;
        }
        replace(status, problemBanner(error, response.status));
      },
    },
    "Delete",
  );
}

function createForm(ctx: Context): HTMLElement {
  const name = h("input", { name: "name", required: true, autocomplete: "off", spellcheck: "false" });
  const displayName = h("input", { name: "displayName", autocomplete: "off" });
  const form = fieldForm({
    id: "new-tenant",
    title: "New tenant",
    fields: [
      { path: "name", label: "Tenant name", input: name },
      { path: "displayName", label: "Display name", input: displayName, hint: "Optional: the name, if left empty." },
    ],
    submit: "Create tenant",
    heading: "h2",
    onSubmit: async (f) => {
      const n = name.value.trim();
      const { error, response } = await api.PUT("/v1/tenants/{tenant}", {
        params: { path: { tenant: n } },
        body: tenantBody(displayName.value),
        // Create only: an existing tenant of that name is a 412, never replaced.
        headers: { "If-None-Match": "*" },
      });
      if (response.ok) {
        pending = `Created the tenant ${n}.`;
        ctx.refresh();
        return;
      }
      const taken = createRefused(response.status, "A tenant", n);
      if (taken) return f.fail("name", taken);
      const problem = error as { errors?: { path: string; message: string }[] } | undefined;
      f.refuse(error, response.status, tenantErrors(problem?.errors ?? []));
    },
  });
  return h("details", { class: "create" }, h("summary", {}, "New tenant"), form.el);
}
