//! The ingress's path for `customHandler.enableForwardingHttpRequest` (see
//! `shoal_domain::invocation::forward`): after the same token, permission, method, state, rate
//! and body-size checks as the envelope path, the caller's request goes to the handler as is
//! and the handler's response — any status, its headers, its body — is the caller's.
//!
//! `?mode=async` is refused for such a function: a queued invocation is stored and retried as
//! an envelope, and delivering an envelope to a handler written for raw requests would be
//! wrong in a way the tenant could not see.

use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::http::request::Parts;
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use chrono::Utc;
use shoal_invoker::{ForwardedRequest, ForwardedResponse, Invoker};
use uuid::Uuid;

use super::catalog::{HttpApp, HttpFunction};
use super::errors::{HandlerFailure, WebhookError};
use super::recording::{Attempt, Outcome, Recording};

pub async fn forward(
    invoker: &Invoker,
    recording: &Recording,
    app: &HttpApp,
    function: &HttpFunction,
    parts: &Parts,
    query: Option<&str>,
    body: Bytes,
) -> Result<Response, WebhookError> {
    let invocation_id = Uuid::now_v7();
    let (started, since) = (Utc::now(), Instant::now());
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
    let answer = answer.map_err(|error| {
        tracing::warn!(
            tenant = %app.tenant, app = %app.name, function = %function.name,
            invocation = %invocation_id, %error, "forwarded webhook delivery failed"
        );
        HandlerFailure::from_invocation(&error)
    });
    // Whatever status the handler chose is its answer, so only no answer is a failure; the
    // request is not previewed (nothing reads it as the trigger's data) and there are no
    // `Logs` outside the envelope.
    let failure = answer.as_ref().err().map(HandlerFailure::message);
    let attempt = Attempt {
        app,
        function,
        invocation_id,
        retry_count: 0,
        preview: None,
        trace: None,
        started,
        since,
    };
    let outcome = Outcome {
        logs: &[],
        failure: failure.as_deref(),
    };
    recording.record(attempt, outcome);
    match answer {
        Ok(answer) => Ok(raw_response(answer, invocation_id)),
        Err(failure) => Err(WebhookError::Handler(failure)),
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

/// A response the handler chose, passed to the caller as is: its headers (validated by the
/// domain already; anything the http crate still refuses is dropped), the invocation id, and
/// the mark that makes the problem middleware pass a 4xx or 5xx through untouched.
pub(crate) fn passed_through<'a>(
    status: StatusCode,
    handler_headers: impl Iterator<Item = (&'a str, &'a [u8])>,
    body: Body,
    id: Uuid,
) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    let headers = response.headers_mut();
    for (name, value) in handler_headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_bytes(value),
        ) {
            headers.append(name, value);
        }
    }
    if let Ok(id) = HeaderValue::from_str(&id.to_string()) {
        headers.insert(shoal_invoker::HEADER_INVOCATION_ID, id);
    }
    response
        .extensions_mut()
        .insert(crate::problem::ProtocolError);
    response
}
