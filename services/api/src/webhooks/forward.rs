//! The ingress's path for `customHandler.enableForwardingHttpRequest` (see
//! `shoal_domain::invocation::forward`): after the same token, permission, method, state, rate
//! and body-size checks as the envelope path, the caller's request goes to the handler as is
//! and the handler's response — any status, its headers, its body — is the caller's.
//!
//! `?mode=async` is refused for such a function: a queued invocation is stored and retried as
//! an envelope, and delivering an envelope to a handler written for raw requests would be
//! wrong in a way the tenant could not see.

use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use shoal_invoker::{ForwardedRequest, ForwardedResponse, Invoker};
use uuid::Uuid;

use super::catalog::{HttpApp, HttpFunction};
use super::errors::{HandlerFailure, WebhookError};
use super::invoke::passed_through;

pub async fn forward(
    invoker: &Invoker,
    app: &HttpApp,
    function: &HttpFunction,
    parts: &Parts,
    query: Option<&str>,
    body: Bytes,
) -> Result<Response, WebhookError> {
    let invocation_id = Uuid::now_v7();
    let headers: Vec<(&str, &[u8])> = parts
        .headers
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_bytes()))
        .collect();
    let answer = invoker
        .forward_http(ForwardedRequest {
            handler: &app.handler,
            function: &function.name,
            secret: &app.secret,
            invocation_id,
            method: parts.method.as_str(),
            query,
            headers: &headers,
            body: body.to_vec(),
            timeout: app.timeout,
        })
        .await;
    match answer {
        Ok(answer) => Ok(raw_response(answer, invocation_id)),
        Err(error) => {
            tracing::warn!(
                tenant = %app.tenant, app = %app.name, function = %function.name,
                invocation = %invocation_id, %error, "forwarded webhook delivery failed"
            );
            Err(WebhookError::Handler(HandlerFailure::from_invocation(
                &error,
            )))
        }
    }
}

/// The handler's raw response as the caller's.
fn raw_response(answer: ForwardedResponse, id: Uuid) -> Response {
    let ForwardedResponse {
        status,
        headers,
        body,
    } = answer;
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    let headers = headers
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_slice()));
    passed_through(status, headers, Body::from(body), id)
}
