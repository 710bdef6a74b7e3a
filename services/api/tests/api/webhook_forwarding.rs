//! `customHandler.enableForwardingHttpRequest` against a real handler: the caller's request
//! reaches the handler as is, signed, and the handler's raw response comes back.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_api::identity::Role;
use shoal_domain::webhooks::WebhookSecret;
use shoal_testkit::handler::{Behaviour, RecordingHandler};

use crate::helpers::{Fetch, TestApp, problem};

const WEBHOOK: &str = "/webhooks/contoso/orders/order";

fn csv_answer(status: u16) -> Behaviour {
    Behaviour::RespondHttp {
        status,
        headers: vec![("content-type", "text/csv"), ("x-order", "1005")],
        body: "id,qty\n1005,2\n",
    }
}

/// `contoso/orders` with forwarding on or off, and its function `order` (an HTTP trigger and
/// one HTTP output) plus `audit` (the same with a queue output too).
async fn setup(handler: &RecordingHandler, forwarding: bool) -> (TestApp, String) {
    let app = TestApp::spawn().await;
    assert_eq!(
        app.put_tenant("contoso").await.status(),
        StatusCode::CREATED
    );
    let body = json!({
        "handler": {"url": handler.url().as_str(), "timeoutSeconds": 5},
        "hostConfig": {"version": "2.0", "customHandler": {
            "description": {"defaultExecutablePath": "handler"},
            "enableForwardingHttpRequest": forwarding
        }}
    });
    assert_eq!(
        app.put_app("contoso", "orders", &body).await.status(),
        StatusCode::CREATED
    );
    let trigger = json!({"type": "httpTrigger", "direction": "in", "name": "req", "methods": ["post", "get", "put"]});
    let res = json!({"type": "http", "direction": "out", "name": "res"});
    let queue =
        json!({"type": "queue", "direction": "out", "name": "audit", "queueName": "audit-log"});
    for (name, bindings) in [
        ("order", json!([trigger, res])),
        ("audit", json!([trigger, res, queue])),
    ] {
        let response = app
            .admin(
                Method::PUT,
                &format!("/v1/tenants/contoso/apps/orders/functions/{name}"),
            )
            .json(&json!({ "bindings": bindings }))
            .fetch()
            .await;
        assert!(response.status().is_success(), "{}", response.status());
    }
    let token = app.token_for("contoso", Role::FunctionInvoker);
    (app, token)
}

async fn signing_secret(app: &TestApp) -> WebhookSecret {
    let body = app
        .admin(
            Method::POST,
            "/v1/tenants/contoso/apps/orders/signingSecret/list",
        )
        .fetch_json()
        .await;
    WebhookSecret::parse(body["secret"].as_str().unwrap()).unwrap()
}

#[tokio::test]
async fn forwarding_hands_the_raw_request_to_the_handler_and_returns_its_raw_response() {
    let handler = RecordingHandler::start(csv_answer(201)).await.unwrap();
    let (app, token) = setup(&handler, true).await;

    let response = app
        .request(
            Method::PUT,
            &format!("{WEBHOOK}?id=7&tag=a&tag=b"),
            Some(&token),
        )
        .header("content-type", "text/plain")
        .header("x-custom", "yes")
        .header("webhook-signature", "v1,forged")
        .body("qty=2")
        .fetch()
        .await;

    assert_eq!(response.status(), StatusCode::CREATED);
    assert_eq!(response.headers()["content-type"], "text/csv");
    assert_eq!(response.headers()["x-order"], "1005");
    let invocation_id = response.headers()["x-shoal-invocation-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(response.text().await.unwrap(), "id,qty\n1005,2\n");

    let seen = &handler.requests()[0];
    assert_eq!(seen.function, "order");
    assert_eq!(seen.method, Method::PUT);
    assert_eq!(seen.query.as_deref(), Some("id=7&tag=a&tag=b"));
    assert_eq!(&seen.raw[..], b"qty=2", "the body as sent, no envelope");
    assert_eq!(seen.header("content-type"), Some("text/plain"));
    assert_eq!(seen.header("x-custom"), Some("yes"));
    assert!(
        seen.header("authorization").is_none(),
        "the caller's token stays with Shoal"
    );
    // Signed like every delivery, and the caller cannot supply the signature.
    let secret = signing_secret(&app).await;
    let webhook_id = seen.header("webhook-id").unwrap();
    assert_eq!(webhook_id, invocation_id);
    assert_eq!(seen.header("x-shoal-invocation-id"), Some(webhook_id));
    assert_eq!(seen.headers.get_all("webhook-signature").iter().count(), 1);
    let timestamp: i64 = seen.header("webhook-timestamp").unwrap().parse().unwrap();
    assert!(secret.verify(
        webhook_id,
        timestamp,
        &seen.raw,
        seen.header("webhook-signature").unwrap()
    ));
}

#[tokio::test]
async fn a_forwarded_handlers_error_status_is_the_callers_response() {
    let handler = RecordingHandler::start(csv_answer(500)).await.unwrap();
    let (app, token) = setup(&handler, true).await;
    let response = app
        .request(Method::GET, WEBHOOK, Some(&token))
        .fetch()
        .await;
    assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(response.headers()["content-type"], "text/csv");
    assert_eq!(response.text().await.unwrap(), "id,qty\n1005,2\n");
    assert_eq!(handler.requests()[0].method, Method::GET);
}

#[tokio::test]
async fn forwarding_keeps_the_envelope_for_other_functions_and_when_off() {
    let envelope = json!({"Outputs": {"res": {"statusCode": 200, "body": "enveloped"}}});
    let handler = RecordingHandler::start(Behaviour::Respond(envelope.clone()))
        .await
        .unwrap();
    // A function with another output needs the envelope to carry it, as in Azure.
    let (app, token) = setup(&handler, true).await;
    let response = app
        .request(Method::POST, "/webhooks/contoso/orders/audit", Some(&token))
        .body("x")
        .fetch()
        .await;
    assert_eq!(response.text().await.unwrap(), "enveloped");
    assert_eq!(handler.requests()[0].body["Data"]["req"]["Body"], "x");
    drop(app);

    let handler = RecordingHandler::start(Behaviour::Respond(envelope))
        .await
        .unwrap();
    let (app, token) = setup(&handler, false).await;
    let response = app
        .request(Method::POST, WEBHOOK, Some(&token))
        .body("x")
        .fetch()
        .await;
    assert_eq!(response.text().await.unwrap(), "enveloped");
    assert_eq!(handler.requests()[0].body["Data"]["req"]["Body"], "x");
}

#[tokio::test]
async fn async_mode_is_refused_for_a_forwarded_function() {
    let handler = RecordingHandler::start(csv_answer(200)).await.unwrap();
    let (app, token) = setup(&handler, true).await;
    let response = app
        .request(Method::POST, &format!("{WEBHOOK}?mode=async"), Some(&token))
        .fetch()
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let problem: Value = problem(response).await;
    assert!(
        problem["type"]
            .as_str()
            .unwrap()
            .ends_with("async-not-forwarded"),
        "{problem}"
    );
    assert_eq!(handler.count(), 0);
}
