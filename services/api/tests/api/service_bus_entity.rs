//! A Service Bus trigger's entity: names and declared settings are checked on write (422 with
//! the field path), read back as written, and diagnostics probe the live entity.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;

const PATH: &str = "/v1/tenants/contoso/apps/orders/functions/Receive";

fn trigger(extra: Value) -> Value {
    let mut binding = json!({"type": "serviceBusTrigger", "direction": "in", "name": "msg",
        "connection": "OrdersBus"});
    for (key, value) in extra.as_object().unwrap() {
        binding[key] = value.clone();
    }
    json!({"bindings": [binding]})
}

/// Points the app's `OrdersBus` setting at the namespace `host_port` (emulator-style, with a
/// key the diagnostics must never show) and writes the trigger with `extra`.
async fn trigger_on_namespace(app: &TestApp, host_port: &str, extra: Value) {
    let patch = app
        .admin(Method::PATCH, "/v1/tenants/contoso/apps/orders")
        .json(&json!({"appSettings": {"OrdersBus": format!(
            "Endpoint=sb://{host_port};SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true"
        )}}))
        .fetch()
        .await;
    assert!(patch.status().is_success(), "{}", patch.status());
    let put = app
        .admin(Method::PUT, PATH)
        .json(&trigger(extra))
        .fetch()
        .await;
    assert_eq!(put.status(), StatusCode::CREATED);
}

/// The app's diagnostics (200) and their one entity check's detail, which must not show the
/// namespace's key.
async fn entity_check(app: &TestApp) -> (Value, Value) {
    let response = app.get("/v1/tenants/contoso/apps/orders/diagnostics").await;
    assert_eq!(response.status(), StatusCode::OK);
    let diagnostics: Value = response.json().await.unwrap();
    let entity: Vec<&Value> = diagnostics["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["subject"] == "entity")
        .collect();
    assert_eq!(entity.len(), 1, "{diagnostics}");
    let entity = entity[0].clone();
    let detail = entity["detail"].as_str().unwrap();
    assert!(!detail.contains("SAS_KEY_VALUE"), "{detail}");
    (diagnostics, entity)
}

#[tokio::test]
async fn entity_settings_and_names_are_422_with_field_paths() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"queueName": "q", "entity": {"autoDeleteOnIdle": "00:04:59"}}),
            vec!["bindings[0].entity.autoDeleteOnIdle"],
        ),
        (
            json!({"queueName": "q", "entity": {"tier": "basic", "defaultMessageTimeToLive": "14.00:00:01"}}),
            vec!["bindings[0].entity.defaultMessageTimeToLive"],
        ),
        (
            json!({"queueName": "q", "entity": {"lockDuration": "00:00:04"}}),
            vec!["bindings[0].entity.lockDuration"],
        ),
        (
            json!({"queueName": "q", "entity": {"lockDuration": "PT6M", "maxDeliveryCount": 0}}),
            vec![
                "bindings[0].entity.lockDuration",
                "bindings[0].entity.maxDeliveryCount",
            ],
        ),
        (
            json!({"queueName": "q", "entity": {"maxDeliveryCount": 5, "requiresSession": true}}),
            vec!["bindings[0].entity.requiresSession"],
        ),
        (
            json!({"topicName": "t", "subscriptionName": "s", "entity": {"tier": "basic"}}),
            vec!["bindings[0].entity.tier"],
        ),
        (
            json!({"queueName": "$DeadLetterQueue"}),
            vec!["bindings[0].queueName"],
        ),
        (json!({"queueName": "a//b"}), vec!["bindings[0].queueName"]),
        (
            json!({"queueName": &"q".repeat(261)}),
            vec!["bindings[0].queueName"],
        ),
        (
            json!({"topicName": "t", "subscriptionName": "a/b"}),
            vec!["bindings[0].subscriptionName"],
        ),
        (
            json!({"topicName": "t"}),
            vec!["bindings[0].subscriptionName"],
        ),
        (
            json!({"queueName": "q", "subscriptionName": "s"}),
            vec!["bindings[0].subscriptionName"],
        ),
        (
            json!({"queueName": "q", "topicName": "t", "subscriptionName": "s"}),
            vec!["bindings[0]"],
        ),
    ];
    for (extra, want) in cases {
        let body = trigger(extra);
        let response = app.admin(Method::PUT, PATH).json(&body).fetch().await;
        assert_eq!(
            response.status(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}"
        );
        let problem = problem(response).await;
        assert_eq!(problem["status"], 422);
        assert_eq!(error_paths(&problem), want, "{body}");
    }
}

#[tokio::test]
async fn entity_settings_read_back_as_written() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    let body = trigger(json!({"queueName": "orders", "entity": {
        "tier": "basic", "defaultMessageTimeToLive": "P14D", "deadLetteringOnMessageExpiration": true,
        "autoDeleteOnIdle": "01:00:00", "maxDeliveryCount": 5, "lockDuration": "00:00:30"}}));
    let put = app.admin(Method::PUT, PATH).json(&body).fetch().await;
    assert_eq!(put.status(), StatusCode::CREATED);
    let read: Value = app.get(PATH).await.json().await.unwrap();
    assert_eq!(read["bindings"], body["bindings"]);
}

/// A namespace nobody listens on: diagnostics say it is unreachable, and answer 200.
#[tokio::test]
async fn diagnostics_report_an_unreachable_namespace() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    trigger_on_namespace(
        &app,
        &format!("127.0.0.1:{port}"),
        json!({"queueName": "orders", "entity": {"maxDeliveryCount": 3}}),
    )
    .await;
    let (diagnostics, entity) = entity_check(&app).await;
    assert_eq!(entity["status"], "error");
    let detail = entity["detail"].as_str().unwrap();
    assert!(detail.contains("unreachable"), "{detail}");
    assert_eq!(diagnostics["healthy"], false);
}

/// A namespace whose name passes the egress policy's text check but resolves to an address the
/// policy refuses (this machine's name, to loopback) is not probed: diagnostics say the entity
/// was not checked, and nothing connects to the port.
#[tokio::test]
async fn diagnostics_do_not_probe_a_namespace_that_resolves_to_a_refused_address() {
    let app = TestApp::spawn_with(Options {
        outbound: shoal_api::OutboundConfig::default(),
        ..Options::default()
    })
    .await;
    app.with_app_at("contoso", "orders", "https://handler.example.com/api")
        .await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = connections.clone();
    let accepting = tokio::spawn(async move {
        while let Ok((_socket, _)) = listener.accept().await {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    });
    let name = shoal_testkit::loopback_host_name();
    trigger_on_namespace(
        &app,
        &format!("{name}:{port}"),
        json!({"queueName": "orders"}),
    )
    .await;
    let (_, entity) = entity_check(&app).await;
    let detail = entity["detail"].as_str().unwrap();
    assert!(detail.contains("egress policy"), "{detail}");
    assert_eq!(
        connections.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the probe never connected to the namespace's address"
    );
    accepting.abort();
}
