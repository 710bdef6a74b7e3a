//! One call of an HTTP-triggered function's handler, the same for a request answered at once
//! and for a queued one: signed custom-handler POST through the shared [`Invoker`], then the
//! handler's response mapped to the caller's by the domain's rules, and the call recorded in
//! the invocation log ([`super::recording`]).

use std::time::Instant;

use chrono::Utc;
use opentelemetry::KeyValue;
use opentelemetry::trace::{Span as _, SpanKind, Status};
use serde_json::{Map, Value};
use shoal_domain::invocation::http::{HttpResult, http_response};
use shoal_domain::invocation_log::Preview;
use shoal_domain::trace_context::TraceContext;
use shoal_invoker::{HttpInvocation, InvocationError, Invoker};
use shoal_trace_export::span::{self, Parent};
use uuid::Uuid;

use super::catalog::{HttpApp, HttpFunction};
use super::errors::HandlerFailure;
use super::recording::{Attempt, Outcome, Recording};

/// One call to make: whose handler, under which id, and what the invocation log keeps of it.
pub struct Call<'a> {
    pub app: &'a HttpApp,
    pub function: &'a HttpFunction,
    /// `X-Shoal-Invocation-Id` and `webhook-id`; a queued invocation keeps it over its
    /// attempts.
    pub invocation_id: Uuid,
    /// Attempts of the same invocation before this one (a queued invocation's retries).
    pub retry_count: u32,
    pub request_id: Option<&'a str>,
    /// The trace context the caller's request carried (`traceparent`): the handler is called
    /// in a span under it, or at the root of a new trace when there is none (a queued
    /// invocation's caller has gone by then, so it starts one).
    pub caller: Option<&'a TraceContext>,
    /// What the invocation log keeps of the request (worked out only when it records).
    pub preview: Option<Preview>,
}

/// Calls the handler with `payload` and records the call ([`Recording`]).
pub async fn deliver(
    invoker: &Invoker,
    recording: &Recording,
    call: Call<'_>,
    payload: Vec<u8>,
) -> Result<HttpResult, HandlerFailure> {
    let trace = match call.caller {
        Some(caller) => caller.child(rand::random()),
        None => TraceContext::root(rand::random(), rand::random()),
    };
    let (started, since) = (Utc::now(), Instant::now());
    let (result, logs) = handler_call(invoker, &call, &trace, payload).await;
    let failure = result.as_ref().err().map(HandlerFailure::message);
    recording.record(
        Attempt {
            app: call.app,
            function: call.function,
            invocation_id: call.invocation_id,
            retry_count: call.retry_count,
            preview: call.preview,
            trace: Some(&trace),
            started,
            since,
        },
        Outcome {
            logs: &logs,
            failure: failure.as_deref(),
        },
    );
    result
}

/// The signed call itself, in its span, and the handler's `Logs` when it answered.
async fn handler_call(
    invoker: &Invoker,
    call: &Call<'_>,
    trace: &TraceContext,
    payload: Vec<u8>,
) -> (Result<HttpResult, HandlerFailure>, Vec<String>) {
    let Call {
        app,
        function,
        invocation_id,
        ..
    } = *call;
    let outputs: Vec<&str> = function.outputs.iter().map(String::as_str).collect();
    // The handler call's span, exported with the ids the handler is sent. Its parent is the
    // request's span (`request_spans`), made here: with export on the ingress passes that.
    let mut span = span::start(
        crate::request_spans::SCOPE,
        "invoke".into(),
        SpanKind::Client,
        trace,
        call.caller.map_or(Parent::None, Parent::Local),
    );
    if span.is_recording() {
        span.set_attributes([
            KeyValue::new("shoal.tenant", app.tenant.to_string()),
            KeyValue::new("shoal.app", app.name.to_string()),
            KeyValue::new("shoal.function", function.name.to_string()),
            // As the worker's spans name it (`shoal_worker`'s `spans`): `<app>/<function>`.
            KeyValue::new("faas.name", format!("{}/{}", app.name, function.name)),
            KeyValue::new("faas.invocation_id", invocation_id.to_string()),
        ]);
    }
    let answer = invoker
        .invoke_http(HttpInvocation {
            handler: &app.handler,
            function: &function.name,
            secret: &app.secret,
            invocation_id,
            request_id: call.request_id,
            body: payload,
            timeout: app.timeout,
            outputs: &outputs,
            trace: Some(trace),
        })
        .await;
    let response = match answer {
        Ok(response) => {
            span.end();
            response
        }
        Err(error) => {
            if let Some(status) = error.status() {
                span.set_attribute(KeyValue::new(
                    "http.response.status_code",
                    i64::from(status),
                ));
            }
            span.set_attribute(KeyValue::new("error.type", error.label()));
            span.set_status(Status::error(error.label()));
            span.end();
            // Never the handler's error body: it may echo the caller's request. The tenant's
            // own handler URL may appear in a connection error; the secret never does.
            let reason = match &error {
                InvocationError::Status { status, .. } => format!("the handler answered {status}"),
                other => other.to_string(),
            };
            tracing::warn!(
                tenant = %app.tenant, app = %app.name, function = %function.name,
                invocation = %invocation_id, error = %reason, "webhook delivery failed"
            );
            return (Err(HandlerFailure::from_invocation(&error)), Vec::new());
        }
    };
    for line in &response.logs {
        tracing::info!(
            tenant = %app.tenant, app = %app.name, function = %function.name,
            invocation = %invocation_id, "handler: {line}"
        );
    }
    if !response.undeclared_outputs.is_empty() {
        // Ignored, as Azure's host ignores outputs the function does not declare.
        tracing::debug!(
            tenant = %app.tenant, app = %app.name, function = %function.name,
            invocation = %invocation_id, outputs = ?response.undeclared_outputs,
            "the handler's response sets outputs that are no output binding; ignored"
        );
    }
    let unwritten: Vec<&String> = function
        .unwritten_outputs
        .iter()
        .filter(|name| response.outputs.contains_key(name.as_str()))
        .collect();
    if !unwritten.is_empty() {
        tracing::warn!(
            tenant = %app.tenant, app = %app.name, function = %function.name,
            invocation = %invocation_id, outputs = ?unwritten,
            "the webhook ingress writes only the HTTP response; these outputs were not written"
        );
    }
    let result = http_response(&response, function.http_output()).map_err(|error| {
        tracing::warn!(
            tenant = %app.tenant, app = %app.name, function = %function.name,
            invocation = %invocation_id, %error, "the handler's HTTP response is invalid"
        );
        HandlerFailure::from_response_field(error)
    });
    (result, response.logs)
}

/// `{statusCode, headers, body}` as an async invocation's status shows the response; a
/// header given more than once is an array.
pub fn response_document(result: &HttpResult) -> Value {
    let mut headers: Map<String, Value> = Map::new();
    for (name, value) in &result.headers {
        match headers.get_mut(name) {
            Some(Value::Array(values)) => values.push(Value::String(value.clone())),
            Some(single) => {
                let first = single.take();
                *single = Value::Array(vec![first, Value::String(value.clone())]);
            }
            None => {
                headers.insert(name.clone(), Value::String(value.clone()));
            }
        }
    }
    serde_json::json!({
        "statusCode": result.status,
        "headers": headers,
        "body": result.body.to_json(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use shoal_domain::invocation::http::HttpBody;

    use super::*;

    #[test]
    fn repeated_headers_become_arrays() {
        let result = HttpResult {
            status: 201,
            headers: vec![
                ("Set-Cookie".into(), "a=1".into()),
                ("X-One".into(), "1".into()),
                ("Set-Cookie".into(), "b=2".into()),
                ("Set-Cookie".into(), "c=3".into()),
            ],
            body: HttpBody::Json(json!({"ok": true})),
        };
        assert_eq!(
            response_document(&result),
            json!({
                "statusCode": 201,
                "headers": {"Set-Cookie": ["a=1", "b=2", "c=3"], "X-One": "1"},
                "body": {"ok": true}
            })
        );
    }
}
