// App: its handler, settings (secret values masked; revealed only through settings/list, on
// request), host config, scale limits with the TARGET_BASED_SCALING_ENABLED toggle, identity
// and diagnostics; for callers who may, the handler, settings and scale limits are edited in
// place (every save under the page's ETag, see save.ts) and the app deleted after a question.

import { api, ifMatch, type Schemas } from "../../api/client";
import { actions, can, type Context } from "../../context";
import { h, link, replace } from "../../dom";
import { placeErrors } from "../../problem";
import { paths } from "../../router";
import { facts, json, loading, problemBanner, table, when } from "../common";
import { confirmAction } from "../confirm";
import { patchApp, refusal, type App } from "./save";
import { settingsSection } from "./settings";

export const TARGET_BASED_SCALING = "TARGET_BASED_SCALING_ENABLED";

export async function renderApp(ctx: Context, main: HTMLElement, tenant: string, name: string): Promise<void> {
  // One heading for the view's life: focus put on it by the router stays there.
  const title = h("h1", {}, name);
  replace(main, title, loading("the app"));
  const path = { tenant, app: name };
  const [app, diagnostics] = await Promise.all([
    api.GET("/v1/tenants/{tenant}/apps/{app}", { params: { path } }),
    api.GET("/v1/tenants/{tenant}/apps/{app}/diagnostics", { params: { path } }),
  ]);
  if (!app.data) {
    replace(main, title, problemBanner(app.error, app.response.status));
    return;
  }
  const a = app.data;
  const settings = settingsSection(ctx, tenant, a);
  replace(
    main,
    title,
    h(
      "nav",
      { "aria-label": "App", class: "tabs" },
      link(paths.functions(tenant, name), "Functions"),
      link(paths.scale(tenant, name), "Scale"),
    ),
    h("section", { "aria-labelledby": "overview" }, h("h2", { id: "overview" }, "Overview"),
      facts([
        ["State", h("span", { class: `state state-${a.state.toLowerCase()}` }, a.state)],
        ["Created", when(a.createdAt)],
      ]),
    ),
    handlerSection(ctx, tenant, a),
    scaleSection(ctx, tenant, a, settings.redraw),
    settings.el,
    h("section", { "aria-labelledby": "identity" }, h("h2", { id: "identity" }, "Identity"),
      facts([
        ["Type", a.identity.type],
        ["User-assigned", a.identity.userAssignedIdentities.join(", ") || "—"],
        ["Principal id", a.identity.principalId ?? "—"],
        ["Client id", a.identity.clientId ?? "—"],
      ]),
    ),
    h("section", { "aria-labelledby": "host" }, h("h2", { id: "host" }, "Host config"), json(a.hostConfig)),
    diagnosticsSection(diagnostics.data, diagnostics.error, diagnostics.response.status),
    can(ctx, actions.appsDelete) ? deleteSection(ctx, tenant, a) : null,
  );
}

function scaleSection(ctx: Context, tenant: string, a: App, settingsChanged: () => void): HTMLElement {
  // Outlives every save, so "Saved" is announced; nothing else is redrawn (the page keeps its
  // scroll position and focus stays on the toggle).
  const status = h("div", { role: "status", class: "said", id: "scale-saved" });
  const mode = h("span", { id: "scale-mode" }, a.scale.mode);
  const toggle = h("input", {
    type: "checkbox",
    id: "target-based",
    checked: a.scale.mode === "target",
    disabled: !can(ctx, actions.appsWrite),
    onchange: async (event: Event) => {
      const on = (event.target as HTMLInputElement).checked;
      replace(status, "Saving…");
      // A merge patch touches only this setting; absent means target-based (the default).
      const saved = await patchApp(tenant, a, { appSettings: { [TARGET_BASED_SCALING]: on ? null : "0" } });
      if (saved.ok) {
        mode.textContent = a.scale.mode;
        settingsChanged();
        replace(status, `Saved: scale mode ${a.scale.mode}.`);
      } else {
        (event.target as HTMLInputElement).checked = !on;
        replace(status, refusal(saved.status, saved.error, ctx.refresh));
      }
    },
  });
  return h(
    "section",
    { "aria-labelledby": "scale" },
    h("h2", { id: "scale" }, "Scale"),
    facts([["Mode", mode]]),
    can(ctx, actions.appsWrite)
      ? limitsForm(ctx, tenant, a)
      : facts([
          ["Instance limit", a.scale.limit],
          ["Minimum instances", a.scale.minimumInstances],
          ["Scale on visible messages only", a.scale.visibleOnly ? "yes" : "no"],
        ]),
    h(
      "p",
      {},
      toggle,
      " ",
      h("label", { for: "target-based" }, `Target-based scaling (${TARGET_BASED_SCALING})`),
      can(ctx, actions.appsWrite) ? null : h("span", { class: "hint" }, " — your role cannot change it"),
    ),
    status,
  );
}

/// A form whose fields are written under one JSON object of the app (`handler`, `scale`): the
/// API's 422 paths (`scale.limit`) are put at their inputs, the rest above the button; "Saved"
/// is said in a live region the form keeps, and focus stays on the button.
interface FieldSpec {
  key: string;
  label: string;
  input: HTMLInputElement;
  read: () => unknown;
}

function patchForm(
  ctx: Context,
  tenant: string,
  a: App,
  options: { id: string; object: "handler" | "scale"; label: string; button: string; fields: FieldSpec[]; said: () => string },
): HTMLFormElement {
  const said = h("p", { role: "status", class: "said", id: `${options.id}-said` });
  const problems = h("div", { id: `${options.id}-problem` });
  const errors = new Map(
    options.fields.map((f) => [`${options.object}.${f.key}`, { f, el: h("p", { class: "field-error", id: `${f.input.id}-error` }) }]),
  );
  const form = h(
    "form",
    {
      class: "edit-form",
      id: options.id,
      // The API validates (one set of rules): its 422 is put at the field it names.
      novalidate: true,
      "aria-label": options.label,
      onsubmit: async (event: Event) => {
        event.preventDefault();
        said.textContent = "";
        replace(problems);
        for (const { f, el } of errors.values()) {
          el.textContent = "";
          f.input.removeAttribute("aria-invalid");
        }
        const body = Object.fromEntries(options.fields.map((f) => [f.key, f.read()]));
        const saved = await patchApp(tenant, a, { [options.object]: body });
        if (saved.ok) {
          said.textContent = options.said();
          return;
        }
        const problem = saved.error as { errors?: { path: string; message: string }[] } | undefined;
        const { byField, unplaced } = placeErrors(problem?.errors ?? [], [...errors.keys()]);
        for (const [path, messages] of byField) {
          const slot = errors.get(path);
          if (!slot) continue;
          slot.el.textContent = messages.join("; ");
          slot.f.input.setAttribute("aria-invalid", "true");
        }
        if (byField.size === 0 || unplaced.length) replace(problems, refusal(saved.status, saved.error, ctx.refresh));
      },
    },
    options.fields.map((f) => {
      f.input.setAttribute("aria-describedby", `${f.input.id}-error`);
      const error = errors.get(`${options.object}.${f.key}`)?.el;
      return f.input.type === "checkbox"
        ? h("p", {}, f.input, " ", h("label", { for: f.input.id }, f.label), error)
        : h("div", { class: "field" }, h("label", { for: f.input.id }, f.label), f.input, error);
    }),
    problems,
    h("button", { type: "submit" }, options.button),
    said,
  );
  return form;
}

function handlerSection(ctx: Context, tenant: string, a: App): HTMLElement {
  const heading = h("h2", { id: "handler" }, "Handler");
  if (!can(ctx, actions.appsWrite)) {
    return h(
      "section",
      { "aria-labelledby": "handler" },
      heading,
      facts([
        ["Handler URL", h("code", {}, a.handler.url)],
        ["Handler timeout", `${a.handler.timeoutSeconds} s`],
      ]),
    );
  }
  const url = h("input", { id: "handler-url", type: "url", required: true, value: a.handler.url });
  const timeout = h("input", { id: "handler-timeout", type: "number", min: 1, max: 3600, required: true, value: a.handler.timeoutSeconds });
  return h(
    "section",
    { "aria-labelledby": "handler" },
    heading,
    patchForm(ctx, tenant, a, {
      id: "handler-form",
      object: "handler",
      label: "Handler",
      button: "Save handler",
      fields: [
        { key: "url", label: "Handler URL", input: url, read: () => url.value.trim() },
        { key: "timeoutSeconds", label: "Timeout (seconds)", input: timeout, read: () => numberOrNull(timeout) },
      ],
      said: () => `Saved: the handler is ${a.handler.url}, timeout ${a.handler.timeoutSeconds} s.`,
    }),
  );
}

/// A number field's value; empty is `null`, which a merge patch reads as "back to the default".
function numberOrNull(input: HTMLInputElement): number | null {
  return input.value.trim() === "" ? null : Number(input.value);
}

function limitsForm(ctx: Context, tenant: string, a: App): HTMLFormElement {
  const limit = h("input", { id: "scale-limit", type: "number", min: 1, max: 1000, required: true, value: a.scale.limit });
  const minimum = h("input", { id: "scale-minimum", type: "number", min: 0, required: true, value: a.scale.minimumInstances });
  const visible = h("input", { id: "scale-visible", type: "checkbox", checked: a.scale.visibleOnly });
  return patchForm(ctx, tenant, a, {
    id: "limits-form",
    object: "scale",
    label: "Scale limits",
    button: "Save scale limits",
    fields: [
      { key: "limit", label: "Instance limit (1–1000, empty for 100; the tenant's quota caps it)", input: limit, read: () => numberOrNull(limit) },
      { key: "minimumInstances", label: "Minimum instances", input: minimum, read: () => numberOrNull(minimum) },
      { key: "visibleOnly", label: "Scale on visible messages only", input: visible, read: () => visible.checked },
    ],
    said: () => `Saved: at most ${a.scale.limit} instances, at least ${a.scale.minimumInstances}.`,
  });
}

function deleteSection(ctx: Context, tenant: string, a: App): HTMLElement {
  const status = h("div", { id: "delete-app-problem" });
  return h(
    "section",
    { "aria-labelledby": "delete-app" },
    h("h2", { id: "delete-app" }, "Delete"),
    h(
      "button",
      {
        type: "button",
        class: "danger",
        id: "delete-app-button",
        onclick: async () => {
          const yes = await confirmAction(
            `Delete the app ${a.name}?`,
            `${a.name}, its settings and its functions are deleted; its listeners stop on every worker. Messages stay in their queues. This cannot be undone.`,
            "Delete app",
          );
          if (!yes) return;
          replace(status);
          const { error, response } = await api.DELETE("/v1/tenants/{tenant}/apps/{app}", {
            params: { path: { tenant, app: a.name } },
            headers: { "If-Match": ifMatch(a.etag) },
          });
          if (response.ok) ctx.navigate(paths.apps(tenant));
          else replace(status, refusal(response.status, error, ctx.refresh));
        },
      },
      `Delete ${a.name}`,
    ),
    status,
  );
}

function diagnosticsSection(
  d: Schemas["Diagnostics"] | undefined,
  error: unknown,
  status: number,
): HTMLElement {
  const body = d
    ? [
        h("p", { class: d.healthy ? "ok" : "bad" }, d.healthy ? "Healthy: no check in error." : "Unhealthy: a check is in error."),
        table("Checks", [
          { label: "Function", cell: (c: Schemas["Check"]) => c.function ?? "app" },
          { label: "Subject", cell: (c) => c.subject },
          { label: "Status", cell: (c) => h("span", { class: `check check-${c.status}` }, c.status) },
          { label: "Detail", cell: (c) => c.detail },
        ], d.checks),
      ]
    : [problemBanner(error, status)];
  return h("section", { "aria-labelledby": "diagnostics" }, h("h2", { id: "diagnostics" }, "Diagnostics"), body);
}
