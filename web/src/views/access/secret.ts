// A service principal's new secret, shown once: the API keeps only its hash, so this dialog is
// the only place it is ever seen. It says so, offers a copy button, and holds the secret only
// while open (closing it removes it from the page). A modal dialog on <body> outlives the view
// redrawn beneath it; on close, focus goes where the caller says (the section's heading).

import type { Schemas } from "../../api/client";
import { h } from "../../dom";

export function showSecret(credential: Schemas["ServicePrincipalCredential"], focusAfter: () => void): void {
  const id = `secret-${Math.random().toString(36).slice(2)}`;
  const value = h("input", {
    id: `${id}-value`,
    readonly: true,
    value: credential.clientSecret,
    spellcheck: "false",
    autocomplete: "off",
  });
  const said = h("p", { role: "status", class: "said", id: `${id}-said` });
  const copy = h(
    "button",
    {
      type: "button",
      onclick: async () => {
        said.textContent = (await copyText(credential.clientSecret, value))
          ? "Copied to the clipboard."
          : "Could not reach the clipboard: select the secret and copy it yourself.";
      },
    },
    "Copy secret",
  );
  const dialog = h(
    "dialog",
    { class: "secret", "aria-labelledby": `${id}-title`, "aria-describedby": `${id}-once` },
    h("h2", { id: `${id}-title` }, `Secret of ${credential.name}`),
    h(
      "p",
      { id: `${id}-once` },
      h("strong", {}, "Copy it now: it will not be shown again. "),
      "Shoal keeps only a hash of it. If it is lost, replace it with New secret on the service principal's row.",
    ),
    h(
      "dl",
      { class: "facts" },
      h("dt", {}, "Client id"),
      h("dd", {}, h("code", { class: "id" }, credential.clientId)),
      h("dt", {}, h("label", { for: value.id }, "Client secret")),
      h("dd", {}, value),
    ),
    h("p", { class: "actions" }, copy, " ", h("button", { type: "button", class: "secondary", onclick: () => finish() }, "Done")),
    said,
  );
  // Closed, removed and focus moved at once (the `close` event comes a task later).
  const finish = () => {
    dialog.close();
    dialog.remove();
    focusAfter();
  };
  dialog.addEventListener("cancel", (event) => {
    event.preventDefault();
    finish();
  });
  document.body.append(dialog);
  dialog.showModal();
  value.focus();
  value.select();
}

/// The clipboard API exists only on secure origins (a dashboard on plain HTTP in a private
/// network is not one): there, the selected text is copied the old way.
async function copyText(text: string, field: HTMLInputElement): Promise<boolean> {
  try {
    if (navigator.clipboard) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // Refused (no permission, no focus): try the old way.
  }
  field.focus();
  field.select();
  try {
    return document.execCommand("copy");
  } catch {
    return false;
  }
}
