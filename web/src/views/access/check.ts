// "Check access": pick one of the tenant's principals and a scope, and see which actions it
// may take there and through which of its role assignments (`GET …/checkAccess`). The lists
// the view already loaded give the principals and the scopes offered; a 422 shows at the field
// it names, anything else below the form.

import { api } from "../../api/client";
import { h, replace } from "../../dom";
import { placeErrors } from "../../problem";
import { problemBanner } from "../common";
import { checkGroups, checkSummary, scopeChoices } from "./check-model";

const FIELDS = ["principalId", "scope"] as const;
type Field = (typeof FIELDS)[number];

export interface CheckInput {
  tenant: string;
  /// Known principals by principal id: `name (kind)`.
  principals: Map<string, string>;
  /// The scopes the tenant's role assignments name (what the caller could read).
  assignmentScopes: string[];
}

export function checkAccessView({ tenant, principals, assignmentScopes }: CheckInput): HTMLElement {
  if (principals.size === 0) {
    return h("p", {}, `${tenant} has no identity, service principal or user to check (or you may not list them).`);
  }
  const ids: Record<Field, string> = { principalId: "check-principal", scope: "check-scope" };
  const inputs: Record<Field, HTMLInputElement | HTMLSelectElement> = {
    principalId: h(
      "select",
      { id: ids.principalId, name: "principalId", required: true, "aria-describedby": `${ids.principalId}-error` },
      [...principals].map(([id, name]) => h("option", { value: id }, name)),
    ),
    scope: h("input", {
      id: ids.scope,
      name: "scope",
      required: true,
      list: "check-scopes",
      value: `/tenants/${tenant}`,
      spellcheck: false,
      "aria-describedby": `${ids.scope}-error`,
    }),
  };
  const errors: Record<Field, HTMLElement> = {
    principalId: h("p", { id: `${ids.principalId}-error`, class: "field-error" }),
    scope: h("p", { id: `${ids.scope}-error`, class: "field-error" }),
  };
  const labels: Record<Field, string> = { principalId: "Principal to check", scope: "Scope to check" };
  const summary = h("p", { role: "status", id: "check-summary", class: "said" });
  const result = h("div", { id: "check-result" });
  const form = h(
    "form",
    {
      class: "inline-form",
      "aria-label": "Check access",
      onsubmit: async (event: Event) => {
        event.preventDefault();
        for (const f of FIELDS) {
          errors[f].textContent = "";
          inputs[f].removeAttribute("aria-invalid");
        }
        summary.textContent = "";
        replace(result);
        const principalId = inputs.principalId.value;
        const { data, error, response } = await api.GET("/v1/tenants/{tenant}/checkAccess", {
          params: { path: { tenant }, query: { principalId, scope: inputs.scope.value.trim() } },
        });
        if (data) {
          summary.textContent = checkSummary(data, principals.get(principalId) ?? principalId);
          replace(
            result,
            checkGroups(data).map((g) =>
              h(
                "div",
                { class: "check-group" },
                h("h3", {}, g.heading),
                g.none !== null ? h("p", {}, g.none) : h("ul", {}, g.actions.map((a) => h("li", {}, h("code", {}, a)))),
              ),
            ),
          );
          return;
        }
        const problem = error as { errors?: { path: string; message: string }[] } | undefined;
        const { byField, unplaced } = placeErrors(problem?.errors ?? [], FIELDS);
        for (const [field, messages] of byField) {
          errors[field as Field].textContent = messages.join("; ");
          inputs[field as Field].setAttribute("aria-invalid", "true");
        }
        if (byField.size === 0 || unplaced.length) replace(result, problemBanner(error, response.status));
      },
    },
    FIELDS.map((f) => [h("label", { for: ids[f] }, labels[f]), inputs[f], errors[f]]).flat(),
    h("datalist", { id: "check-scopes" }, scopeChoices(tenant, assignmentScopes).map((s) => h("option", { value: s }))),
    h("button", { type: "submit" }, "Check access"),
  );
  return h("div", {}, form, summary, result);
}
