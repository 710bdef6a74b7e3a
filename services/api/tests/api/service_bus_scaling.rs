//! The scheduler scales a Service Bus trigger's app on the entity's `ActiveMessageCount`, read
//! from the local Service Bus stand-in's management API, and with listen-only rights falls back
//! to the listeners' load, saying so in the decision; both seen through `GET …/scale`. The
//! queue is filled with Microsoft's `azure-servicebus` SDK.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use shoal_local_bus::{LocalBus, LocalBusConfig};
use tokio_util::sync::CancellationToken;

use crate::helpers::*;

const SCALE: &str = "/v1/tenants/contoso/apps/orders/scale";

/// The local Service Bus stand-in with one queue, `orders`.
pub(crate) async fn bus() -> LocalBus {
    let config = LocalBusConfig::from_json(
        r#"{"UserConfig": {"Namespaces": [{"Name": "localbus", "Queues": [{"Name": "orders"}]}]}}"#,
    )
    .expect("valid configuration");
    LocalBus::start(config).await.expect("the stand-in starts")
}

async fn fill(bus: &LocalBus, messages: u32) {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../connectors/tests/service_bus_admin/fill.py");
    let env = HashMap::from([("SB_CONNECTION".to_owned(), bus.connection_string())]);
    let count = messages.to_string();
    shoal_testkit::python::run_json(
        &script,
        &["orders", &count, "0", "0"],
        &env,
        Duration::from_secs(120),
    )
    .await
    .expect("the SDK fills the queue");
}

/// The app `orders` (limit 10) with a Service Bus trigger on queue `orders` through
/// `connection_string`.
async fn service_bus_app(app: &TestApp, connection_string: &str) {
    app.put_tenant("contoso").await;
    let put = app
        .put_app(
            "contoso",
            "orders",
            &json!({
                "handler": {"url": "http://127.0.0.1:9/api"},
                "scale": {"limit": 10},
                "appSettings": {"OrdersBus": connection_string}
            }),
        )
        .await;
    assert!(put.status().is_success(), "{}", put.status());
    let function = json!({"bindings": [{"type": "serviceBusTrigger", "direction": "in",
        "name": "msg", "queueName": "orders", "connection": "OrdersBus"}]});
    let put = app
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/apps/orders/functions/Receive",
        )
        .json(&function)
        .fetch()
        .await;
    assert!(put.status().is_success(), "{}", put.status());
}

/// Polls `GET …/scale` until `done` holds, with a deadline.
async fn scale_until(app: &TestApp, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let scale: Value = app.admin(Method::GET, SCALE).fetch_json().await;
        if done(&scale) {
            return scale;
        }
        assert!(tokio::time::Instant::now() < deadline, "{what}: {scale}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn active_messages_scale_out_four_per_decision_to_the_limit() {
    let bus = bus().await;
    fill(&bus, 1000).await;
    let app = TestApp::spawn().await;
    service_bus_app(&app, &bus.connection_string()).await;
    let stop = CancellationToken::new();
    let scheduler = app.start_scheduler(&stop);

    let scale = scale_until(&app, "10 desired instances", |s| {
        s["desiredInstances"] == 10
    })
    .await;
    let mut decisions: Vec<Value> = scale["decisions"].as_array().unwrap().clone();
    decisions.reverse();
    let steps: Vec<u64> = decisions
        .iter()
        .map(|d| d["to"].as_u64().unwrap())
        .collect();
    assert_eq!(steps, [4, 8, 10], "{decisions:#?}");
    assert_eq!(
        decisions[0]["reason"],
        "scale out: Receive activeMessages 1000 / 16 per instance = 63; +4 per decision"
    );
    assert_eq!(
        decisions[0]["metrics"],
        json!([{"function": "Receive", "mode": "target", "metric": 1000, "target": 63, "perInstance": 16}])
    );
    assert!(
        decisions[2]["reason"]
            .as_str()
            .unwrap()
            .ends_with("capped by limit 10")
    );
    stop.cancel();
    scheduler.stopped().await.unwrap();
    bus.shutdown().await;
}

#[tokio::test]
async fn listen_only_rights_fall_back_to_incremental_with_the_reason() {
    let bus = bus().await;
    fill(&bus, 100).await;
    let app = TestApp::spawn().await;
    service_bus_app(&app, &bus.listen_only_connection_string()).await;
    let stop = CancellationToken::new();
    let scheduler = app.start_scheduler(&stop);

    let scale = scale_until(&app, "a decision", |s| {
        s["decisions"].as_array().is_some_and(|d| !d.is_empty())
    })
    .await;
    let decision = &scale["decisions"][0];
    assert_eq!(decision["to"], 1, "{decision}");
    let reason = decision["reason"].as_str().unwrap();
    assert!(
        reason.contains("metric unreadable: listen-only rights (401"),
        "{reason}"
    );
    assert!(
        reason.contains("scaling falls back to incremental"),
        "{reason}"
    );
    assert!(
        reason.ends_with("kept at 1 while Receive's metric is unreadable"),
        "{reason}"
    );
    assert_eq!(decision["metrics"][0]["mode"], "incremental");
    assert!(decision["metrics"][0].get("metric").is_none(), "{decision}");
    stop.cancel();
    scheduler.stopped().await.unwrap();
    bus.shutdown().await;
}
