// A test request to an HTTP-triggered function, as the send form has it, turned into a call of
// the webhook ingress (`/webhooks/{tenant}/{app}/{function}`), and the ingress's answer in
// words. The dashboard calls the ingress with the signed-in person's own token: the ingress
// authenticates it exactly as the management API does and allows it when the person's roles
// grant the data action `Shoal/apps/functions/invoke/action` at the function (Owner and
// Function Invoker do; Contributor and Reader do not). The caller's view of its roles lists
// management actions only, so the page cannot tell beforehand: a refusal is the API's 403,
// shown as it comes. No other way in is used — the dashboard gets no invoke rights of its own.

import type { FieldError } from "../../problem";
import { isProblem } from "../../problem";
import { parseProperties, sendsTestMessages } from "./message";

export const HTTP_TRIGGER = "httpTrigger";

/// Whether the page offers a test for a trigger: a message through the API, or a request to
/// an HTTP trigger's webhook.
export function testable(triggerType: string): boolean {
  return sendsTestMessages(triggerType) || triggerType === HTTP_TRIGGER;
}

/// Every method the ingress routes, in the order the form offers them (TRACE never is).
const ROUTED = ["POST", "GET", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/// The methods a trigger allows: its `methods`, or every routed one when it names none (as the
/// ingress decides).
export function allowedMethods(methods: unknown): string[] {
  if (!Array.isArray(methods)) return ROUTED;
  const named = new Set(methods.filter((m): m is string => typeof m === "string").map((m) => m.toUpperCase()));
  return ROUTED.filter((m) => named.has(m));
}

export interface HttpForm {
  method: string;
  /// As typed, with or without its leading `?`.
  query: string;
  /// `name=value` lines.
  headers: string;
  body: string;
  /// `json` checks that the body is JSON and labels it so; `text` sends it as typed.
  format: "json" | "text";
}

export interface HttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

export type BuiltHttp = { ok: true; request: HttpRequest } | { ok: false; errors: FieldError[] };

type Path = { tenant: string; app: string; function: string };

/// The ingress's address of a function, with a query string when one is given.
export function invokeUrl(path: Path, query: string): string {
  const base = `/webhooks/${[path.tenant, path.app, path.function].map(encodeURIComponent).join("/")}`;
  const q = query.trim().replace(/^\?/, "");
  return q ? `${base}?${q}` : base;
}

/// The request the form asks for, or what is wrong at each field (nothing is sent then).
export function httpRequest(form: HttpForm, path: Path): BuiltHttp {
  const errors: FieldError[] = [];
  const headers = parseProperties(form.headers, errors, "headers");
  const names = Object.keys(headers).map((n) => n.toLowerCase());
  if (names.includes("authorization")) {
    errors.push({ path: "headers", message: "Authorization is your sign-in token, sent for you; the handler never gets it" });
  }
  const method = form.method.toUpperCase();
  if (!ROUTED.includes(method)) errors.push({ path: "method", message: "choose one of the methods the trigger allows" });
  const bodiless = method === "GET" || method === "HEAD";
  if (bodiless && form.body !== "") errors.push({ path: "body", message: `a ${method} request has no body: leave it empty` });
  if (!bodiless && form.format === "json" && form.body !== "") {
    try {
      JSON.parse(form.body);
    } catch (e) {
      errors.push({ path: "body", message: `is not JSON: ${(e as Error).message}` });
    }
  }
  if (errors.length) return { ok: false, errors };
  const request: HttpRequest = { method, url: invokeUrl(path, form.query), headers };
  if (!bodiless && form.body !== "") {
    request.body = form.body;
    if (!names.includes("content-type")) {
      request.headers["Content-Type"] = form.format === "json" ? "application/json" : "text/plain; charset=utf-8";
    }
  }
  return { ok: true, request };
}

/// What the ingress answered: the handler's own response, or the ingress's problem.
export interface Answer {
  status: number;
  statusText: string;
  contentType: string | null;
  body: string;
}

/// The problem+json the ingress (or the handler) answered with, or null.
export function problemOf(answer: Answer): unknown {
  if (answer.status < 400 || !(answer.contentType ?? "").toLowerCase().startsWith("application/problem+json")) return null;
  try {
    const parsed: unknown = JSON.parse(answer.body);
    return isProblem(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/// The answer's first line: its status and what its body is.
export function answerText(answer: Answer): string {
  const status = `${answer.status}${answer.statusText ? ` ${answer.statusText}` : ""}`;
  const size = new TextEncoder().encode(answer.body).length;
  const body = size === 0 ? "with no body" : `with ${size} bytes${answer.contentType ? ` of ${answer.contentType}` : ""}`;
  return `The function answered ${status}, ${body}.`;
}
