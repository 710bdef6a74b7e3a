//! `GET …/apps?expand=status`: each app of the page with its instances now and desired and a
//! health summary drawn from its checks, its circuit breakers and its live listeners.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_api::identity::Role;
use shoal_domain::workers::{ListenerReport, WorkerState};
use shoal_store::workers::{Heartbeat, heartbeat};

use crate::helpers::*;

fn queue_function(connection: &str) -> Value {
    json!({"bindings": [{"type": "queueTrigger", "direction": "in", "name": "msg",
        "queueName": "orders", "connection": connection}]})
}

async fn put_function(app: &TestApp, name: &str, function: &str, body: &Value) {
    let response = app
        .admin(
            Method::PUT,
            &format!("/v1/tenants/contoso/apps/{name}/functions/{function}"),
        )
        .json(body)
        .fetch()
        .await;
    assert!(response.status().is_success(), "{}", response.status());
}

/// A live worker reporting one listener of `app`'s `ship`, with this token error.
async fn report_listener(app: &TestApp, name: &str, token_error: &str) {
    report(
        app,
        json!({
            "tenant": "contoso", "app": name, "instance": 0, "function": "ship",
            "trigger": "queueTrigger", "source": "orders", "status": "listening",
            "received": 0, "succeeded": 0, "failed": 0, "poisoned": 0, "inFlight": 0,
            "currentBackoffMs": 0, "lastTokenError": token_error,
        }),
    )
    .await;
}

/// A live worker, `worker-a`, reporting `listener` (a `ListenerReport` in JSON) and no other.
async fn report(app: &TestApp, listener: Value) {
    let listener: ListenerReport = serde_json::from_value(listener).unwrap();
    let (pool, mut tx) = app.platform_tx().await;
    heartbeat(
        &mut tx,
        &Heartbeat {
            name: "worker-a",
            state: WorkerState::Running,
            version: "test",
            started_at: chrono::Utc::now(),
            listeners: &[listener],
            capacity: 10,
            lease_ttl: Duration::from_secs(60),
            hold_limit: Some(32),
        },
    )
    .await
    .unwrap();
    shoal_store::commit(tx).await.unwrap();
    pool.close().await;
}

fn by_name(page: &Value) -> std::collections::HashMap<String, Value> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["name"].as_str().unwrap().to_owned(), a["status"].clone()))
        .collect()
}

#[tokio::test]
async fn the_list_expanded_with_status_shows_instances_and_health_per_app() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let storage = json!({"handler": {"url": "https://handler.example.com/api"},
        "appSettings": {"AzureWebJobsStorage": "UseDevelopmentStorage=true"}});
    for name in ["fine", "broken", "paused", "tokens"] {
        app.put_app("contoso", name, &storage).await;
    }
    put_function(&app, "fine", "ship", &queue_function("")).await;
    put_function(&app, "broken", "ship", &queue_function("OrdersStorage")).await;
    put_function(&app, "paused", "ship", &queue_function("")).await;
    put_function(&app, "tokens", "ship", &queue_function("")).await;
    let paused = app
        .admin(
            Method::POST,
            "/v1/tenants/contoso/apps/paused/functions/ship/pause",
        )
        .fetch()
        .await;
    assert!(paused.status().is_success(), "{}", paused.status());
    report_listener(&app, "tokens", "AADSTS700016: unknown client").await;
    let epoch = app.lead().await;
    app.record_decision(decision("contoso", "fine", 0, 2, epoch))
        .await;
    app.place(epoch, &[("contoso", "fine", 0, "worker-a")])
        .await;

    let reader = app.token_for("contoso", Role::Reader);
    let page: Value = app
        .request(
            Method::GET,
            "/v1/tenants/contoso/apps?expand=status",
            Some(&reader),
        )
        .fetch_json()
        .await;
    let status = by_name(&page);

    assert_eq!(status["fine"]["currentInstances"], 1, "{page}");
    assert_eq!(status["fine"]["desiredInstances"], 2);
    assert_eq!(
        status["fine"]["health"],
        json!({"state": "healthy", "errors": 0, "warnings": 0, "reasons": []})
    );
    assert_eq!(status["broken"]["currentInstances"], 0);
    assert_eq!(status["broken"]["desiredInstances"], 0);
    assert_eq!(status["broken"]["health"]["state"], "error");
    assert_eq!(status["broken"]["health"]["errors"], 1);
    let reason = status["broken"]["health"]["reasons"][0].as_str().unwrap();
    assert!(
        reason.starts_with("ship: ") && reason.contains("OrdersStorage"),
        "{reason}"
    );
    assert_eq!(status["paused"]["health"]["state"], "warning");
    assert!(
        status["paused"]["health"]["reasons"][0]
            .as_str()
            .unwrap()
            .contains("paused by hand"),
        "{page}"
    );
    assert_eq!(status["tokens"]["health"]["state"], "error");
    assert_eq!(
        status["tokens"]["health"]["reasons"][0],
        "ship: token request failed: AADSTS700016: unknown client"
    );
}

#[tokio::test]
async fn status_is_only_there_when_asked_for_and_pages_alike() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    for i in 0..3 {
        app.put_app("contoso", &format!("app-{i}"), &minimal_app())
            .await;
    }
    let plain: Value = app
        .get("/v1/tenants/contoso/apps")
        .await
        .json()
        .await
        .unwrap();
    assert!(
        plain["items"][0].get("status").is_none(),
        "the plain list is what was written plus computed fields: {plain}"
    );
    let first: Value = app
        .get("/v1/tenants/contoso/apps?expand=status&limit=2")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(first["items"].as_array().unwrap().len(), 2);
    let token = first["continuationToken"].as_str().unwrap();
    let rest: Value = app
        .get(&format!(
            "/v1/tenants/contoso/apps?expand=status&limit=2&continuationToken={token}"
        ))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(rest["items"][0]["name"], "app-2");
    assert_eq!(rest["items"][0]["status"]["health"]["state"], "healthy");
}

#[tokio::test]
async fn an_unknown_expansion_is_422_naming_the_parameter() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let response = app.get("/v1/tenants/contoso/apps?expand=everything").await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error_paths(&problem(response).await), vec!["expand"]);
}

/// The app's diagnostics say what its live listeners report, for each trigger kind: a
/// listener in error (here, a broker refusing the binding) makes the app unhealthy there as in
/// the apps list, with a check naming the listener's source and status. (A Service Bus trigger
/// is left out: its diagnostics probe the entity over the network; its listener is checked
/// the same way.)
#[tokio::test]
async fn diagnostics_report_a_listener_in_error_for_every_trigger_kind() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let kinds = [
        (
            "queueTrigger",
            json!({"type": "queueTrigger", "direction": "in", "name": "msg",
                "queueName": "orders", "connection": ""}),
        ),
        (
            "eventHubTrigger",
            json!({"type": "eventHubTrigger", "direction": "in", "name": "event",
                "eventHubName": "orders", "connection": "Hub"}),
        ),
        (
            "kafkaTrigger",
            json!({"type": "kafkaTrigger", "direction": "in", "name": "event",
                "brokerList": "%Brokers%", "topic": "orders"}),
        ),
    ];
    for (kind, binding) in kinds {
        let name = kind.to_lowercase().replace("trigger", "");
        app.put_app(
            "contoso",
            &name,
            &json!({"handler": {"url": "https://handler.example.com/api"},
                "appSettings": {
                    "AzureWebJobsStorage": "UseDevelopmentStorage=true",
                    "Hub": "Endpoint=sb://hub.servicebus.windows.net/;SharedAccessKeyName=listen;SharedAccessKey=c2VjcmV0",
                    "Brokers": "broker.example.com:9092"}}),
        )
        .await;
        put_function(&app, &name, "ship", &json!({"bindings": [binding]})).await;
        let path = format!("/v1/tenants/contoso/apps/{name}/diagnostics");
        let before: Value = app.admin(Method::GET, &path).fetch_json().await;
        let listener_checks = |diagnostics: &Value| -> Vec<Value> {
            diagnostics["checks"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| c["subject"] == "listener")
                .cloned()
                .collect()
        };
        assert_eq!(before["healthy"], true, "{kind}: {before}");
        assert!(listener_checks(&before).is_empty(), "{kind}: {before}");

        let status = "error: the broker refused the binding: SASL authentication failed";
        report(
            &app,
            json!({
                "tenant": "contoso", "app": name, "instance": 0, "function": "ship",
                "trigger": kind, "source": "orders", "status": status,
                "received": 0, "succeeded": 0, "failed": 0, "poisoned": 0, "inFlight": 0,
                "currentBackoffMs": 0,
            }),
        )
        .await;
        let after: Value = app.admin(Method::GET, &path).fetch_json().await;
        assert_eq!(after["healthy"], false, "{kind}: {after}");
        let checks = listener_checks(&after);
        assert_eq!(checks.len(), 1, "{kind}: {after}");
        assert_eq!(checks[0]["function"], "ship");
        assert_eq!(checks[0]["status"], "error");
        assert_eq!(
            checks[0]["detail"],
            format!("listener on orders: {status}"),
            "{kind}"
        );
    }
}
