// The header on every view: the environment's name, the tenant switcher, navigation by what
// the caller may see, and sign-out.

import { api } from "../api/client";
import { can, actions, type Context } from "../context";
import { h, link } from "../dom";
import { paths, type Route } from "../router";
import { signOut } from "../session";

async function tenantChoices(ctx: Context, current: string | undefined): Promise<string[]> {
  const names = new Set<string>();
  if (ctx.caller.kind === "platformAdmin") {
    const { data } = await api.GET("/v1/tenants", { params: { query: { limit: 1000 } } });
    for (const t of data?.items ?? []) names.add(t.name);
  }
  if (ctx.caller.tenant) names.add(ctx.caller.tenant);
  if (current) names.add(current);
  return [...names].sort();
}

export async function header(ctx: Context, route: Route): Promise<HTMLElement> {
  const tenant = "tenant" in route ? route.tenant : (ctx.caller.tenant ?? undefined);
  const tenants = await tenantChoices(ctx, tenant);
  const switcher = h(
    "select",
    {
      id: "tenant-switcher",
      onchange: (event: Event) => ctx.navigate(paths.apps((event.target as HTMLSelectElement).value)),
    },
    tenant ? null : h("option", { value: "", selected: true, disabled: true }, "Choose a tenant"),
    tenants.map((t) => h("option", { value: t, selected: t === tenant }, t)),
  );
  const admin = ctx.caller.kind === "platformAdmin";
  const nav = h(
    "nav",
    { "aria-label": "Main" },
    h(
      "ul",
      {},
      tenant ? h("li", {}, link(paths.apps(tenant), "Apps")) : null,
      tenant ? h("li", {}, link(paths.access(tenant), "Access")) : null,
      admin ? h("li", {}, link("/workers", "Workers")) : null,
      admin && can(ctx, actions.tenantsRead) ? h("li", {}, link("/tenants", "Tenants")) : null,
    ),
  );
  return h(
    "header",
    { class: "top" },
    h("span", { class: "brand" }, "Shoal"),
    h("span", { class: "env", id: "environment", title: "Environment" }, h("span", { class: "sr-only" }, "Environment: "), ctx.environment),
    h("label", { for: "tenant-switcher", class: "sr-only" }, "Tenant"),
    switcher,
    nav,
    h(
      "span",
      { class: "who" },
      h("span", { id: "subject" }, ctx.caller.subject),
      h(
        "button",
        {
          type: "button",
          class: "secondary",
          onclick: () => {
            signOut();
            ctx.navigate("/signin");
          },
        },
        "Sign out",
      ),
    ),
  );
}
