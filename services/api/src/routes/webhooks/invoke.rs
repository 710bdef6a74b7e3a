//! `POST /webhooks/{tenant}/{app}/{function}` (and the other methods the trigger allows): the
//! caller's request delivered to the function's handler as an HTTP trigger, the handler's
//! response returned; with `?mode=async`, queued and answered 202.
//!
//! The order of checks is deliberate: the token (401) and the invoke permission before
//! anything about the app is revealed; unknown tenants, apps and functions, and functions
//! without an `httpTrigger` (or disabled), all answer the same 404; the app's token bucket
//! (what admits an ingress request, not the management API's throttle: see
//! `webhooks::caller`) before the body is read, so a flood is turned away cheaply; the body's
//! size before and while it is read. In the steady state nothing here touches Postgres except
//! `mode=async`.

use std::borrow::Cow;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use serde::Serialize;
use shoal_domain::invocation::http::{HttpDelivery, HttpRequestData, HttpResult, http_payload};
use shoal_domain::invocation_log::facts_of;
use shoal_domain::names::{AppName, FunctionName, TenantName};
use shoal_store::begin_tenant;
use shoal_store::webhook_invocations::{self, NewInvocation};
use utoipa::ToSchema;
use uuid::Uuid;

use super::TAG_WEBHOOKS;
use super::caller::WebhookCaller;
use crate::error::{ApiError, Problem};
use crate::extract::InvokedFunction;
use crate::problem::REQUEST_ID;
use crate::request_spans::RequestTrace;
use crate::state::AppState;
use crate::webhooks::body::{check_declared_length, read_limited};
use crate::webhooks::catalog::{HttpApp, HttpFunction};
use crate::webhooks::delivery::{Call, deliver};
use crate::webhooks::errors::WebhookError;
use crate::webhooks::forward::{forward, passed_through};
use shoal_domain::trace_context::TraceContext;

/// What `?mode=async` answers with, beside `Location`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AcceptedInvocation {
    /// The invocation's id; also the `webhook-id` the handler receives.
    pub id: Uuid,
    /// Where to read the invocation's status and, once there, its response.
    #[schema(
        example = "https://shoal.example/webhooks/contoso/orders/order/invocations/0190c2d2-8a6f-7cc3-9b1e-2f6d1c2e4b5a"
    )]
    pub status_query_get_uri: String,
}

/// Invoke an HTTP-triggered function. The request (method, URL, query, headers without
/// `Authorization`, body) is delivered to the app's handler as `Data.<trigger>` of a signed
/// custom-handler request, and the handler's HTTP output (`Outputs.<http output>`, or
/// `ReturnValue` for `$return`) comes back as this response. Other methods the trigger's
/// `methods` allow work the same way. Needs the data action
/// `Shoal/apps/functions/invoke/action` (the Function Invoker role) at the function or above.
/// When the app sets `hostConfig.customHandler.enableForwardingHttpRequest` and the function's
/// only bindings are its `httpTrigger` and one `http` output, the request is forwarded to
/// `{handler.url}/{function}` as is (method, query, headers, body; signed the same way) and the
/// handler's response, whatever its status, is returned as is; `mode=async` is then 400.
#[utoipa::path(post, path = "/webhooks/{tenant}/{app}/{function}", tag = TAG_WEBHOOKS,
    params(
        ("tenant" = TenantName, Path), ("app" = AppName, Path), ("function" = FunctionName, Path),
        ("mode" = Option<String>, Query,
            description = "`async`: queue the invocation, answer 202 at once and deliver it with retries (the parameter is not passed on to the handler)")
    ),
    request_body(content = String, content_type = "*/*",
        description = "Any body up to the app's `webhooks.maxRequestBodyBytes`; the handler gets it as `Body` (text, or base64 for binary content)"),
    responses(
        (status = 200, description = "The function's response: status, headers and body are the handler's (any status it chose, 204 when it set none)"),
        (status = 202, description = "Queued (`?mode=async`)", body = AcceptedInvocation,
            headers(("Location" = String, description = "The invocation's status URL"))),
        (status = 400, description = "Malformed request: a query string, header or body that cannot be read; or `mode=async` for a function whose request is forwarded as is", body = Problem),
        (status = 405, description = "The trigger does not allow this method", body = Problem),
        (status = 413, description = "The body is larger than the app's `webhooks.maxRequestBodyBytes`", body = Problem),
        (status = 429, description = "The app's `webhooks.requestsPerSecond` and `burst` are used up, or the caller (or its tenant) has used up its budget of refused webhook requests (401, 403, 404); retry after `Retry-After` seconds", body = Problem),
        (status = 502, description = "The handler could not be reached, timed out, failed or answered something that is not a valid response; `errors[].path` names a field of its response at fault", body = Problem),
        (status = 503, description = "The app is stopped, or Postgres is unavailable", body = Problem),
    ))]
pub async fn invoke(
    State(state): State<AppState>,
    caller: WebhookCaller,
    InvokedFunction(tenant, app, function): InvokedFunction,
    request: Request,
) -> Result<Response, WebhookError> {
    let (app, function) = caller.function(&state, &tenant, &app, &function).await?;

    let (parts, body) = request.into_parts();
    if !function.allows(parts.method.as_str()) {
        return Err(WebhookError::MethodNotAllowed {
            allowed: function.methods.clone().unwrap_or_default(),
        });
    }
    if !app.running {
        return Err(WebhookError::AppStopped);
    }
    app.admit(Instant::now())
        .map_err(|wait| WebhookError::RateLimited {
            retry_after_seconds: wait.seconds(),
        })?;
    let limit = app.limits.max_request_body_bytes;
    check_declared_length(&parts.headers, limit)?;
    let body = read_limited(body, limit).await?;

    let (queued, query) = take_async_mode(parts.uri.query());
    if function.forward {
        if queued {
            return Err(WebhookError::AsyncNotForwarded);
        }
        return forward(
            &app.invoker,
            state.webhooks.recording(),
            &app,
            &function,
            &parts,
            query.as_deref(),
            body,
        )
        .await;
    }
    let url = request_url(&parts, query.as_deref());
    let headers: Vec<(&str, Cow<'_, str>)> = parts
        .headers
        .iter()
        .map(|(name, value)| (name.as_str(), String::from_utf8_lossy(value.as_bytes())))
        .collect();
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_ref())).collect();
    let request = HttpRequestData {
        method: parts.method.as_str(),
        url: &url,
        query: query.as_deref(),
        headers: &headers,
        body: &body,
    };
    let invocation_id = Uuid::now_v7();
    let payload = http_payload(&HttpDelivery {
        binding: &function.trigger,
        function: &function.name,
        request: &request,
        now: Utc::now(),
        rand_guid: &Uuid::new_v4().to_string(),
    });
    let recording = state.webhooks.recording();
    let preview = recording
        .is_on()
        .then(|| facts_of(&payload, &function.trigger).payload)
        .flatten();
    let payload = serde_json::to_vec(&payload)
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("serializing a webhook payload: {e}")))?;
    let request_id = parts.headers.get(REQUEST_ID).and_then(|v| v.to_str().ok());

    if queued {
        let status_url = format!("{}/invocations/{invocation_id}", base_url(&parts));
        enqueue(&state, &app, &function, invocation_id, &payload, request_id).await?;
        return Ok(accepted(invocation_id, status_url));
    }
    // Under the request's span when it is exported, else straight under the caller's.
    let caller = match parts.extensions.get::<RequestTrace>() {
        Some(RequestTrace(request)) => Some(request.clone()),
        None => TraceContext::extract(|name| parts.headers.get(name).and_then(|v| v.to_str().ok())),
    };
    let call = Call {
        app: &app,
        function: &function,
        invocation_id,
        retry_count: 0,
        request_id,
        caller: caller.as_ref(),
        preview,
    };
    let result = deliver(&app.invoker, recording, call, payload)
        .await
        .map_err(WebhookError::Handler)?;
    Ok(function_response(result, invocation_id))
}

/// Durably queued before the 202 goes out; the insert's notification wakes a dispatcher.
async fn enqueue(
    state: &AppState,
    app: &HttpApp,
    function: &HttpFunction,
    id: Uuid,
    payload: &[u8],
    request_id: Option<&str>,
) -> Result<(), WebhookError> {
    let mut tx = begin_tenant(&state.pool, &app.tenant).await?;
    let queued = NewInvocation {
        app: &app.name,
        function: &function.name,
        id,
        payload,
        request_id,
    };
    webhook_invocations::enqueue(&mut tx, &app.tenant, &state.cipher, &queued).await?;
    shoal_store::commit(tx).await?;
    Ok(())
}

fn accepted(id: Uuid, status_url: String) -> Response {
    let location = HeaderValue::from_str(&status_url).ok();
    let mut response = (
        StatusCode::ACCEPTED,
        axum::Json(AcceptedInvocation {
            id,
            status_query_get_uri: status_url,
        }),
    )
        .into_response();
    if let Some(location) = location {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
}

/// The handler's response as the caller's (see [`passed_through`]).
fn function_response(result: HttpResult, id: Uuid) -> Response {
    let status = StatusCode::from_u16(result.status).unwrap_or(StatusCode::OK);
    let headers = result
        .headers
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_bytes()));
    passed_through(status, headers, Body::from(result.body.to_bytes()), id)
}

/// Whether the query asks for `mode=async`, and the query without it: the parameter is
/// Shoal's, the function never sees it. Any other `mode` passes through untouched.
fn take_async_mode(query: Option<&str>) -> (bool, Option<String>) {
    let Some(query) = query else {
        return (false, None);
    };
    let mut queued = false;
    let kept: Vec<&str> = query
        .split('&')
        .filter(|pair| {
            let is_async = pair.eq_ignore_ascii_case("mode=async");
            queued |= is_async;
            !is_async
        })
        .collect();
    let kept = kept.join("&");
    (queued, (!kept.is_empty()).then_some(kept))
}

/// `scheme://host/path` as the caller addressed this request: the scheme a proxy in front
/// reports (`X-Forwarded-Proto`), else http; the `Host` header.
fn base_url(parts: &Parts) -> String {
    let scheme = parts
        .headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(',').next())
        .map(str::trim)
        .filter(|v| matches!(*v, "http" | "https"))
        .unwrap_or("http");
    let host = parts
        .headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .or_else(|| parts.uri.authority().map(|a| a.as_str()))
        .unwrap_or("localhost");
    format!("{scheme}://{host}{}", parts.uri.path())
}

/// `Data.req.Url`: the URL the caller used, less Shoal's own `mode` parameter.
fn request_url(parts: &Parts, query: Option<&str>) -> String {
    let mut url = base_url(parts);
    if let Some(query) = query {
        url.push('?');
        url.push_str(query);
    }
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn async_mode_is_taken_out_of_the_query() {
        assert_eq!(take_async_mode(None), (false, None));
        assert_eq!(take_async_mode(Some("mode=async")), (true, None));
        assert_eq!(
            take_async_mode(Some("a=1&mode=async&b=2")),
            (true, Some("a=1&b=2".into()))
        );
        assert_eq!(
            take_async_mode(Some("mode=dark&a=1")),
            (false, Some("mode=dark&a=1".into()))
        );
    }

    #[test]
    fn urls_follow_the_host_and_the_forwarded_scheme() {
        let request = axum::http::Request::builder()
            .uri("/webhooks/contoso/orders/order?x=1")
            .header("host", "shoal.example:8443")
            .header("x-forwarded-proto", "https, http")
            .body(())
            .unwrap();
        let (parts, ()) = request.into_parts();
        assert_eq!(
            request_url(&parts, Some("x=1")),
            "https://shoal.example:8443/webhooks/contoso/orders/order?x=1"
        );
        let request = axum::http::Request::builder()
            .uri("/webhooks/contoso/orders/order")
            .header("host", "127.0.0.1:9")
            .header("x-forwarded-proto", "gopher")
            .body(())
            .unwrap();
        let (parts, ()) = request.into_parts();
        assert_eq!(
            base_url(&parts),
            "http://127.0.0.1:9/webhooks/contoso/orders/order"
        );
    }
}
