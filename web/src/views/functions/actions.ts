// A function's own actions: disable or enable it (its `disabled` flag, a merge patch under the
// version the page holds) and delete it, each asked first except enabling. A 412 says someone
// else changed the function and offers the reload.

import { api, ifMatch } from "../../api/client";
import { actions, can, type Context } from "../../context";
import { h, replace } from "../../dom";
import { paths } from "../../router";
import { refusal } from "../app/save";
import { confirmAction } from "../confirm";

/// What the editor and these actions share: the version to send `If-Match` on and the
/// `disabled` flag (changed by Enable/Disable, kept by Save).
export interface FunctionState {
  etag: string | null;
  disabled: boolean;
}

export function functionActions(ctx: Context, tenant: string, app: string, fn: string, state: FunctionState): HTMLElement {
  const said = h("p", { role: "status", class: "said", id: "fn-actions-said" });
  const problems = h("div", { id: "fn-actions-problem" });
  const shown = h("span", { id: "fn-enabled" });
  const path = { tenant, app, function: fn };
  const toggle = h("button", {
    type: "button",
    id: "fn-toggle",
    class: "secondary",
    onclick: async () => {
      const disable = !state.disabled;
      if (
        disable &&
        !(await confirmAction(
          `Disable ${fn}?`,
          `${fn} stops receiving on every worker until it is enabled again; its messages wait in their queue.`,
          "Disable",
        ))
      )
        return;
      replace(problems);
      said.textContent = "";
      const { data, error, response } = await api.PATCH("/v1/tenants/{tenant}/apps/{app}/functions/{function}", {
        params: { path },
        body: { disabled: disable } as never,
        headers: { "Content-Type": "application/merge-patch+json", ...(state.etag ? { "If-Match": ifMatch(state.etag) } : {}) },
      });
      if (!response.ok || !data) {
        replace(problems, refusal(response.status, error, ctx.refresh, "the function"));
        return;
      }
      state.etag = data.etag;
      state.disabled = data.disabled;
      draw();
      said.textContent = `Saved: ${fn} is ${data.disabled ? "disabled" : "enabled"}.`;
    },
  });
  const draw = () => {
    shown.textContent = state.disabled ? "Disabled: no worker receives its messages." : "Enabled.";
    toggle.textContent = state.disabled ? `Enable ${fn}` : `Disable ${fn}`;
  };
  draw();
  const remove = h(
    "button",
    {
      type: "button",
      class: "danger",
      id: "fn-delete",
      onclick: async () => {
        const yes = await confirmAction(
          `Delete the function ${fn}?`,
          `${fn} and its function.json are deleted; its listeners stop. Messages stay in its queue. This cannot be undone.`,
          "Delete function",
        );
        if (!yes) return;
        replace(problems);
        const { error, response } = await api.DELETE("/v1/tenants/{tenant}/apps/{app}/functions/{function}", {
          params: { path },
          headers: state.etag ? { "If-Match": ifMatch(state.etag) } : {},
        });
        if (response.ok) ctx.navigate(paths.functions(tenant, app));
        else replace(problems, refusal(response.status, error, ctx.refresh, "the function"));
      },
    },
    `Delete ${fn}`,
  );
  return h(
    "section",
    { "aria-labelledby": "fn-actions", id: "fn-actions-section" },
    h("h2", { id: "fn-actions" }, "Function"),
    h("p", {}, shown),
    h("p", { class: "actions-row" }, can(ctx, actions.functionsWrite) ? toggle : null, " ", can(ctx, actions.functionsDelete) ? remove : null),
    said,
    problems,
  );
}
