// Role definitions: the built-in roles and the tenant's custom ones, and for callers whose roles
// allow it a form to create a custom role or change one (its permissions one entry a line), and
// deleting one after asking. Built-in roles cannot be changed or deleted, so they offer neither.

import { api, type Schemas } from "../../api/client";
import { actions, can, type Context } from "../../context";
import { h, replace } from "../../dom";
import { problemBanner, table, type Column } from "../common";
import { confirmAction } from "../confirm";
import { fieldForm, type Field } from "../form";
import type { Done } from "./principals";
import { LISTS, roleBody, roleDeletionDetail, roleErrors, roleTaken, roleValues, type ListPath, type RoleValues } from "./roles-model";

type Role = Schemas["RoleDefinitionView"];

export interface RolesInput {
  tenant: string;
  roles: Role[];
  /// The tenant's role assignments, if the caller could read them.
  assignments: Schemas["RoleAssignmentView"][] | null;
}

const SECTION = "roles";

const listLabels: Record<ListPath, [string, string]> = {
  "permissions.actions": ["Actions", "Control-plane operations granted, e.g. Shoal/apps/read or */read."],
  "permissions.notActions": ["Not actions", "Taken away from this role's actions only."],
  "permissions.dataActions": ["Data actions", "Data operations granted, e.g. Shoal/apps/functions/invoke/action."],
  "permissions.notDataActions": ["Not data actions", "Taken away from this role's data actions only."],
  assignableScopes: ["Assignable scopes", "Where it may be assigned: this tenant, or an app or function in it."],
};

export function rolesView(ctx: Context, input: RolesInput, done: Done): HTMLElement[] {
  const list = (xs: string[] | undefined) => (xs ?? []).join(", ") || "—";
  const status = h("div");
  const form = can(ctx, actions.roleDefinitionsWrite) ? roleForm(input, done) : null;
  const mayDelete = can(ctx, actions.roleDefinitionsDelete);
  const cols: Column<Role>[] = [
    { label: "Name", cell: (r) => r.name },
    { label: "Built in", cell: (r) => (r.builtIn ? "yes" : "no") },
    { label: "Actions", cell: (r) => list(r.permissions.actions) },
    { label: "Not actions", cell: (r) => list(r.permissions.notActions) },
    { label: "Data actions", cell: (r) => list(r.permissions.dataActions) },
  ];
  if (form || mayDelete) {
    cols.push({
      label: "Actions",
      cell: (r) =>
        r.builtIn
          ? "—"
          : h(
              "span",
              { class: "row-actions" },
              form ? h("button", { type: "button", class: "secondary", "aria-label": `Change role ${r.name}`, onclick: () => form.edit(r) }, "Change") : null,
              form && mayDelete ? " " : null,
              mayDelete ? deleteButton(input, r, status, done) : null,
            ),
    });
  }
  return [form?.el ?? null, status, table(`Roles built in and of ${input.tenant}`, cols, input.roles)].filter((e): e is HTMLElement => e !== null);
}

function deleteButton(input: RolesInput, r: Role, status: HTMLElement, done: Done): HTMLElement {
  return h(
    "button",
    {
      type: "button",
      class: "secondary",
      "aria-label": `Delete role ${r.name}`,
      onclick: async () => {
        const assigned = input.assignments === null ? null : input.assignments.filter((a) => a.roleDefinitionId === r.id).length;
        if (!(await confirmAction(`Delete the role ${r.name}?`, roleDeletionDetail(r.name, assigned), "Delete"))) return;
        replace(status);
        const { error, response } = await api.DELETE("/v1/tenants/{tenant}/roleDefinitions/{role}", {
          params: { path: { tenant: input.tenant, role: r.name } },
        });
        if (response.ok) done(`Deleted the role ${r.name}.`, SECTION);
        else replace(status, problemBanner(error, response.status));
      },
    },
    "Delete",
  );
}

/// The create form, which Change turns into the form that replaces one custom role (its name
/// fixed, since the name is the role's path).
function roleForm(input: RolesInput, done: Done): { el: HTMLElement; edit: (role: Role) => void } {
  const { tenant } = input;
  let editing: Role | null = null;
  const name = h("input", { name: "name", required: true, autocomplete: "off", spellcheck: "false" });
  const description = h("input", { name: "description", autocomplete: "off" });
  const lists = Object.fromEntries(
    LISTS.map((path) => [path, h("textarea", { name: path, rows: 3, spellcheck: "false" })]),
  ) as Record<ListPath, HTMLTextAreaElement>;
  const fields: Field[] = [
    { path: "name", label: "Role name", input: name },
    { path: "description", label: "Description", input: description },
    ...LISTS.map((path) => ({ path, label: listLabels[path][0], input: lists[path], hint: `${listLabels[path][1]} One a line.` })),
  ];
  const fill = (values: RoleValues) => {
    name.value = values.name;
    description.value = values.description;
    for (const path of LISTS) lists[path].value = values.lists[path];
  };
  const cancel = h("button", { type: "button", class: "secondary", hidden: true, onclick: () => reset() }, "Cancel change");
  const summary = h("summary", {}, "New role");
  const form = fieldForm({
    id: "role",
    title: "New role",
    fields,
    submit: "Create role",
    stacked: true,
    extra: [cancel],
    onSubmit: async (f) => {
      const n = name.value.trim();
      const taken = editing ? null : roleTaken(input.roles, n);
      if (taken) return f.fail("name", taken);
      const body = roleBody({ name: n, description: description.value, lists: Object.fromEntries(LISTS.map((p) => [p, lists[p].value])) as Record<ListPath, string> });
      const { error, response } = await api.PUT("/v1/tenants/{tenant}/roleDefinitions/{role}", {
        params: { path: { tenant, role: n } },
        body,
      });
      if (response.ok) {
        done(`${editing ? "Saved" : "Created"} the role ${n}.`, SECTION);
        return;
      }
      const problem = error as { errors?: { path: string; message: string }[] } | undefined;
      f.refuse(error, response.status, roleErrors(problem?.errors ?? [], body));
    },
  });
  const heading = form.el.querySelector("h3") as HTMLElement;
  const submit = form.el.querySelector("button[type=submit]") as HTMLButtonElement;
  const details = h("details", { class: "create" }, summary, form.el);
  const reset = () => {
    editing = null;
    form.clear();
    fill(roleValues(tenant));
    name.readOnly = false;
    heading.textContent = summary.textContent = "New role";
    form.el.setAttribute("aria-label", "New role");
    submit.textContent = "Create role";
    cancel.hidden = true;
    name.focus();
  };
  fill(roleValues(tenant));
  return {
    el: details,
    edit: (role: Role) => {
      editing = role;
      form.clear();
      fill(roleValues(tenant, role));
      name.readOnly = true;
      const title = `Change role ${role.name}`;
      heading.textContent = summary.textContent = title;
      form.el.setAttribute("aria-label", title);
      submit.textContent = "Save role";
      cancel.hidden = false;
      details.open = true;
      description.focus();
    },
  };
}
