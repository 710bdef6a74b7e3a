// Asking before an action that stops, replays or removes something: a modal <dialog> that says
// what will happen, with the action's own name on the button (not "OK"). The browser's modal
// dialog keeps focus inside and Escape cancels; focus returns to what opened it.

import { h } from "../dom";

export function confirmAction(question: string, detail: string, action: string): Promise<boolean> {
  const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  return new Promise((resolve) => {
    const id = `confirm-${Math.random().toString(36).slice(2)}`;
    const close = (yes: boolean) => {
      dialog.close();
      dialog.remove();
      opener?.focus();
      resolve(yes);
    };
    const dialog = h(
      "dialog",
      { class: "confirm", "aria-labelledby": `${id}-q`, "aria-describedby": `${id}-d` },
      h("h2", { id: `${id}-q` }, question),
      h("p", { id: `${id}-d` }, detail),
      h(
        "p",
        { class: "actions" },
        h("button", { type: "button", class: "secondary", onclick: () => close(false) }, "Cancel"),
        h("button", { type: "button", class: "danger", onclick: () => close(true) }, action),
      ),
    );
    dialog.addEventListener("cancel", (event) => {
      event.preventDefault();
      close(false);
    });
    document.body.append(dialog);
    dialog.showModal();
    // Focus starts on Cancel, the safe choice.
    (dialog.querySelector("button.secondary") as HTMLButtonElement).focus();
  });
}
