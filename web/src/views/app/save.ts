// One way every part of the app page writes: a JSON merge patch sent with `If-Match` on the
// version the page holds, which then holds the answer (so the next save, from any section,
// names the new ETag). Another change made meanwhile is a 412, said as such, never overwritten.

import { api, ifMatch, type Schemas } from "../../api/client";
import { h } from "../../dom";
import { problemBanner } from "../common";

export type App = Schemas["App"];

export type Saved = { ok: true; app: App } | { ok: false; status: number; error: unknown };

export async function patchApp(tenant: string, app: App, patch: Record<string, unknown>): Promise<Saved> {
  const { data, error, response } = await api.PATCH("/v1/tenants/{tenant}/apps/{app}", {
    params: { path: { tenant, app: app.name } },
    body: patch as never,
    headers: { "Content-Type": "application/merge-patch+json", "If-Match": ifMatch(app.etag) },
  });
  if (response.ok && data) {
    Object.assign(app, data);
    return { ok: true, app };
  }
  return { ok: false, status: response.status, error };
}

/// A refused save in words: a 412 says someone else changed `what` (the app, the function) and
/// offers the reload that shows their change; anything else is the API's problem, plainly.
export function refusal(status: number, error: unknown, reload: () => void, what = "the app"): HTMLElement {
  if (status === 412) {
    return h(
      "div",
      { role: "alert", class: "problem" },
      `Not done: ${what} was changed by someone else since this page loaded. Reload to see their change, then make yours again. `,
      h("button", { type: "button", class: "secondary", onclick: reload }, "Reload"),
    );
  }
  return problemBanner(error, status);
}
