// Tenants (platform administrators): every tenant with the quotas that apply to it (its own, or
// the platform's default where it sets none), and the way into its apps.

import { api, type Schemas } from "../../api/client";
import type { Context } from "../../context";
import { h, link, replace } from "../../dom";
import { paths } from "../../router";
import { loading, problemBanner, table, when } from "../common";

export async function renderTenants(_ctx: Context, main: HTMLElement): Promise<void> {
  const title = h("h1", {}, "Tenants");
  replace(main, title, loading("tenants"));
  const { data, error, response } = await api.GET("/v1/tenants", { params: { query: { limit: 1000 } } });
  if (!data) {
    replace(main, title, problemBanner(error, response.status));
    return;
  }
  type T = Schemas["Tenant"];
  type Limit = keyof T["effectiveLimits"];
  // The value that applies, marked when it is the platform's default rather than the tenant's.
  const quota = (t: T, limit: Limit) =>
    t.limits[limit] == null ? `${t.effectiveLimits[limit]} (default)` : `${t.effectiveLimits[limit]}`;
  replace(
    main,
    title,
    table("Tenants", [
      { label: "Name", cell: (t: T) => link(paths.apps(t.name), t.name) },
      { label: "Display name", cell: (t) => t.displayName },
      { label: "Max apps", cell: (t) => quota(t, "maxApps") },
      { label: "Max instances", cell: (t) => quota(t, "maxInstances") },
      { label: "Functions per app", cell: (t) => quota(t, "maxFunctionsPerApp") },
      { label: "Created", cell: (t) => when(t.createdAt) },
    ], data.items),
  );
}
