//! A function's circuit breaker through the API: its settings validated with field paths and
//! shown with their defaults, pause and resume (audited, idempotent, posted signed to the
//! operator webhook), the state and history read back.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_domain::webhooks::WebhookSecret;
use shoal_testkit::handler::{Behaviour, RecordingHandler};

use crate::helpers::{Fetch, TestApp, error_paths, problem};

const T: &str = "contoso";
const FUNCTION: &str = "/v1/tenants/contoso/apps/orders/functions/process";

fn queue_function(breaker: Value) -> Value {
    json!({
        "bindings": [{"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "orders"}],
        "circuitBreaker": breaker,
    })
}

#[tokio::test]
async fn bad_breaker_settings_are_refused_with_their_paths() {
    let app = TestApp::spawn().await;
    app.with_app(T, "orders").await;
    let response = app
        .admin(Method::PUT, FUNCTION)
        .json(&queue_function(json!({
            "failureThreshold": 0,
            "window": "01:30:00",
            "cooldown": "soon",
            "notifyUrl": "mailto:ops@example.com",
            "halfopen": true,
        })))
        .fetch()
        .await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let paths = error_paths(&problem(response).await);
    for path in [
        "circuitBreaker.failureThreshold",
        "circuitBreaker.window",
        "circuitBreaker.cooldown",
        "circuitBreaker.notifyUrl",
        "circuitBreaker.halfopen",
    ] {
        assert!(paths.contains(&path.to_owned()), "{path} in {paths:?}");
    }
}

#[tokio::test]
async fn the_defaults_are_shown_and_a_new_breaker_is_closed() {
    let app = TestApp::spawn().await;
    app.with_app(T, "orders").await;
    let put = app
        .admin(Method::PUT, FUNCTION)
        .json(&queue_function(json!({"failureThreshold": 5})))
        .fetch()
        .await;
    assert_eq!(put.status(), StatusCode::CREATED);
    let function: Value = put.json().await.unwrap();
    assert_eq!(
        function["circuitBreaker"],
        json!({"enabled": true, "failureThreshold": 5, "window": "00:00:30",
               "halfOpen": true, "cooldown": "00:01:00"})
    );
    let breaker: Value = app
        .admin(Method::GET, &format!("{FUNCTION}/breaker"))
        .fetch_json()
        .await;
    assert_eq!(breaker["state"], "closed");
    assert_eq!(breaker["transitions"], json!([]));
    assert_eq!(breaker["settings"]["failureThreshold"], 5);

    let missing = app
        .admin(
            Method::POST,
            "/v1/tenants/contoso/apps/orders/functions/nope/pause",
        )
        .fetch()
        .await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn pause_and_resume_are_audited_idempotent_and_posted_signed() {
    let app = TestApp::spawn().await;
    app.with_app(T, "orders").await;
    let operator = RecordingHandler::start(Behaviour::Status(204))
        .await
        .unwrap();
    let hook = format!("{}/ops", operator.url());
    let put = app
        .admin(Method::PUT, FUNCTION)
        .json(&queue_function(json!({"notifyUrl": hook})))
        .fetch()
        .await;
    assert_eq!(put.status(), StatusCode::CREATED);
    let secret: Value = app
        .admin(
            Method::POST,
            "/v1/tenants/contoso/apps/orders/signingSecret/list",
        )
        .fetch_json()
        .await;
    let secret = WebhookSecret::parse(secret["secret"].as_str().unwrap()).unwrap();

    let paused: Value = app
        .admin(Method::POST, &format!("{FUNCTION}/pause"))
        .fetch_json()
        .await;
    assert_eq!(paused["state"], "open");
    assert_eq!(paused["cause"], "paused");
    let diagnostics: Value = app
        .admin(Method::GET, "/v1/tenants/contoso/apps/orders/diagnostics")
        .fetch_json()
        .await;
    let breaker_check = diagnostics["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["subject"] == "breaker")
        .unwrap_or_else(|| panic!("diagnostics name the paused function: {diagnostics}"));
    assert_eq!(breaker_check["function"], "process");
    assert_eq!(breaker_check["status"], "warning");
    let again: Value = app
        .admin(Method::POST, &format!("{FUNCTION}/pause"))
        .fetch_json()
        .await;
    assert_eq!(
        again["transitions"].as_array().unwrap().len(),
        1,
        "pausing a paused function changes nothing: {again}"
    );
    let resumed: Value = app
        .admin(Method::POST, &format!("{FUNCTION}/resume"))
        .fetch_json()
        .await;
    assert_eq!(resumed["state"], "closed");
    let transitions = resumed["transitions"].as_array().unwrap();
    assert_eq!(transitions.len(), 2);
    assert_eq!(
        (
            &transitions[0]["from"],
            &transitions[0]["to"],
            &transitions[0]["cause"]
        ),
        (&json!("open"), &json!("closed"), &json!("resumed"))
    );
    assert_eq!(
        (
            &transitions[1]["from"],
            &transitions[1]["to"],
            &transitions[1]["cause"]
        ),
        (&json!("closed"), &json!("open"), &json!("paused"))
    );
    assert!(
        transitions[1]["actor"]
            .as_str()
            .is_some_and(|a| !a.is_empty()),
        "the actor is named: {transitions:?}"
    );

    let log: Value = app
        .admin(Method::GET, "/v1/tenants/contoso/auditLog?limit=100")
        .fetch_json()
        .await;
    let actions: Vec<&str> = log["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["resource"].as_str().unwrap_or("").starts_with(FUNCTION))
        .filter_map(|e| e["action"].as_str())
        .collect();
    for action in [
        "Shoal/apps/functions/pause/action",
        "Shoal/apps/functions/resume/action",
    ] {
        assert!(actions.contains(&action), "{action} audited: {actions:?}");
    }

    // Two transitions, two signed posts (the idempotent second pause posts nothing).
    let posts = operator.wait_for(2, Duration::from_secs(10)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(operator.count(), 2);
    let types: Vec<&str> = posts
        .iter()
        .map(|p| p.body["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "shoal.function.breaker.opened",
            "shoal.function.breaker.closed"
        ]
    );
    for post in &posts {
        let id = post.header("webhook-id").unwrap();
        let timestamp: i64 = post.header("webhook-timestamp").unwrap().parse().unwrap();
        let signature = post.header("webhook-signature").unwrap();
        assert!(
            secret.verify(id, timestamp, &post.raw, signature),
            "signed with the app's secret"
        );
        assert_eq!(
            post.body["data"]["resume"],
            format!("POST {FUNCTION}/resume")
        );
    }
}
