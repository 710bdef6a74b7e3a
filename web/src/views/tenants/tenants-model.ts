// The tenants view's form → request and the API's answers → words, without a browser.

import type { Schemas } from "../../api/client";
import type { FieldError } from "../../problem";

/// A new tenant's body: the display name defaults to the name when left empty.
export function tenantBody(displayName: string): Schemas["TenantWrite"] {
  const shown = displayName.trim();
  return shown ? { displayName: shown } : {};
}

/// A bad name is reported on the path parameter `tenant`; the form calls it `name`.
export function tenantErrors(errors: readonly FieldError[]): FieldError[] {
  return errors.map((e) => (e.path === "tenant" ? { ...e, path: "name" } : e));
}

export function tenantDeletionDetail(name: string): string {
  return (
    `Everything ${name} owns is deleted with it: its apps with their functions and settings, its ` +
    "identities, service principals and users (their tokens stop working), its custom roles and " +
    "role assignments. This cannot be undone."
  );
}
