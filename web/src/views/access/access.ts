// Access: the tenant's identities, service principals and users, role definitions and
// assignments at their scopes, "Check access" for a principal at a scope, and the audit log; each created, changed and deleted here by
// callers whose roles allow it. Each list shows what the caller may read; a 403 for one list is
// shown in its place without hiding the others. After a write the lists are read and drawn
// again under the same heading, what was done is said in a live region that outlives them, and
// focus goes to the section written (its button is gone with the old drawing).

import { api, type Schemas } from "../../api/client";
import { actions, can, type Context } from "../../context";
import { assignmentsView } from "./assignments";
import { checkAccessView } from "./check";
import { h, replace } from "../../dom";
import { loading, problemBanner, table, when } from "../common";
import { principalsView, type Done } from "./principals";
import { rolesView } from "./roles";

function section(title: string, id: string, body: HTMLElement | HTMLElement[]): HTMLElement {
  return h("section", { "aria-labelledby": id }, h("h2", { id, tabindex: -1 }, title), body);
}

async function load(tenant: string) {
  const path = { path: { tenant } };
  const [identities, sps, users, roles, assignments, audit] = await Promise.all([
    api.GET("/v1/tenants/{tenant}/identities", { params: path }),
    api.GET("/v1/tenants/{tenant}/servicePrincipals", { params: path }),
    api.GET("/v1/tenants/{tenant}/users", { params: path }),
    api.GET("/v1/tenants/{tenant}/roleDefinitions", { params: path }),
    api.GET("/v1/tenants/{tenant}/roleAssignments", { params: path }),
    api.GET("/v1/tenants/{tenant}/auditLog", { params: path }),
  ]);
  return { identities, sps, users, roles, assignments, audit };
}

export async function renderAccess(ctx: Context, main: HTMLElement, tenant: string): Promise<void> {
  const title = h("h1", {}, "Access");
  const said = h("div", { role: "status", id: "access-said", class: "said" });
  replace(main, title, loading("access control"));
  let drawn = 0;
  const draw = async (message = "", focusId?: string) => {
    const mine = ++drawn;
    said.textContent = "";
    const lists = await load(tenant);
    if (mine !== drawn || !main.isConnected) return;
    replace(main, title, said, sections(ctx, tenant, lists, (m, f) => void draw(m, f)));
    said.textContent = message;
    if (focusId) document.getElementById(focusId)?.focus();
  };
  await draw();
}

function sections(ctx: Context, tenant: string, lists: Awaited<ReturnType<typeof load>>, done: Done): (HTMLElement | null)[] {
  const { identities, sps, users, roles, assignments, audit } = lists;
  const names = new Map<string, string>();
  for (const list of [identities.data, sps.data, users.data]) for (const p of list?.items ?? []) names.set(p.principalId, `${p.name} (${p.kind})`);
  const or = <T>(r: { data?: T; error?: unknown; response: Response }, show: (d: T) => HTMLElement | HTMLElement[]) =>
    r.data ? show(r.data) : problemBanner(r.error, r.response.status);
  const held = assignments.data?.items ?? null;
  return [
    section("User-assigned identities", "identities", or(identities, (d) =>
      principalsView(ctx, { tenant, kind: "identity", sectionId: "identities", items: d.items, assignments: held }, done),
    )),
    section("Service principals", "sps", or(sps, (d) =>
      principalsView(ctx, { tenant, kind: "servicePrincipal", sectionId: "sps", items: d.items, assignments: held }, done),
    )),
    section("Users", "users", or(users, (d) =>
      principalsView(ctx, { tenant, kind: "user", sectionId: "users", items: d.items, assignments: held }, done),
    )),
    section("Role definitions", "roles", or(roles, (d) => rolesView(ctx, { tenant, roles: d.items, assignments: held }, done))),
    section("Role assignments", "assignments", or(assignments, (d) =>
      assignmentsView(ctx, { tenant, assignments: d.items, roles: roles.data?.items ?? [], principals: names }, done),
    )),
    // Whoever may read role assignments may check another principal's access (the API checks
    // it at the scope asked about).
    can(ctx, actions.roleAssignmentsRead)
      ? section("Check access", "check", checkAccessView({ tenant, principals: names, assignmentScopes: (held ?? []).map((a) => a.scope) }))
      : null,
    section("Audit log", "audit", or(audit, (d) => table("Audit log, newest first", [
      { label: "At", cell: (e: Schemas["AuditEntryView"]) => when(e.at) },
      { label: "Principal", cell: (e) => e.principal },
      { label: "Action", cell: (e) => e.action },
      { label: "Resource", cell: (e) => h("code", {}, e.resource) },
      { label: "Outcome", cell: (e) => h("span", { class: e.outcome === "denied" ? "bad" : "ok" }, e.outcome) },
    ], d.items))),
  ];
}
