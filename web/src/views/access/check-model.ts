// "Check access" as words and groups, kept apart from the DOM so it can be tested: which scopes
// to offer, what the API's answer says in one sentence, and its role assignments each with the
// actions it grants at the scope asked about.

import type { Schemas } from "../../api/client";

export type AccessCheck = Schemas["AccessCheck"];

/// The scopes to offer: the tenant's, then every scope inside it that the tenant's role
/// assignments name, each once, sorted so an app comes before its functions. Any other scope
/// can be typed; the API says at the field when it is not the tenant or inside it.
export function scopeChoices(tenant: string, assignmentScopes: readonly string[]): string[] {
  const root = `/tenants/${tenant}`;
  const inside = new Set(assignmentScopes.filter((s) => s.startsWith(`${root}/`)));
  return [root, ...[...inside].sort()];
}

const count = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

/// What the check found, in one sentence, with the principal named as `who`.
export function checkSummary(check: AccessCheck, who: string): string {
  const { scope, actions, dataActions, assignments } = check;
  if (assignments.length === 0) {
    return `${who} has no role assignment at ${scope} or above it, so it may do nothing there.`;
  }
  if (actions.length === 0 && dataActions.length === 0) {
    return `${who}'s ${count(assignments.length, "role assignment")} at ${scope} or above it allow no action there.`;
  }
  const what = [
    actions.length ? count(actions.length, "management action") : null,
    dataActions.length ? count(dataActions.length, "data action") : null,
  ]
    .filter((s) => s !== null)
    .join(" and ");
  return `${who} may take ${what} at ${scope}, through ${count(assignments.length, "role assignment")}.`;
}

export interface CheckGroup {
  id: string;
  /// "Reader, assigned at /tenants/contoso (inherited)".
  heading: string;
  /// The actions this assignment grants at the scope asked about, data actions marked.
  actions: string[];
  /// Plain words when it grants nothing there.
  none: string | null;
}

/// The assignments that apply, in the API's order (oldest first), each with what it grants.
export function checkGroups(check: AccessCheck): CheckGroup[] {
  return check.assignments.map((a) => ({
    id: a.id,
    heading: `${a.roleDefinitionName}, assigned at ${a.scope}${a.scope === check.scope ? " (here)" : " (inherited)"}`,
    actions: [...a.actions, ...a.dataActions.map((d) => `${d} (data action)`)],
    none: a.actions.length === 0 && a.dataActions.length === 0 ? `${a.roleDefinitionName} allows nothing at ${check.scope}.` : null,
  }));
}
