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

const auth: Middleware = {
  onRequest({ request }) {
    const bearer = token();
    if (bearer) request.headers.set("Authorization", `Bearer ${bearer}`);
    return request;
  },
  onResponse({ response }) {
    if (response.status === 401) onUnauthorized();
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: window.location.origin });
api.use(auth);

/// An `If-Match` value for a resource's `etag` field (the header wants it quoted).
export function ifMatch(etag: string): string {
  return etag.startsWith('"') || etag.startsWith("W/") ? etag : `"${etag}"`;
}
