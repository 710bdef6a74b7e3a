// The typed API client: paths and bodies come from schema.d.ts, which `make web-api` generates
// from openapi/openapi.json (never edited by hand). Same origin: the dashboard is served by the
// API it calls.

import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "./schema";
import { token } from "../session";

export type Schemas = components["schemas"];

/// Called when the API answers 401: the token is missing, expired or revoked.
let onUnauthorized: () => void = () => {};

export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

function withToken(request: Request): Request {
  const bearer = token();
  if (bearer) request.headers.set("Authorization", `Bearer ${bearer}`);
  return request;
}

function seen(response: Response): Response {
  if (response.status === 401) onUnauthorized();
  return response;
}

const auth: Middleware = {
  onRequest: ({ request }) => withToken(request),
  onResponse: ({ response }) => seen(response),
};

export const api = createClient<paths>({ baseUrl: window.location.origin });
api.use(auth);

/// A call the typed client cannot make: the webhook ingress, whose methods and bodies are an
/// HTTP trigger's own. Same origin, the same token, a 401 handled the same way.
export async function fetchWithToken(path: string, init: RequestInit): Promise<Response> {
  return seen(await fetch(withToken(new Request(new URL(path, window.location.origin), init))));
}

/// An `If-Match` value for a resource's `etag` field (the header wants it quoted).
export function ifMatch(etag: string): string {
  return etag.startsWith('"') || etag.startsWith("W/") ? etag : `"${etag}"`;
}
