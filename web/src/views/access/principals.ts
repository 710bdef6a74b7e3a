// The tenant's user-assigned identities, service principals and users: each listed, created
// and deleted (after asking) by callers whose roles allow it (`GET /v1/me`). A new service
// principal's secret is shown once (secret.ts), as is the one New secret makes. A 422 shows at
// the field it names; a name already taken is said at the name.

import { api, type Schemas } from "../../api/client";
import { actions, can, type Context } from "../../context";
import { h, replace } from "../../dom";
import { problemBanner, table, when, type Column } from "../common";
import { confirmAction } from "../confirm";
import { fieldForm } from "../form";
import { assignmentsOf, createOutcome, deletionDetail, nouns, userBody, userTaken, type PrincipalKind } from "./principals-model";
import { showSecret } from "./secret";

type P = Schemas["PrincipalView"];

/// After a write: the view is drawn again with `message` said and focus on `focusId`.
export type Done = (message: string, focusId: string) => void;

export interface PrincipalsInput {
  tenant: string;
  kind: PrincipalKind;
  /// The section's heading id (focus returns there after a write).
  sectionId: string;
  items: P[];
  /// The tenant's role assignments, if the caller could read them (to say what a deletion takes).
  assignments: Schemas["RoleAssignmentView"][] | null;
}

const may = {
  identity: { write: actions.identitiesWrite, delete: actions.identitiesDelete },
  servicePrincipal: { write: actions.servicePrincipalsWrite, delete: actions.servicePrincipalsDelete },
  user: { write: actions.usersWrite, delete: actions.usersDelete },
};

// Not the section's own name: a table's region and its section are both landmarks, and two
// landmarks of one name cannot be told apart.
const captions: Record<PrincipalKind, string> = {
  identity: "Identities in",
  servicePrincipal: "Service principals in",
  user: "Users in",
};

function columns(kind: PrincipalKind): Column<P>[] {
  const name = { label: "Name", cell: (p: P) => p.name };
  const principalId = { label: "Principal id", cell: (p: P) => h("code", {}, p.principalId) };
  const clientId = { label: "Client id", cell: (p: P) => h("code", {}, p.clientId) };
  switch (kind) {
    case "identity":
      return [name, principalId, clientId, { label: "Resource id", cell: (p) => h("code", {}, p.resourceId ?? "—") }];
    case "servicePrincipal":
      return [name, principalId, clientId, { label: "Secret made", cell: (p) => when(p.secretCreatedAt) }];
    case "user":
      return [name, { label: "Issuer", cell: (p) => h("code", {}, p.issuer ?? "—") }, { label: "Subject", cell: (p) => h("code", {}, p.subject ?? "—") }, principalId];
  }
}

export function principalsView(ctx: Context, input: PrincipalsInput, done: Done): HTMLElement[] {
  const { kind, tenant } = input;
  const status = h("div");
  const cols = columns(kind);
  const mayDelete = can(ctx, may[kind].delete);
  const mayRenew = kind === "servicePrincipal" && can(ctx, actions.servicePrincipalSecrets);
  if (mayDelete || mayRenew) {
    cols.push({
      label: "Actions",
      cell: (p: P) =>
        h(
          "span",
          { class: "row-actions" },
          mayRenew ? renewButton(input, p, status, done) : null,
          mayRenew && mayDelete ? " " : null,
          mayDelete ? deleteButton(input, p, status, done) : null,
        ),
    });
  }
  return [
    can(ctx, may[kind].write) ? createForm(input, done) : null,
    status,
    table(`${captions[kind]} ${tenant}`, cols, input.items),
  ].filter((e): e is HTMLElement => e !== null);
}

function deleteButton(input: PrincipalsInput, p: P, status: HTMLElement, done: Done): HTMLElement {
  const noun = nouns[input.kind].one;
  return h(
    "button",
    {
      type: "button",
      class: "secondary",
      "aria-label": `Delete ${noun} ${p.name}`,
      onclick: async () => {
        const yes = await confirmAction(
          `Delete the ${noun} ${p.name}?`,
          deletionDetail(input.kind, p.name, assignmentsOf(input.assignments, p.principalId)),
          "Delete",
        );
        if (!yes) return;
        replace(status);
        const { error, response } = await remove(input.kind, input.tenant, p.name);
        if (response.ok) done(`Deleted the ${noun} ${p.name}.`, input.sectionId);
        else replace(status, problemBanner(error, response.status));
      },
    },
    "Delete",
  );
}

function renewButton(input: PrincipalsInput, p: P, status: HTMLElement, done: Done): HTMLElement {
  return h(
    "button",
    {
      type: "button",
      class: "secondary",
      "aria-label": `New secret for ${p.name}`,
      onclick: async () => {
        const yes = await confirmAction(
          `Replace the secret of ${p.name}?`,
          `The current secret stops working at once: whatever signs in as ${p.name} with it fails until it is given the new one, which is shown once.`,
          "Replace secret",
        );
        if (!yes) return;
        replace(status);
        const { data, error, response } = await api.POST("/v1/tenants/{tenant}/servicePrincipals/{name}/secrets", {
          params: { path: { tenant: input.tenant, name: p.name } },
        });
        if (!data) {
          replace(status, problemBanner(error, response.status));
          return;
        }
        showSecret(data, () => document.getElementById(input.sectionId)?.focus());
        done(`Replaced the secret of ${p.name}.`, input.sectionId);
      },
    },
    "New secret",
  );
}

function createForm(input: PrincipalsInput, done: Done): HTMLElement {
  const { kind, tenant } = input;
  const noun = nouns[kind].one;
  const title = `New ${noun}`;
  const name = h("input", { name: "name", required: true, autocomplete: "off", spellcheck: "false" });
  const issuer = h("input", { name: "issuer", required: true, autocomplete: "off", spellcheck: "false" });
  const subject = h("input", { name: "subject", required: true, autocomplete: "off", spellcheck: "false" });
  const nameLabel = `${noun[0].toUpperCase()}${noun.slice(1)} name`;
  const fields =
    kind === "user"
      ? [
          { path: "name", label: nameLabel, input: name },
          { path: "issuer", label: "Issuer", input: issuer, hint: "The provider's iss, exactly: one Shoal trusts." },
          { path: "subject", label: "Subject", input: subject, hint: "oid for Entra ID, otherwise sub." },
        ]
      : [{ path: "name", label: nameLabel, input: name }];
  const form = fieldForm({
    id: `new-${kind}`,
    title,
    fields,
    submit: `Create ${noun}`,
    // A user's fields carry hints: one above the other, they line up.
    stacked: kind === "user",
    onSubmit: async (f) => {
      const n = name.value.trim();
      if (kind === "user") {
        const taken = userTaken(input.items, n);
        if (taken) return f.fail("name", taken);
      }
      const { data, error, response } = await create(kind, tenant, n, userBody(issuer.value, subject.value));
      const outcome = createOutcome(kind, response.status, n);
      if (outcome.made) {
        // A service principal's 201 carries its secret (ServicePrincipalCredential).
        if (kind === "servicePrincipal" && data) {
          showSecret(data as Schemas["ServicePrincipalCredential"], () => document.getElementById(input.sectionId)?.focus());
        }
        done(`Created the ${noun} ${n}.`, input.sectionId);
        return;
      }
      if (outcome.taken) return f.fail("name", outcome.taken);
      f.refuse(error, response.status);
    },
  });
  return h("details", { class: "create" }, h("summary", {}, title), form.el);
}

function create(kind: PrincipalKind, tenant: string, name: string, user: Schemas["UserWrite"]) {
  const params = { path: { tenant, name } };
  switch (kind) {
    case "identity":
      return api.PUT("/v1/tenants/{tenant}/identities/{name}", { params });
    case "servicePrincipal":
      return api.PUT("/v1/tenants/{tenant}/servicePrincipals/{name}", { params });
    case "user":
      return api.PUT("/v1/tenants/{tenant}/users/{name}", { params, body: user });
  }
}

function remove(kind: PrincipalKind, tenant: string, name: string) {
  const params = { path: { tenant, name } };
  switch (kind) {
    case "identity":
      return api.DELETE("/v1/tenants/{tenant}/identities/{name}", { params });
    case "servicePrincipal":
      return api.DELETE("/v1/tenants/{tenant}/servicePrincipals/{name}", { params });
    case "user":
      return api.DELETE("/v1/tenants/{tenant}/users/{name}", { params });
  }
}
