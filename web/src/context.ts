// What every view gets: the caller (and what it may do in the tenant on screen), the
// environment's name, the trace viewer's URL template, and navigation.

import type { Schemas } from "./api/client";

export type Caller = Schemas["CallerView"];

export interface Context {
  caller: Caller;
  environment: string;
  /// Where trace ids link (`/dashboard/config`'s `traceViewerUrl`); null: shown as text.
  traceViewerUrl: string | null;
  navigate: (path: string) => void;
  /// Re-renders the current route (after a write).
  refresh: () => void;
}

/// Whether the caller's role assignments allow `action` where the view is (the API decides
/// every request anyway: this only hides what would be refused).
export function can(ctx: Context, action: string): boolean {
  return ctx.caller.actions.some((a) => a.toLowerCase() === action.toLowerCase());
}

export const actions = {
  tenantsRead: "Shoal/tenants/read",
  tenantsWrite: "Shoal/tenants/write",
  tenantsDelete: "Shoal/tenants/delete",
  appsWrite: "Shoal/apps/write",
  appsDelete: "Shoal/apps/delete",
  settingsList: "Shoal/apps/settings/list/action",
  functionsWrite: "Shoal/apps/functions/write",
  functionsDelete: "Shoal/apps/functions/delete",
  functionsPause: "Shoal/apps/functions/pause/action",
  functionsResume: "Shoal/apps/functions/resume/action",
  functionsPoisonReplay: "Shoal/apps/functions/poison/replay/action",
  functionsSend: "Shoal/apps/functions/send/action",
  workersRead: "Shoal/workers/read",
  auditRead: "Shoal/auditLog/read",
  identitiesRead: "Shoal/identities/read",
  identitiesWrite: "Shoal/identities/write",
  identitiesDelete: "Shoal/identities/delete",
  servicePrincipalsRead: "Shoal/servicePrincipals/read",
  servicePrincipalsWrite: "Shoal/servicePrincipals/write",
  servicePrincipalsDelete: "Shoal/servicePrincipals/delete",
  servicePrincipalSecrets: "Shoal/servicePrincipals/secrets/action",
  usersRead: "Shoal/users/read",
  usersWrite: "Shoal/users/write",
  usersDelete: "Shoal/users/delete",
  roleDefinitionsRead: "Shoal/roleDefinitions/read",
  roleDefinitionsWrite: "Shoal/roleDefinitions/write",
  roleDefinitionsDelete: "Shoal/roleDefinitions/delete",
  roleAssignmentsRead: "Shoal/roleAssignments/read",
  roleAssignmentsWrite: "Shoal/roleAssignments/write",
  roleAssignmentsDelete: "Shoal/roleAssignments/delete",
} as const;
