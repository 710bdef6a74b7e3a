// What every view gets: the caller (and what it may do in the tenant on screen), the
// environment's name, and navigation.

import type { Schemas } from "./api/client";

export type Caller = Schemas["CallerView"];

export interface Context {
  caller: Caller;
  environment: string;
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
  servicePrincipalsRead: "Shoal/servicePrincipals/read",
  usersRead: "Shoal/users/read",
  roleDefinitionsRead: "Shoal/roleDefinitions/read",
  roleAssignmentsRead: "Shoal/roleAssignments/read",
  roleAssignmentsWrite: "Shoal/roleAssignments/write",
  roleAssignmentsDelete: "Shoal/roleAssignments/delete",
} as const;
