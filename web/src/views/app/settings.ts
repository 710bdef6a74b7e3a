// The app's settings: listed (secret values masked, revealed only through settings/list, on
// request), and for callers who may write apps, added, changed and removed in place. Each save
// is a merge patch under the page's ETag (save.ts); the table is redrawn alone, "Saved" is said in
// a live region that outlives it, and focus stays on the form (or, after a removal, moves to the
// section's heading, since the row's button is gone).

import { api } from "../../api/client";
import { actions, can, type Context } from "../../context";
import { h, replace } from "../../dom";
import { placeErrors } from "../../problem";
import { problemBanner } from "../common";
import { confirmAction } from "../confirm";
import { patchApp, refusal, type App } from "./save";
import { isMasked, MASK, removePatch, secretNotMasked, setPatch, settingNameProblem } from "./settings-model";

/// The section, and `redraw` for another part of the page that changed a setting (the scale
/// toggle writes TARGET_BASED_SCALING_ENABLED).
export function settingsSection(ctx: Context, tenant: string, a: App): { el: HTMLElement; redraw: () => void } {
  const writable = can(ctx, actions.appsWrite);
  const lists = can(ctx, actions.settingsList);
  const heading = h("h2", { id: "settings", tabindex: -1 }, "Settings");
  // Outlives every redraw, so what it is told is announced.
  const said = h("div", { role: "status", id: "settings-said", class: "said" });
  const problems = h("div", { id: "settings-problem" });
  const tableBox = h("div");
  // Values revealed through settings/list, by name, until the next save.
  let revealed: Record<string, string> | null = null;

  const form = writable ? settingForm() : null;

  const draw = () => {
    const names = Object.keys(a.appSettings).sort();
    if (names.length === 0) {
      replace(tableBox, h("p", { class: "empty" }, "No settings yet."));
      return;
    }
    replace(
      tableBox,
      h(
        "div",
        { class: "table-wrap", tabindex: 0, role: "region", "aria-label": "App settings" },
        h(
          "table",
          { id: "settings-table" },
          h("caption", {}, "App settings"),
          h(
            "thead",
            {},
            h("tr", {}, ["Name", "Value", lists ? "Secret" : null, writable ? "Actions" : null].filter(Boolean).map((c) => h("th", { scope: "col" }, c as string))),
          ),
          h(
            "tbody",
            {},
            names.map((n) => {
              const shown = a.appSettings[n];
              const secret = lists && isMasked(shown);
              return h(
                "tr",
                { "data-setting": n },
                h("th", { scope: "row" }, h("code", {}, n)),
                h("td", {}, h("code", { class: "setting-value" }, revealed?.[n] ?? shown)),
                lists ? h("td", {}, secret ? "secret" : "—") : null,
                writable
                  ? h(
                      "td",
                      { class: "row-actions" },
                      h("button", { type: "button", class: "secondary", "aria-label": `Change ${n}`, onclick: () => form?.edit(n, isMasked(shown)) }, "Change"),
                      " ",
                      h("button", { type: "button", class: "secondary", "aria-label": `Remove ${n}`, onclick: () => void remove(n) }, "Remove"),
                    )
                  : null,
              );
            }),
          ),
        ),
      ),
    );
  };

  const remove = async (name: string) => {
    const yes = await confirmAction(
      `Remove the setting ${name}?`,
      `Functions that read ${name} (a connection, for instance) stop finding it once it is removed.`,
      "Remove",
    );
    if (!yes) return;
    replace(problems);
    said.textContent = "";
    const saved = await patchApp(tenant, a, removePatch(name));
    heading.focus();
    if (!saved.ok) {
      replace(problems, refusal(saved.status, saved.error, ctx.refresh));
      return;
    }
    revealed = null;
    draw();
    said.textContent = `Saved: removed ${name}.`;
  };

  const reveal = lists
    ? h(
        "button",
        {
          type: "button",
          class: "secondary",
          onclick: async () => {
            const { data, error, response } = await api.POST("/v1/tenants/{tenant}/apps/{app}/settings/list", {
              params: { path: { tenant, app: a.name } },
            });
            if (!data) {
              replace(problems, problemBanner(error, response.status));
              return;
            }
            revealed = data.appSettings;
            draw();
            said.textContent = "Values shown in the clear.";
          },
        },
        "Reveal values",
      )
    : null;

  function settingForm() {
    const ids = { name: "setting-name", value: "setting-value", secret: "setting-secret" };
    const name = h("input", { id: ids.name, name: "name", autocomplete: "off", "aria-describedby": `${ids.name}-error` });
    const value = h("input", { id: ids.value, name: "value", autocomplete: "off", spellcheck: "false", "aria-describedby": `${ids.value}-error ${ids.value}-hint` });
    const secret = h("input", {
      id: ids.secret,
      type: "checkbox",
      onchange: () => {
        value.type = secret.checked ? "password" : "text";
      },
    });
    const nameError = h("p", { class: "field-error", id: `${ids.name}-error` });
    const valueError = h("p", { class: "field-error", id: `${ids.value}-error` });
    const valueHint = h("p", { class: "hint", id: `${ids.value}-hint` });
    const clear = () => {
      for (const [input, error] of [[name, nameError], [value, valueError]] as const) {
        input.removeAttribute("aria-invalid");
        error.textContent = "";
      }
      replace(problems);
    };
    const el = h(
      "form",
      {
        class: "setting-form",
        "aria-label": "Add or change a setting",
        onsubmit: async (event: Event) => {
          event.preventDefault();
          clear();
          said.textContent = "";
          const n = name.value.trim();
          const bad = settingNameProblem(n);
          if (bad) {
            nameError.textContent = bad;
            name.setAttribute("aria-invalid", "true");
            name.focus();
            return;
          }
          const existed = n in a.appSettings;
          const saved = await patchApp(tenant, a, setPatch(n, value.value));
          if (!saved.ok) {
            const problem = saved.error as { errors?: { path: string; message: string }[] } | undefined;
            const { byField, unplaced } = placeErrors(problem?.errors ?? [], [`appSettings.${n}`, "appSettings"]);
            if (saved.status === 422 && byField.size > 0) {
              valueError.textContent = [...byField.values()].flat().join("; ");
              value.setAttribute("aria-invalid", "true");
            }
            if (saved.status !== 422 || byField.size === 0 || unplaced.length) replace(problems, refusal(saved.status, saved.error, ctx.refresh));
            return;
          }
          revealed = null;
          draw();
          const warning = secret.checked ? secretNotMasked(n, a.appSettings[n]) : null;
          said.textContent = `Saved: ${existed ? "changed" : "added"} ${n}.${warning ? ` ${warning}` : ""}`;
          // Ready for the next setting (the one saved is in the table, its Change button
          // brings it back).
          name.value = "";
          value.value = "";
          secret.checked = false;
          value.type = "text";
          valueHint.textContent = "";
        },
      },
      h("h3", {}, "Add or change a setting"),
      h("div", { class: "field" }, h("label", { for: ids.name }, "Setting name"), name, nameError),
      h("div", { class: "field" }, h("label", { for: ids.value }, "Setting value"), value, valueError),
      valueHint,
      h("p", {}, secret, " ", h("label", { for: ids.secret }, "Secret: hide it as I type, and tell me if the API would show it")),
      h("button", { type: "submit" }, "Save setting"),
    );
    return {
      el,
      /// Fills the form from a row: a masked value is not sent back, so the value starts
      /// empty (sending `********` would keep the stored secret).
      edit(n: string, isSecret: boolean) {
        clear();
        name.value = n;
        secret.checked = isSecret;
        value.type = isSecret ? "password" : "text";
        value.value = isSecret ? "" : (revealed?.[n] ?? a.appSettings[n] ?? "");
        valueHint.textContent = isSecret ? `${n} is secret: type its new value (${MASK} keeps the stored one).` : "";
        value.focus();
      },
    };
  }

  draw();
  const el = h(
    "section",
    { "aria-labelledby": "settings", id: "settings-section" },
    heading,
    reveal,
    said,
    problems,
    tableBox,
    form?.el ?? (writable ? null : h("p", { class: "hint" }, "Your role can read settings, not change them.")),
  );
  return {
    el,
    redraw: () => {
      revealed = null;
      draw();
    },
  };
}
