//! The webhook ingress's calls in the invocation log, as the workers' deliveries are: a call
//! answered at once, one that failed, and a queued one retried, each an invocation with its
//! attempts, the handler's `Logs`, its trace id and the request without its headers; and a
//! forwarded request, which keeps no preview. Against real Postgres and a real handler.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_api::identity::Role;
use shoal_testkit::handler::{Behaviour, RecordingHandler};
use tokio::time::Instant;

use crate::helpers::{Fetch, TestApp};

const FUNCTION: &str = "/v1/tenants/contoso/apps/orders/functions";

/// A test app with tenant `contoso` and its app `orders`, written with `body`.
async fn orders_app(body: Value) -> TestApp {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let created = app.put_app("contoso", "orders", &body).await;
    assert_eq!(created.status(), StatusCode::CREATED);
    app
}

async fn put_function(app: &TestApp, name: &str, bindings: Value) {
    let response = app
        .admin(Method::PUT, &format!("{FUNCTION}/{name}"))
        .json(&json!({ "bindings": bindings }))
        .fetch()
        .await;
    assert!(response.status().is_success(), "{}", response.status());
}

/// The function's invocations once `count` are logged (the ingress writes once a second).
async fn logged(app: &TestApp, function: &str, count: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let log = app
            .admin(Method::GET, &format!("{FUNCTION}/{function}/invocationLog"))
            .fetch_json()
            .await;
        let items = log["items"].as_array().cloned().unwrap_or_default();
        if items.len() >= count {
            return items;
        }
        assert!(Instant::now() < deadline, "not {count} within 30 s: {log}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn calls_answered_failed_and_queued_are_logged_with_their_attempts() {
    let handler = RecordingHandler::start(Behaviour::Respond(json!({
        "Outputs": {"res": {"statusCode": 201, "body": {"accepted": true}}},
        "Logs": ["order accepted"]
    })))
    .await
    .unwrap();
    let app =
        orders_app(json!({"handler": {"url": handler.url().as_str(), "timeoutSeconds": 5}})).await;
    put_function(
        &app,
        "order",
        json!([
            {"type": "httpTrigger", "direction": "in", "name": "req", "methods": ["post"]},
            {"type": "http", "direction": "out", "name": "res"}
        ]),
    )
    .await;
    let token = app.token_for("contoso", Role::FunctionInvoker);
    let webhook = "/webhooks/contoso/orders/order";
    let call = |path: String| {
        app.request(Method::POST, &path, Some(&token))
            .header("x-api-key", "s3cret-header")
            .body(r#"{"id":1005}"#)
    };

    let answered = call(format!("{webhook}?id=7")).fetch().await;
    assert_eq!(answered.status(), StatusCode::CREATED);
    let answered_id = answered.headers()["x-shoal-invocation-id"]
        .to_str()
        .unwrap()
        .to_owned();
    handler.script(vec![Behaviour::Status(500)]);
    let failed = call(webhook.to_owned()).fetch().await;
    assert_eq!(failed.status(), StatusCode::BAD_GATEWAY);
    // Queued: the first attempt fails, its retry (a second later) succeeds.
    handler.script(vec![Behaviour::Status(503)]);
    let queued = call(format!("{webhook}?mode=async")).fetch().await;
    assert_eq!(queued.status(), StatusCode::ACCEPTED);
    let queued_id = queued.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();

    let deadline = Instant::now() + Duration::from_secs(30);
    let items = loop {
        let items = logged(&app, "order", 3).await;
        let retried = items
            .iter()
            .find(|i| i["deliveryKey"] == queued_id.as_str());
        if retried.is_some_and(|i| i["attemptCount"] == 2) {
            break items;
        }
        assert!(
            Instant::now() < deadline,
            "the retry was not logged: {items:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(items.len(), 3, "{items:?}");
    let by_key = |key: &str| {
        items
            .iter()
            .find(|i| i["deliveryKey"] == key)
            .unwrap_or_else(|| panic!("no invocation {key}: {items:?}"))
    };

    let ok = by_key(&answered_id);
    assert_eq!(ok["status"], "succeeded");
    let attempt = &ok["attempts"][0];
    assert_eq!(attempt["invocationId"], answered_id.as_str());
    assert_eq!(attempt["worker"], "api-test");
    assert_eq!(attempt["retryCount"], 0);
    assert_eq!(attempt["logs"], json!(["order accepted"]));
    let trace_id = attempt["traceId"].as_str().unwrap();
    assert!(
        shoal_domain::trace_context::is_trace_id(trace_id),
        "{trace_id}"
    );
    // The handler was sent that very trace.
    let sent = handler.requests()[0]
        .header("traceparent")
        .unwrap()
        .to_owned();
    assert!(sent.contains(trace_id), "{sent} vs {trace_id}");
    // The request as the trigger's data, never its headers (the bearer token among them).
    let payload = ok["payload"].as_str().unwrap();
    assert!(payload.contains(r#""Method":"POST""#), "{payload}");
    assert!(
        payload.contains("1005") && payload.contains("id=7"),
        "{payload}"
    );
    assert!(
        !payload.contains("s3cret-header") && !payload.contains(&token),
        "{payload}"
    );

    let refused = items
        .iter()
        .find(|i| {
            i["deliveryKey"] != answered_id.as_str() && i["deliveryKey"] != queued_id.as_str()
        })
        .unwrap();
    assert_eq!(refused["status"], "failed");
    assert_eq!(
        refused["attempts"][0]["error"],
        "the function's handler answered 500 Internal Server Error"
    );

    let retried = by_key(&queued_id);
    assert_eq!(retried["status"], "succeeded");
    let attempts = retried["attempts"].as_array().unwrap();
    let mut tries: Vec<(i64, &str)> = attempts
        .iter()
        .map(|a| {
            (
                a["retryCount"].as_i64().unwrap(),
                a["status"].as_str().unwrap(),
            )
        })
        .collect();
    tries.sort();
    assert_eq!(tries, [(0, "failed"), (1, "succeeded")], "{attempts:?}");
    assert!(
        retried["payload"].as_str().unwrap().contains("1005"),
        "{retried}"
    );
}

#[tokio::test]
async fn a_forwarded_request_is_logged_without_a_preview() {
    let handler = RecordingHandler::start(Behaviour::RespondHttp {
        status: 404,
        headers: vec![("content-type", "text/plain")],
        body: "no such order",
    })
    .await
    .unwrap();
    let app = orders_app(json!({
        "handler": {"url": handler.url().as_str()},
        "hostConfig": {"customHandler": {"enableForwardingHttpRequest": true}}
    }))
    .await;
    put_function(
        &app,
        "lookup",
        json!([
            {"type": "httpTrigger", "direction": "in", "name": "req"},
            {"type": "http", "direction": "out", "name": "res"}
        ]),
    )
    .await;
    let token = app.token_for("contoso", Role::FunctionInvoker);
    let answered = app
        .request(Method::GET, "/webhooks/contoso/orders/lookup", Some(&token))
        .fetch()
        .await;
    // The handler's own 404 is its answer, so the invocation succeeded.
    assert_eq!(answered.status(), StatusCode::NOT_FOUND);

    let items = logged(&app, "lookup", 1).await;
    assert_eq!(items[0]["status"], "succeeded", "{items:?}");
    assert_eq!(items[0]["attempts"][0]["worker"], "api-test");
    assert_eq!(items[0].get("payload"), None, "{items:?}");
}
