// Role assignments at their scopes and, for callers whose roles allow it (`GET /v1/me`), a
// form to assign a role (principal, role, scope) and a button to remove each assignment; each
// write draws the view again, saying what was done. The API checks the permission where the
// assignment applies; a 422 shows at the field it names, anything else above the form.

import { api, type Schemas } from "../../api/client";
import { actions, can, type Context } from "../../context";
import { h, replace } from "../../dom";
import { placeErrors } from "../../problem";
import { problemBanner, table, when } from "../common";
import { confirmAction } from "../confirm";
import { newId } from "./ids";
import type { Done } from "./principals";

type Assignment = Schemas["RoleAssignmentView"];
type Role = Schemas["RoleDefinitionView"];

const FIELDS = ["principalId", "roleDefinitionId", "scope"] as const;
type Field = (typeof FIELDS)[number];

export interface AssignmentsInput {
  tenant: string;
  assignments: Assignment[];
  /// Roles the caller could read (empty when it could not): the form's choices.
  roles: Role[];
  /// Known principals by principal id: `name (kind)`.
  principals: Map<string, string>;
}

export function assignmentsView(ctx: Context, input: AssignmentsInput, done: Done): HTMLElement[] {
  const { tenant, principals } = input;
  const mayDelete = can(ctx, actions.roleAssignmentsDelete);
  const status = h("div", { role: "status" });
  const columns = [
    { label: "Principal", cell: (a: Assignment) => principals.get(a.principalId) ?? a.principalId },
    { label: "Role", cell: (a: Assignment) => a.roleDefinitionName },
    { label: "Scope", cell: (a: Assignment) => h("code", {}, a.scope) },
    { label: "Since", cell: (a: Assignment) => when(a.createdAt) },
  ];
  if (mayDelete) {
    columns.push({
      label: "Remove",
      cell: (a: Assignment) =>
        h(
          "button",
          {
            type: "button",
            class: "secondary",
            "aria-label": `Remove ${a.roleDefinitionName} of ${principals.get(a.principalId) ?? a.principalId} at ${a.scope}`,
            onclick: async () => {
              const who = principals.get(a.principalId) ?? a.principalId;
              const yes = await confirmAction(
                `Remove ${a.roleDefinitionName} of ${who}?`,
                `${who} loses what ${a.roleDefinitionName} allows at ${a.scope} as soon as the API sees the change.`,
                "Remove",
              );
              if (!yes) return;
              const { error, response } = await api.DELETE("/v1/tenants/{tenant}/roleAssignments/{id}", {
                params: { path: { tenant, id: a.id } },
              });
              if (response.ok) done(`Removed ${a.roleDefinitionName} of ${who} at ${a.scope}.`, "assignments");
              else replace(status, problemBanner(error, response.status));
            },
          },
          "Remove",
        ),
    });
  }
  return [
    can(ctx, actions.roleAssignmentsWrite) ? createForm(input, done) : null,
    status,
    table(`Role assignments in ${input.tenant}`, columns, input.assignments),
  ].filter((e): e is HTMLElement => e !== null);
}

function createForm({ tenant, roles, principals }: AssignmentsInput, done: Done): HTMLElement {
  const ids: Record<Field, string> = {
    principalId: "assign-principal",
    roleDefinitionId: "assign-role",
    scope: "assign-scope",
  };
  const describedBy = (f: Field) => ({ id: ids[f], name: f, required: true, "aria-describedby": `${ids[f]}-error` });
  const inputs: Record<Field, HTMLInputElement | HTMLSelectElement> = {
    principalId: h(
      "select",
      describedBy("principalId"),
      [...principals].map(([id, name]) => h("option", { value: id }, name)),
    ),
    roleDefinitionId: h(
      "select",
      describedBy("roleDefinitionId"),
      roles.map((r) => h("option", { value: r.name }, r.name)),
    ),
    scope: h("input", { ...describedBy("scope"), value: `/tenants/${tenant}`, spellcheck: false }),
  };
  const error = (f: Field) => h("p", { id: `${ids[f]}-error`, class: "field-error" });
  const errors: Record<Field, HTMLElement> = {
    principalId: error("principalId"),
    roleDefinitionId: error("roleDefinitionId"),
    scope: error("scope"),
  };
  const banner = h("div");
  const labels: Record<Field, string> = { principalId: "Principal", roleDefinitionId: "Role", scope: "Scope" };
  return h(
    "details",
    { class: "create" },
    h("summary", {}, "Assign a role"),
    h(
      "form",
      {
        class: "inline-form",
        "aria-label": "Assign a role",
        onsubmit: async (event: Event) => {
          event.preventDefault();
          for (const f of FIELDS) {
            errors[f].textContent = "";
            inputs[f].removeAttribute("aria-invalid");
          }
          replace(banner);
          const { error, response } = await api.PUT("/v1/tenants/{tenant}/roleAssignments/{id}", {
            params: { path: { tenant, id: newId() } },
            body: {
              principalId: inputs.principalId.value,
              roleDefinitionId: inputs.roleDefinitionId.value,
              scope: inputs.scope.value.trim(),
            },
          });
          if (response.ok) {
            const who = principals.get(inputs.principalId.value) ?? inputs.principalId.value;
            done(`Assigned ${inputs.roleDefinitionId.value} to ${who} at ${inputs.scope.value.trim()}.`, "assignments");
            return;
          }
          const problem = error as { errors?: { path: string; message: string }[] } | undefined;
          const { byField, unplaced } = placeErrors(problem?.errors ?? [], FIELDS);
          for (const [field, messages] of byField) {
            errors[field as Field].textContent = messages.join("; ");
            inputs[field as Field].setAttribute("aria-invalid", "true");
          }
          if (byField.size === 0 || unplaced.length) replace(banner, problemBanner(error, response.status));
        },
      },
      h("h3", {}, "Assign a role"),
      FIELDS.map((f) => [h("label", { for: ids[f] }, labels[f]), inputs[f], errors[f]]).flat(),
      h("button", { type: "submit" }, "Assign"),
      banner,
    ),
  );
}
