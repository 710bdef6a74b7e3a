//! An HTTP-triggered invocation against a real handler: signed like queue deliveries, with the
//! invocation id as `webhook-id` and the caller's request id forwarded.

use std::time::Duration;

use serde_json::json;
use shoal_domain::egress::{AllowList, EgressPolicy};
use shoal_domain::trace_context::TraceContext;
use shoal_domain::webhooks::WebhookSecret;
use shoal_egress::Egress;
use shoal_invoker::{HttpInvocation, InvocationError, Invoker};
use shoal_testkit::handler::{Behaviour, RecordingHandler};
use uuid::Uuid;

/// The handlers here listen on loopback, which the invoker refuses unless allowed.
fn loopback_invoker() -> Invoker {
    let allow = AllowList::parse(shoal_testkit::EGRESS_ALLOW_LOOPBACK).unwrap();
    Invoker::new(Egress::new(EgressPolicy::new(allow, Vec::new())))
}

#[tokio::test]
async fn http_invocations_are_signed_with_the_invocation_id_and_carry_the_request_id() {
    let handler = RecordingHandler::start(Behaviour::Respond(
        json!({"Outputs": {"res": {"statusCode": 201}}}),
    ))
    .await
    .unwrap();
    let secret = WebhookSecret::from_bytes(vec![9; 32]).unwrap();
    let id = Uuid::now_v7();
    let body = br#"{"Data":{"req":{"Method":"POST"}},"Metadata":{}}"#.to_vec();
    let trace = TraceContext::parse(
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        Some("vendor=x"),
    )
    .unwrap();
    let response = loopback_invoker()
        .invoke_http(HttpInvocation {
            handler: handler.url(),
            function: "order",
            secret: &secret,
            invocation_id: id,
            request_id: Some("req-123"),
            body: body.clone(),
            timeout: Duration::from_secs(5),
            outputs: &["res"],
            trace: Some(&trace),
        })
        .await
        .unwrap();
    assert_eq!(response.outputs["res"], json!({"statusCode": 201}));

    let seen = &handler.requests()[0];
    assert_eq!(seen.function, "order");
    let webhook_id = seen.header("webhook-id").unwrap();
    assert_eq!(webhook_id, id.to_string());
    assert_eq!(seen.header("x-shoal-invocation-id"), Some(webhook_id));
    assert_eq!(seen.header("x-request-id"), Some("req-123"));
    assert_eq!(seen.header("x-shoal-worker"), None);
    // The call's place in its trace, for the handler's own spans.
    assert_eq!(
        seen.header("traceparent"),
        Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
    );
    assert_eq!(seen.header("tracestate"), Some("vendor=x"));
    let timestamp: i64 = seen.header("webhook-timestamp").unwrap().parse().unwrap();
    let signature = seen.header("webhook-signature").unwrap();
    assert!(secret.verify(webhook_id, timestamp, &body, signature));
}

#[tokio::test]
async fn a_failing_handler_is_a_status_error() {
    let handler = RecordingHandler::start(Behaviour::Status(500))
        .await
        .unwrap();
    let secret = WebhookSecret::from_bytes(vec![9; 32]).unwrap();
    let error = loopback_invoker()
        .invoke_http(HttpInvocation {
            handler: handler.url(),
            function: "order",
            secret: &secret,
            invocation_id: Uuid::now_v7(),
            request_id: None,
            body: b"{}".to_vec(),
            timeout: Duration::from_secs(5),
            outputs: &[],
            trace: None,
        })
        .await
        .unwrap_err();
    assert!(
        matches!(error, InvocationError::Status { status: 500, .. }),
        "{error}"
    );
    assert_eq!(handler.requests()[0].header("x-request-id"), None);
}
