// Functions: the app's functions with their triggers, and the function.json editor. A 422 is
// shown at each field its error path names (`bindings[0].queueName`), the rest above the form.
// A function's page says first whether it is healthy (the app's diagnostics for it) and offers
// the connection setting it lacks; a new function's form says which connection the app lacks.
// A Save sends back every key of function.json the form has no field for (write.ts), and a
// function can be sent a test message, or an HTTP one a test request (send.ts). A binding whose type
// the API's catalog knows gets a field per property of its type, typed by the schema the API
// validates with (typed.ts); the raw function.json is editable beside them.

import { api, ifMatch, type Schemas } from "../../api/client";
import { actions, can, type Context } from "../../context";
import { h, link, replace } from "../../dom";
import { createRefused, placeErrors, type FieldError } from "../../problem";
import { paths } from "../../router";
import { loading, problemBanner, table } from "../common";
import { explorerSection } from "../explorer/explorer";
import { monitorSection } from "../monitor/monitor";
import { reliabilitySection } from "../monitor/reliability";
import { fieldPath, TEMPLATES, toRows, type Binding } from "./document";
import { choices, retype, typedBinding, typedRows, type BindingTypeInfo, type TypedRow } from "./typed";
import { functionActions, type FunctionState } from "./actions";
import { concurrencyField } from "./concurrency";
import { healthSection, missingConnections } from "./health";
import { testable } from "./invoke";
import { sendSection } from "./send";
import { functionWrite, type FunctionRead } from "./write";

export async function renderFunctions(
  ctx: Context,
  main: HTMLElement,
  tenant: string,
  app: string,
  selected: string | undefined,
): Promise<void> {
  const title = h("h1", {}, `${app} · functions`);
  replace(main, title, loading("functions"));
  const [list, appRead, catalog] = await Promise.all([
    api.GET("/v1/tenants/{tenant}/apps/{app}/functions", { params: { path: { tenant, app }, query: { limit: 1000 } } }),
    api.GET("/v1/tenants/{tenant}/apps/{app}", { params: { path: { tenant, app } } }),
    api.GET("/v1/bindingTypes"),
  ]);
  // Without the catalog every binding is edited as plain rows, as validation still judges them.
  const types = (catalog.data?.items ?? []) as BindingTypeInfo[];
  const { data, error, response } = list;
  if (!data) {
    replace(main, title, problemBanner(error, response.status));
    return;
  }
  const writable = can(ctx, actions.functionsWrite);
  const current = data.items.find((f) => f.name === selected);
  // The app, for the settings a connection needs (its ETag for adding one); absent if the
  // caller may list functions but not read the app, then nothing is offered.
  const theApp = appRead.data ?? null;
  const state: FunctionState = current ? { etag: current.etag, disabled: current.disabled } : { etag: null, disabled: false };
  const needs = theApp && writable && can(ctx, actions.appsWrite) ? missingConnections(ctx, tenant, theApp) : null;
  replace(
    main,
    title,
    h("p", {}, link(paths.app(tenant, app), `← ${app}`)),
    table("Functions", [
      { label: "Name", cell: (f: Schemas["Function"]) => link(paths.fn(tenant, app, f.name), f.name) },
      { label: "Trigger", cell: (f) => f.triggerType },
      { label: "Disabled", cell: (f) => (f.disabled ? "yes" : "no") },
      { label: "Bindings", cell: (f) => f.bindings.length },
    ], data.items),
    selected && !current ? h("p", { role: "alert", class: "problem" }, `No function named ${selected}.`) : null,
    current ? healthSection(ctx, tenant, theApp, current) : null,
    current && (writable || can(ctx, actions.functionsDelete)) ? functionActions(ctx, tenant, app, current.name, state) : null,
    current && testable(current.triggerType) && can(ctx, actions.functionsSend)
      ? sendSection(tenant, app, current.name, triggerOf(current))
      : null,
    current
      ? editor(ctx, tenant, app, current, current.bindings as Binding[], state, writable, types)
      : writable
        ? newFunction(ctx, tenant, app, state, types, (b) => needs?.update(b))
        : null,
    !current && needs ? needs.el : null,
    current ? monitorSection(tenant, app, current.name) : null,
    current ? explorerSection(tenant, app, current.name, ctx.traceViewerUrl) : null,
    current ? reliabilitySection(ctx, tenant, app, current.name, current.triggerType) : null,
  );
}

/// A function's trigger binding (its type alone if the bindings somehow lack it).
function triggerOf(fn: Schemas["Function"]): Binding {
  return (fn.bindings as Binding[]).find((b) => b.type === fn.triggerType) ?? { type: fn.triggerType };
}

/// The new-function form under a template picker: choosing a template starts the form again
/// from its bindings (the name typed so far is kept).
function newFunction(
  ctx: Context,
  tenant: string,
  app: string,
  state: FunctionState,
  types: BindingTypeInfo[],
  onBindings: (b: Binding[]) => void,
): HTMLElement {
  const box = h("div");
  const show = (id: string) => {
    const template = TEMPLATES.find((t) => t.id === id) ?? TEMPLATES[0];
    const typed = (box.querySelector("#fn-name") as HTMLInputElement | null)?.value ?? "";
    const bindings = template.bindings.map((b) => structuredClone(b) as Binding);
    replace(box, editor(ctx, tenant, app, null, bindings, state, true, types, onBindings));
    (box.querySelector("#fn-name") as HTMLInputElement).value = typed;
    onBindings(bindings);
  };
  const picker = h(
    "select",
    { id: "fn-template", onchange: (e: Event) => show((e.target as HTMLSelectElement).value) },
    TEMPLATES.map((t) => h("option", { value: t.id }, t.label)),
  );
  show(TEMPLATES[0].id);
  return h("div", { class: "new-function" }, h("p", {}, h("label", { for: "fn-template" }, "Template "), picker), box);
}

interface BindingRows {
  rows: TypedRow[];
}

/// A binding's rows: typed by its type's schema when the catalog has it, plain otherwise.
function rowsOf(binding: Binding, types: BindingTypeInfo[]): TypedRow[] {
  const info = types.find((t) => t.type === binding.type);
  return info ? typedRows(binding, info) : toRows(binding);
}

/// The function.json form: `current` is the function as read (null for a new one), whose keys
/// the form has no field for are sent back as they were (write.ts).
function editor(
  ctx: Context,
  tenant: string,
  app: string,
  current: FunctionRead | null,
  initial: Binding[],
  state: FunctionState,
  writable: boolean,
  types: BindingTypeInfo[],
  onBindings: (bindings: Binding[]) => void = () => {},
): HTMLElement {
  const name = current?.name ?? null;
  // What the next save carries: the answer of each save, so it is always the version `If-Match` names.
  let latest = current;
  const bindings: BindingRows[] = initial.map((b) => ({ rows: rowsOf(b, types) }));
  const written = () => bindings.map((b) => typedBinding(b.rows));
  const raw = rawEditor(writable, written, (parsed) => {
    bindings.splice(0, bindings.length, ...parsed.map((b) => ({ rows: rowsOf(b, types) })));
    draw();
    changed();
  });
  const changed = () => {
    const now = written();
    raw.show(now);
    onBindings(now);
  };
  const nameInput = name === null ? h("input", { id: "fn-name", required: true, "aria-describedby": "err-name" }) : null;
  const errorsTop = h("div", { id: "fn-errors" });
  const fieldsBox = h("div");
  // Error slots by field path, filled after a 422.
  const slots = new Map<string, { input: HTMLElement; error: HTMLElement }>();

  const draw = () => {
    slots.clear();
    replace(
      fieldsBox,
      bindings.map((binding, index) => {
        const group = `binding-${index}`;
        // Typed when its type is in the catalog (its rows came from `typedRows`).
        const typed = binding.rows.some((r) => r.control !== undefined);
        const direction = binding.rows.find((r) => r.key === "direction")?.text ?? "in";
        const bindingError = h("p", { class: "field-error", id: `err-${group}` });
        const box = h(
          "fieldset",
          { class: "binding", "aria-describedby": `err-${group}` },
          h("legend", {}, `Binding ${index + 1}`),
          bindingError,
          binding.rows.map((row, r) => {
            const id = `${group}-${r}`;
            const path = fieldPath(index, row.key);
            const err = h("p", { class: "field-error", id: `err-${id}` });
            const hint = row.description ? h("small", { class: "hint", id: `hint-${id}` }, row.description) : null;
            const retyped = (type: string) => {
              const info = types.find((t) => t.type === type);
              if (!info) return;
              binding.rows = retype(binding.rows, info);
              draw();
              changed();
              (fieldsBox.querySelector(`#${id}`) as HTMLElement | null)?.focus();
            };
            const input = control(row, {
              id,
              writable,
              path,
              describedBy: hint ? `err-${id} hint-${id}` : `err-${id}`,
              typeChoices: typed && row.key === "type" ? choices(types, direction).map((t) => t.type) : null,
              fixed: typed && row.key === "direction",
              onChange: (text) => {
                row.text = text;
                if (row.key === "type") retyped(text);
                else changed();
              },
            });
            slots.set(path, { input, error: err });
            const label = row.required ? `${row.key} (required)` : row.key;
            return h("div", { class: "field" }, h("label", { for: id }, label), input, hint, err);
          }),
          writable ? addProperty(binding, draw) : null,
          writable && bindings.length > 1
            ? h("button", { type: "button", class: "secondary", onclick: () => { bindings.splice(index, 1); draw(); changed(); } }, "Remove binding")
            : null,
        );
        slots.set(`bindings[${index}]`, { input: box, error: bindingError });
        return box;
      }),
    );
  };
  draw();

  // A new function may start disabled; an existing one is enabled and disabled by its own
  // button (functionActions), which the Save keeps.
  const disabledBox =
    name === null
      ? h("input", {
          type: "checkbox",
          id: "fn-disabled",
          checked: state.disabled,
          onchange: (e: Event) => {
            state.disabled = (e.target as HTMLInputElement).checked;
          },
        })
      : null;
  const bindingsError = h("p", { class: "field-error", id: "err-bindings" });
  // Outlives every save, so "Saved" is announced; the form stays as it is (no re-render, so
  // the page keeps its scroll position and focus stays on Save).
  const saved = h("p", { role: "status", class: "said", id: "fn-saved" });
  const nameError = h("p", { class: "field-error", id: "err-name" });
  const cap = concurrencyField(current?.maxConcurrency, writable);

  const clearErrors = () => {
    for (const { input, error } of slots.values()) {
      error.textContent = "";
      input.removeAttribute("aria-invalid");
    }
    bindingsError.textContent = "";
    nameError.textContent = "";
    cap.error.textContent = "";
    cap.input.removeAttribute("aria-invalid");
    nameInput?.removeAttribute("aria-invalid");
    replace(errorsTop);
  };
  const showErrors = (errors: FieldError[], status: number, problem: unknown) => {
    clearErrors();
    const all = new Map(slots);
    all.set("bindings", { input: fieldsBox, error: bindingsError });
    all.set("maxConcurrency", cap);
    if (nameInput) all.set("function", { input: nameInput, error: nameError });
    const { byField, unplaced } = placeErrors(errors, [...all.keys()]);
    for (const [path, messages] of byField) {
      const slot = all.get(path);
      if (!slot) continue;
      slot.error.textContent = messages.join("; ");
      slot.input.setAttribute("aria-invalid", "true");
    }
    if (byField.size === 0 || unplaced.length > 0) {
      replace(
        errorsTop,
        problemBanner(problem, status),
        unplaced.length ? h("ul", {}, unplaced.map((e) => h("li", {}, `${e.path}: ${e.message}`))) : null,
      );
    }
    const first = fieldsBox.querySelector("[aria-invalid=true]") ?? (cap.input.hasAttribute("aria-invalid") ? cap.input : nameInput);
    if (first instanceof HTMLElement && byField.size > 0) first.focus();
  };

  const form = h(
    "form",
    {
      class: "fn-editor",
      "aria-label": name ? `Edit ${name}` : "New function",
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const fn = name ?? nameInput?.value.trim() ?? "";
        const body = functionWrite(latest, {
          bindings: written(),
          disabled: state.disabled,
          maxConcurrency: cap.value(),
        });
        saved.textContent = "";
        const { data, error, response } = await api.PUT("/v1/tenants/{tenant}/apps/{app}/functions/{function}", {
          params: { path: { tenant, app, function: fn } },
          body,
          headers: state.etag ? { "If-Match": ifMatch(state.etag) } : { "If-None-Match": "*" },
        });
        if (response.ok && data) {
          if (!name) {
            ctx.navigate(paths.fn(tenant, app, fn));
            return;
          }
          clearErrors();
          state.etag = data.etag;
          latest = data;
          saved.textContent = `Saved at ${new Date().toLocaleTimeString()}.`;
          return;
        }
        const taken = name ? null : createRefused(response.status, "A function", fn);
        if (taken) {
          showErrors([{ path: "function", message: taken }], response.status, error);
          return;
        }
        const problem = error as { errors?: FieldError[] } | undefined;
        showErrors(problem?.errors ?? [], response.status, error);
      },
    },
    h("h2", {}, name ? `function.json of ${name}` : "New function"),
    errorsTop,
    nameInput ? [h("label", { for: "fn-name" }, "Name"), nameInput, nameError] : null,
    bindingsError,
    fieldsBox,
    writable
      ? h("button", { type: "button", class: "secondary", onclick: () => { bindings.push({ rows: rowsOf({ type: "queue", direction: "out", name: "", queueName: "", connection: "" }, types) }); draw(); changed(); } }, "Add binding")
      : null,
    raw.el,
    cap.el,
    disabledBox ? h("p", {}, disabledBox, " ", h("label", { for: "fn-disabled" }, "Created disabled (no listener until enabled)")) : null,
    writable ? h("button", { type: "submit" }, name ? "Save" : "Create function") : h("p", { class: "hint" }, "Your role can read functions, not change them."),
    saved,
  );
  return form;
}

interface ControlOptions {
  id: string;
  writable: boolean;
  path: string;
  describedBy: string;
  /// The types the `type` row may change to; null for a plain text field.
  typeChoices: string[] | null;
  /// Read-only whatever the role: a typed binding's `direction`, which its type decides.
  fixed: boolean;
  onChange: (text: string) => void;
}

/// The field of one row: a choice (with "not set" unless required), a number or a line of text.
/// A reader's fields are read-only (a choice disabled, as a select cannot be read-only).
function control(row: TypedRow, o: ControlOptions): HTMLElement {
  const common = { id: o.id, "data-path": o.path, "aria-describedby": o.describedBy };
  const options = o.typeChoices ?? (row.control?.kind === "choice" ? row.control.options : null);
  if (options) {
    const list = options.includes(row.text) || row.text === "" ? options : [row.text, ...options];
    return h(
      "select",
      {
        ...common,
        disabled: !o.writable,
        "aria-required": row.required ? "true" : undefined,
        onchange: (e: Event) => o.onChange((e.target as HTMLSelectElement).value),
      },
      o.typeChoices ? null : h("option", { value: "", selected: row.text === "" }, row.required ? "(choose)" : "(not set)"),
      list.map((value) => h("option", { value, selected: value === row.text }, value)),
    );
  }
  const number = row.control?.kind === "number" ? row.control : null;
  return h("input", {
    ...common,
    type: number ? "number" : "text",
    min: number?.min,
    max: number?.max,
    value: row.text,
    placeholder: row.placeholder,
    readonly: !o.writable || o.fixed,
    "aria-required": row.required ? "true" : undefined,
    oninput: (e: Event) => o.onChange((e.target as HTMLInputElement).value),
  });
}

/// The bindings as function.json text, beside the fields: `show` follows every change, Apply
/// reads an edited text back into the fields (a text that is not a JSON array says so here).
function rawEditor(
  writable: boolean,
  current: () => Binding[],
  apply: (bindings: Binding[]) => void,
): { el: HTMLElement; show: (bindings: Binding[]) => void } {
  const area = h("textarea", { id: "fn-raw", rows: 12, cols: 60, readonly: !writable, spellcheck: false, "aria-describedby": "err-fn-raw" }) as HTMLTextAreaElement;
  const error = h("p", { class: "field-error", id: "err-fn-raw" });
  const show = (bindings: Binding[]) => {
    area.value = JSON.stringify(bindings, null, 2);
  };
  show(current());
  const applyButton = writable
    ? h("button", {
        type: "button",
        class: "secondary",
        onclick: () => {
          let parsed: unknown;
          try {
            parsed = JSON.parse(area.value);
          } catch (e) {
            error.textContent = `Not JSON: ${(e as Error).message}`;
            area.setAttribute("aria-invalid", "true");
            return;
          }
          if (!Array.isArray(parsed) || !parsed.every((b) => typeof b === "object" && b !== null && !Array.isArray(b))) {
            error.textContent = "Expected an array of binding objects, as function.json's \"bindings\".";
            area.setAttribute("aria-invalid", "true");
            return;
          }
          error.textContent = "";
          area.removeAttribute("aria-invalid");
          apply(parsed as Binding[]);
        },
      }, "Apply to the fields")
    : null;
  const el = h(
    "details",
    { class: "raw-bindings" },
    h("summary", {}, "function.json bindings (raw)"),
    h("label", { for: "fn-raw" }, "Bindings as JSON"),
    area,
    error,
    applyButton,
  );
  return { el, show };
}

function addProperty(binding: BindingRows, redraw: () => void): HTMLElement {
  const key = h("input", { "aria-label": "New property name", placeholder: "property" });
  return h(
    "div",
    { class: "add-property" },
    key,
    h(
      "button",
      {
        type: "button",
        class: "secondary",
        onclick: () => {
          const k = key.value.trim();
          if (!k || binding.rows.some((r) => r.key === k)) return;
          binding.rows.push({ key: k, text: "", kind: "json" });
          redraw();
        },
      },
      "Add property",
    ),
  );
}
