// A form whose fields each say their own errors: what the access and tenants views' create
// forms share. Each input is labelled, described by its error (and hint), and marked invalid
// when the API's 422 names its path (or a path below it); what no field shows goes above the
// submit button as the API's problem, in plain words.

import { h, replace } from "../dom";
import { placeErrors, type FieldError } from "../problem";
import { problemBanner } from "./common";

export type Input = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

export interface Field {
  /// The request's path for the field (`name`, `permissions.actions`): what a 422 names.
  path: string;
  label: string;
  input: Input;
  hint?: string;
}

export interface FieldForm {
  el: HTMLFormElement;
  /// Clears every field's error and the banner (before a submit).
  clear: () => void;
  /// Shows one message at one field and moves focus there.
  fail: (path: string, message: string) => void;
  /// Shows a refused request: its 422 errors at their fields, anything else above the button.
  refuse: (error: unknown, status: number, errors?: FieldError[]) => void;
}

export interface FieldFormOptions {
  /// Prefix of the inputs' ids (unique on the page).
  id: string;
  /// The form's accessible name and heading.
  title: string;
  fields: Field[];
  submit: string;
  /// Extra controls after the submit button (a Cancel).
  extra?: HTMLElement[];
  onSubmit: (form: FieldForm) => Promise<void>;
  /// Stacked labels over full-width inputs (for text areas); default a wrapping row.
  stacked?: boolean;
  /// The heading's level: h3 under a section's h2 (the default), h2 directly under the view's h1.
  heading?: "h2" | "h3";
}

export function fieldForm(options: FieldFormOptions): FieldForm {
  const banner = h("div");
  const slots = new Map<string, { input: Input; error: HTMLElement }>();
  const parts = options.fields.map((f) => {
    const id = `${options.id}-${f.path.replace(/[^A-Za-z0-9]+/g, "-")}`;
    const error = h("p", { id: `${id}-error`, class: "field-error" });
    const hint = f.hint ? h("p", { id: `${id}-hint`, class: "hint" }, f.hint) : null;
    f.input.id = id;
    f.input.setAttribute("aria-describedby", [`${id}-error`, hint ? `${id}-hint` : null].filter(Boolean).join(" "));
    slots.set(f.path, { input: f.input, error });
    return h("div", { class: "form-field" }, h("label", { for: id }, f.label), f.input, hint, error);
  });

  const submit = h("button", { type: "submit" }, options.submit);
  const el = h(
    "form",
    {
      class: options.stacked ? "stacked-form" : "inline-form",
      "aria-label": options.title,
      onsubmit: async (event: Event) => {
        event.preventDefault();
        form.clear();
        submit.disabled = true;
        try {
          await options.onSubmit(form);
        } finally {
          submit.disabled = false;
        }
      },
    },
    h(options.heading ?? "h3", {}, options.title),
    parts,
    h("div", { class: "form-actions" }, submit, options.extra ?? []),
    banner,
  );

  const form: FieldForm = {
    el,
    clear: () => {
      for (const { input, error } of slots.values()) {
        input.removeAttribute("aria-invalid");
        error.textContent = "";
      }
      replace(banner);
    },
    fail: (path, message) => {
      const slot = slots.get(path);
      if (!slot) {
        replace(banner, h("div", { role: "alert", class: "problem" }, message));
        return;
      }
      slot.error.textContent = message;
      slot.input.setAttribute("aria-invalid", "true");
      slot.input.focus();
    },
    refuse: (error, status, errors) => {
      const listed = errors ?? (error as { errors?: FieldError[] } | undefined)?.errors ?? [];
      const { byField, unplaced } = placeErrors(listed, [...slots.keys()]);
      let first: Input | null = null;
      for (const [path, messages] of byField) {
        const slot = slots.get(path);
        if (!slot) continue;
        slot.error.textContent = messages.join("; ");
        slot.input.setAttribute("aria-invalid", "true");
        first ??= slot.input;
      }
      if (byField.size === 0 || unplaced.length) replace(banner, problemBanner(error, status));
      first?.focus();
    },
  };
  return form;
}
