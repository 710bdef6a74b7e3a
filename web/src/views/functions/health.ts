// Whether a function can run, said where it is built: its checks from the app's diagnostics
// (a connection the API cannot resolve, a trigger nothing runs, …) at the top of its page, and
// for each missing connection a form that adds the setting, after which the checks are read
// again. A new function's form gets the same offer before it is created, from the app's
// setting names (a hint; diagnostics decide once the function exists).

import { api, type Schemas } from "../../api/client";
import { actions, can, type Context } from "../../context";
import { h, replace } from "../../dom";
import { loading, problemBanner } from "../common";
import { patchApp, refusal, type App } from "../app/save";
import { bindingSettings, hasSetting, setPatch } from "../app/settings-model";

type Check = Schemas["Check"];

const RECHECK_MS = 1_000;
const RECHECK_TIMES = 20;

/// A form adding one connection setting to the app. `onSaved` runs after the save, with the
/// setting's name.
function connectionForm(ctx: Context, tenant: string, a: App, setting: string, onSaved: (name: string) => void): HTMLElement {
  const id = `conn-${setting.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  const value = h("input", {
    id: `${id}-value`,
    type: "password",
    autocomplete: "off",
    spellcheck: "false",
    required: true,
    "aria-describedby": `${id}-hint`,
  });
  const problems = h("div");
  return h(
    "form",
    {
      class: "connection-form",
      "aria-label": `Add the setting ${setting}`,
      onsubmit: async (event: Event) => {
        event.preventDefault();
        replace(problems);
        const saved = await patchApp(tenant, a, setPatch(setting, value.value));
        if (!saved.ok) {
          replace(problems, refusal(saved.status, saved.error, ctx.refresh));
          return;
        }
        value.value = "";
        onSaved(setting);
      },
    },
    h("label", { for: `${id}-value` }, `Value of ${setting}`),
    value,
    h(
      "p",
      { class: "hint", id: `${id}-hint` },
      "A connection string (for Storage: DefaultEndpointsProtocol=…;AccountName=…;AccountKey=…, or UseDevelopmentStorage=true). " +
        "It is stored encrypted and shown masked.",
    ),
    h("button", { type: "submit" }, `Add ${setting}`),
    problems,
  );
}

/// Under a new function's form: the connections its bindings name that the app has no
/// setting for, each with a form to add it. `update` is called as the bindings change.
export function missingConnections(ctx: Context, tenant: string, a: App): { el: HTMLElement; update: (bindings: Record<string, unknown>[]) => void } {
  const said = h("p", { role: "status", class: "said", id: "connections-said" });
  const body = h("div");
  let last: Record<string, unknown>[] = [];
  const update = (bindings: Record<string, unknown>[]) => {
    last = bindings;
    const names = Object.keys(a.appSettings);
    const missing = bindingSettings(bindings)
      .filter((c) => !hasSetting(names, c))
      .map((c) => c.name);
    replace(
      body,
      missing.length === 0
        ? null
        : missing.map((c) =>
            h(
              "div",
              { class: "missing-connection" },
              h("p", { class: "bad" }, `${a.name} has no setting ${c}, the connection this function names: it would not be healthy until there is one.`),
              connectionForm(ctx, tenant, a, c, (name) => {
                said.textContent = `Saved: added ${name}.`;
                update(last);
              }),
            ),
          ),
    );
  };
  const el = h("section", { "aria-labelledby": "connections", id: "connections-section" }, h("h2", { id: "connections" }, "Connections"), said, body);
  return { el, update };
}

/// The function's checks, read again after a setting is added; the "Healthy" or the errors are
/// announced in a live region that outlives the redraws.
export function healthSection(ctx: Context, tenant: string, a: App | null, fn: Schemas["Function"]): HTMLElement {
  const said = h("p", { role: "status", class: "said", id: "fn-health-said" });
  const body = h("div", { id: "fn-health" }, loading("health"));
  const heading = h("h2", { id: "health", tabindex: -1 }, "Health");
  const section = h("section", { "aria-labelledby": "health", id: "health-section" }, heading, said, body);
  const offer = a !== null && can(ctx, actions.appsWrite);
  // After a setting is added the workers reload the app within seconds; until then their
  // listeners' reports (subject `listener`) still carry the old error. So the checks are read
  // again every RECHECK_MS, up to RECHECK_TIMES, until no error is left, and the result is
  // announced once.
  const fill = async (message?: string, rechecks = 0): Promise<void> => {
    if (message && !said.textContent?.startsWith(message)) said.textContent = `${message} Checking the function again…`;
    const { data, error, response } = await api.GET("/v1/tenants/{tenant}/apps/{app}/diagnostics", {
      params: { path: { tenant, app: fn.app } },
    });
    if (!section.isConnected && rechecks > 0) return;
    if (!data) {
      replace(body, problemBanner(error, response.status));
      return;
    }
    const checks = data.checks.filter((c) => c.function === fn.name);
    const errors = checks.filter((c) => c.status === "error");
    if (message && errors.length && rechecks < RECHECK_TIMES) {
      await new Promise((resolve) => setTimeout(resolve, RECHECK_MS));
      return fill(message, rechecks + 1);
    }
    const others = checks.filter((c) => c.status !== "error" && c.status !== "ok");
    // The connections the errors are about, by the binding they name.
    // A connection error offers its setting; a stream error (Kafka's brokers, an event hub's
    // connection) the settings its binding needs that the app has none of.
    const settingNames = Object.keys(a?.appSettings ?? {});
    const missing = offer
      ? bindingSettings(
          errors
            .filter((c) => c.subject === "connection" || c.subject === "stream")
            .map((c) => (fn.bindings as Record<string, unknown>[]).find((b) => b.name === c.binding))
            .filter((b): b is Record<string, unknown> => b !== undefined),
        )
          .filter((c) => c.lookup === "connection" || !hasSetting(settingNames, c))
          .map((c) => c.name)
      : [];
    const headline = errors.length
      ? h("p", { class: "bad", id: "fn-health-state" }, `Not healthy: ${fn.name} cannot run as it is.`)
      : h("p", { class: "ok", id: "fn-health-state" }, `Healthy: every check of ${fn.name} passes.`);
    replace(
      body,
      headline,
      errors.length || others.length
        ? h(
            "ul",
            { class: "checks" },
            [...errors, ...others].map((c: Check) =>
              h("li", { class: `check-${c.status}` }, `${c.status}: ${c.binding ? `${c.binding} ` : ""}${c.subject} — ${c.detail}`),
            ),
          )
        : null,
      missing.map((setting) => connectionForm(ctx, tenant, a as App, setting, (name) => void fill(`Saved: added ${name}.`))),
    );
    said.textContent = message ? `${message} ${headline.textContent}` : "";
    // The form that was used went with the error it fixed: focus goes to the section's
    // heading rather than to the page's start.
    if (message && (document.activeElement === document.body || document.activeElement === null)) heading.focus();
  };
  void fill();
  return section;
}
