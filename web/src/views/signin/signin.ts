// Sign-in: paste a bearer token (from `shoal token`, the token endpoint, or your identity
// provider); in `shoal dev` one click signs in as its platform administrator.

import { h, replace } from "../../dom";
import { signIn } from "../../session";

export interface DashboardConfig {
  environment: string | null;
  devSignIn: boolean;
  /// The trace viewer's URL template (holding `{traceId}`); null when none is configured.
  traceViewerUrl?: string | null;
}

export function renderSignIn(
  root: HTMLElement,
  config: DashboardConfig,
  environment: string,
  done: () => void,
): void {
  const expired = new URLSearchParams(location.search).has("expired");
  const input = h("textarea", {
    id: "token",
    name: "token",
    rows: 4,
    required: true,
    autocomplete: "off",
    spellcheck: "false",
  });
  const status = h("p", { role: "status", class: "hint" });
  const form = h(
    "form",
    {
      class: "signin",
      onsubmit: (event: Event) => {
        event.preventDefault();
        if (!input.value.trim()) {
          status.textContent = "Paste a token first.";
          return;
        }
        signIn(input.value);
        done();
      },
    },
    h("label", { for: "token" }, "Bearer token"),
    input,
    h("button", { type: "submit" }, "Sign in"),
    status,
  );
  const dev = config.devSignIn
    ? h(
        "button",
        {
          type: "button",
          class: "secondary",
          onclick: async () => {
            status.textContent = "Signing in…";
            const response = await fetch("/dashboard/devSignIn", { method: "POST" });
            if (!response.ok) {
              status.textContent = `One-click sign-in failed (${response.status}).`;
              return;
            }
            const body = (await response.json()) as { token: string };
            signIn(body.token);
            done();
          },
        },
        "Sign in as the dev administrator",
      )
    : null;
  replace(
    root,
    h(
      "main",
      { id: "main", class: "signin-page" },
      h("h1", {}, "Shoal"),
      h("p", { class: "env", "aria-label": "Environment" }, environment),
      expired ? h("p", { role: "alert", class: "problem" }, "Sign in to continue: the API refused the token (expired, revoked or not valid here).") : null,
      dev,
      form,
      h("p", { class: "hint" }, "The token stays in this tab's session storage and is sent only to this site."),
    ),
  );
}
