// Access: the tenant's identities, service principals and users, role definitions and
// assignments at their scopes (assigned and removed here by callers whose roles allow it), and
// the audit log. Each list shows what the caller may read; a 403 for one list is shown in its
// place without hiding the others.

import { api, type Schemas } from "../../api/client";
import type { Context } from "../../context";
import { assignmentsView } from "./assignments";
import { h, replace } from "../../dom";
import { loading, problemBanner, table, when } from "../common";

type P = Schemas["PrincipalView"];

const principalColumns = [
  { label: "Name", cell: (p: P) => p.name },
  { label: "Kind", cell: (p: P) => p.kind },
  { label: "Principal id", cell: (p: P) => h("code", {}, p.principalId) },
  { label: "Client id", cell: (p: P) => h("code", {}, p.clientId) },
];

function section(title: string, id: string, body: HTMLElement | HTMLElement[]): HTMLElement {
  return h("section", { "aria-labelledby": id }, h("h2", { id }, title), body);
}

export async function renderAccess(ctx: Context, main: HTMLElement, tenant: string): Promise<void> {
  const title = h("h1", {}, "Access");
  replace(main, title, loading("access control"));
  const path = { path: { tenant } };
  const [identities, sps, users, roles, assignments, audit] = await Promise.all([
    api.GET("/v1/tenants/{tenant}/identities", { params: path }),
    api.GET("/v1/tenants/{tenant}/servicePrincipals", { params: path }),
    api.GET("/v1/tenants/{tenant}/users", { params: path }),
    api.GET("/v1/tenants/{tenant}/roleDefinitions", { params: path }),
    api.GET("/v1/tenants/{tenant}/roleAssignments", { params: path }),
    api.GET("/v1/tenants/{tenant}/auditLog", { params: path }),
  ]);
  const names = new Map<string, string>();
  for (const list of [identities.data, sps.data, users.data]) for (const p of list?.items ?? []) names.set(p.principalId, `${p.name} (${p.kind})`);
  const or = <T>(r: { data?: T; error?: unknown; response: Response }, show: (d: T) => HTMLElement | HTMLElement[]) =>
    r.data ? show(r.data) : problemBanner(r.error, r.response.status);
  replace(
    main,
    title,
    section("User-assigned identities", "identities", or(identities, (d) => table("Identities", principalColumns, d.items))),
    section("Service principals", "sps", or(sps, (d) => table("Service principals", principalColumns, d.items))),
    section("Users", "users", or(users, (d) => table("Users", principalColumns, d.items))),
    section("Role definitions", "roles", or(roles, (d) => table("Role definitions", [
      { label: "Name", cell: (r: Schemas["RoleDefinitionView"]) => r.name },
      { label: "Built in", cell: (r) => (r.builtIn ? "yes" : "no") },
      { label: "Actions", cell: (r) => (r.permissions.actions ?? []).join(", ") || "—" },
      { label: "Not actions", cell: (r) => (r.permissions.notActions ?? []).join(", ") || "—" },
      { label: "Data actions", cell: (r) => (r.permissions.dataActions ?? []).join(", ") || "—" },
    ], d.items))),
    section("Role assignments", "assignments", or(assignments, (d) =>
      assignmentsView(ctx, { tenant, assignments: d.items, roles: roles.data?.items ?? [], principals: names }),
    )),
    section("Audit log", "audit", or(audit, (d) => table("Audit log, newest first", [
      { label: "At", cell: (e: Schemas["AuditEntryView"]) => when(e.at) },
      { label: "Principal", cell: (e) => e.principal },
      { label: "Action", cell: (e) => e.action },
      { label: "Resource", cell: (e) => h("code", {}, e.resource) },
      { label: "Outcome", cell: (e) => h("span", { class: e.outcome === "denied" ? "bad" : "ok" }, e.outcome) },
    ], d.items))),
  );
}
