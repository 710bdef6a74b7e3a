import { describe, expect, it } from "vitest";
import { allowedMethods, answerText, httpRequest, invokeUrl, problemOf, testable, type HttpForm } from "./invoke";

const path = { tenant: "contoso", app: "orders", function: "quote" };
const form: HttpForm = { method: "POST", query: "", headers: "", body: "", format: "json" };

describe("an HTTP trigger's test request", () => {
  it("is offered beside the test messages, and not for a timer", () => {
    expect(["httpTrigger", "queueTrigger", "kafkaTrigger"].map(testable)).toEqual([true, true, true]);
    expect(testable("timerTrigger")).toBe(false);
  });

  it("offers the methods the trigger allows, or every routed one when it names none", () => {
    expect(allowedMethods(["post", "Get"])).toEqual(["POST", "GET"]);
    expect(allowedMethods(undefined)).toEqual(["POST", "GET", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]);
    expect(allowedMethods(["trace"])).toEqual([]);
  });

  it("goes to the function's webhook, its query string as typed", () => {
    expect(invokeUrl(path, "")).toBe("/webhooks/contoso/orders/quote");
    expect(invokeUrl(path, " ?size=2&mode=async ")).toBe("/webhooks/contoso/orders/quote?size=2&mode=async");
    expect(invokeUrl({ ...path, function: "a b" }, "")).toBe("/webhooks/contoso/orders/a%20b");
  });

  it("labels a JSON body as JSON and a text body as text, unless a Content-Type is given", () => {
    expect(httpRequest({ ...form, body: '{"order": 7}' }, path)).toEqual({
      ok: true,
      request: { method: "POST", url: "/webhooks/contoso/orders/quote", headers: { "Content-Type": "application/json" }, body: '{"order": 7}' },
    });
    expect(httpRequest({ ...form, body: "hi", format: "text", headers: "content-type=text/csv\nX-Trace=1" }, path)).toEqual({
      ok: true,
      request: { method: "POST", url: "/webhooks/contoso/orders/quote", headers: { "content-type": "text/csv", "X-Trace": "1" }, body: "hi" },
    });
  });

  it("sends no body when none is typed, and none with GET", () => {
    expect(httpRequest(form, path)).toEqual({ ok: true, request: { method: "POST", url: "/webhooks/contoso/orders/quote", headers: {} } });
    expect(httpRequest({ ...form, method: "get", query: "id=7" }, path)).toEqual({
      ok: true,
      request: { method: "GET", url: "/webhooks/contoso/orders/quote?id=7", headers: {} },
    });
  });

  it("says at its field what cannot be sent, and sends nothing", () => {
    const built = httpRequest({ ...form, method: "GET", body: "x", headers: "Authorization=Bearer x\nbad" }, path);
    expect(built.ok).toBe(false);
    if (!built.ok) {
      expect(built.errors).toEqual([
        { path: "headers", message: "line 2: write name=value" },
        { path: "headers", message: "Authorization is your sign-in token, sent for you; the handler never gets it" },
        { path: "body", message: "a GET request has no body: leave it empty" },
      ]);
    }
    const none = httpRequest({ ...form, method: "" }, path);
    expect(none.ok ? [] : none.errors).toEqual([{ path: "method", message: "choose one of the methods the trigger allows" }]);
    const notJson = httpRequest({ ...form, body: "{order" }, path);
    expect(notJson.ok ? [] : notJson.errors.map((e) => e.path)).toEqual(["body"]);
  });
});

describe("the ingress's answer", () => {
  const problem = { type: "about:blank", title: "Bad Gateway", status: 502, detail: "the handler answered 500", errors: [{ path: "Outputs.res.statusCode", message: "must be a status" }] };

  it("is a problem only when it says so and is an error", () => {
    const answer = { status: 502, statusText: "Bad Gateway", contentType: "application/problem+json", body: JSON.stringify(problem) };
    expect(problemOf(answer)).toEqual(problem);
    expect(problemOf({ ...answer, contentType: "application/json" })).toBeNull();
    expect(problemOf({ ...answer, status: 200 })).toBeNull();
    expect(problemOf({ ...answer, body: "not json" })).toBeNull();
  });

  it("says the status and what the body is", () => {
    expect(answerText({ status: 200, statusText: "OK", contentType: "application/json", body: '{"ok":true}' })).toBe(
      "The function answered 200 OK, with 11 bytes of application/json.",
    );
    expect(answerText({ status: 204, statusText: "", contentType: null, body: "" })).toBe("The function answered 204, with no body.");
  });
});
