// A custom role's form as text and its request body: each list one entry a line (commas also
// separate), and the API's errors on an entry (`permissions.actions[1]`) said at the list's field
// with the line and what was on it.

import type { Schemas } from "../../api/client";
import type { FieldError } from "../../problem";

type Role = Schemas["RoleDefinitionView"];
type RoleWrite = Schemas["RoleDefinitionWrite"];

export const LISTS = [
  "permissions.actions",
  "permissions.notActions",
  "permissions.dataActions",
  "permissions.notDataActions",
  "assignableScopes",
] as const;
export type ListPath = (typeof LISTS)[number];

export interface RoleValues {
  name: string;
  description: string;
  lists: Record<ListPath, string>;
}

/// Entries of a list field: one a line or separated by commas, trimmed, blanks dropped.
export function entries(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((e) => e.trim())
    .filter((e) => e !== "");
}

export function roleBody(values: RoleValues): RoleWrite {
  const list = (path: ListPath) => entries(values.lists[path]);
  return {
    description: values.description.trim(),
    permissions: {
      actions: list("permissions.actions"),
      notActions: list("permissions.notActions"),
      dataActions: list("permissions.dataActions"),
      notDataActions: list("permissions.notDataActions"),
    },
    assignableScopes: list("assignableScopes"),
  };
}

/// The form's values for a new role (assignable in the whole tenant) or to change `role`.
export function roleValues(tenant: string, role?: Role): RoleValues {
  const text = (xs: string[] | undefined) => (xs ?? []).join("\n");
  return {
    name: role?.name ?? "",
    description: role?.description ?? "",
    lists: {
      "permissions.actions": text(role?.permissions.actions),
      "permissions.notActions": text(role?.permissions.notActions),
      "permissions.dataActions": text(role?.permissions.dataActions),
      "permissions.notDataActions": text(role?.permissions.notDataActions),
      assignableScopes: role ? text(role.assignableScopes) : `/tenants/${tenant}`,
    },
  };
}

/// `permissions.actions[1]: must start with "Shoal/"` → at `permissions.actions`:
/// `line 2 (Shoal/apps/reed): must start with "Shoal/"`; one about the permissions as a whole
/// ("must grant something") at Actions, the list that grants; other errors as they came.
export function roleErrors(errors: readonly FieldError[], sent: RoleWrite): FieldError[] {
  const listed: Record<ListPath, string[]> = {
    "permissions.actions": sent.permissions.actions ?? [],
    "permissions.notActions": sent.permissions.notActions ?? [],
    "permissions.dataActions": sent.permissions.dataActions ?? [],
    "permissions.notDataActions": sent.permissions.notDataActions ?? [],
    assignableScopes: sent.assignableScopes,
  };
  return errors.map((e) => {
    if (e.path === "permissions") return { path: "permissions.actions", message: e.message };
    const at = /^(.*)\[(\d+)\]$/.exec(e.path);
    if (!at || !(LISTS as readonly string[]).includes(at[1])) return e;
    const i = Number(at[2]);
    const entry = listed[at[1] as ListPath][i];
    return { path: at[1], message: `line ${i + 1}${entry === undefined ? "" : ` (${entry})`}: ${e.message}` };
  });
}

/// A create must not replace a role of the same name (the API's PUT would): said at the name.
export function roleTaken(roles: readonly Role[], name: string): string | null {
  const role = roles.find((r) => r.name.toLowerCase() === name.trim().toLowerCase());
  if (!role) return null;
  return role.builtIn
    ? `${role.name} is a built-in role: choose another name.`
    : `A role named ${role.name} exists already: choose another name, or Change that one.`;
}

/// What deleting a role does, given how many assignments name it (when they could be read):
/// the API refuses while it is assigned.
export function roleDeletionDetail(name: string, assigned: number | null): string {
  if (assigned) {
    return `${name} is assigned ${assigned === 1 ? "once" : `${assigned} times`}: the API refuses to delete it until those assignments are removed.`;
  }
  return `Nobody can be given ${name} afterwards. This cannot be undone.`;
}
