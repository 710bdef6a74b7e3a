//! The scheduler scales a Kafka trigger's app on its consumer group's lag — read from outside
//! the group on a real Kafka-protocol broker (tansu) — divided by `lagThreshold`, capped at the
//! topic's partition count, as Azure's Kafka target scaler does; seen through `GET …/scale`.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use shoal_testkit::kafka::TansuBroker;
use tokio_util::sync::CancellationToken;

use crate::helpers::*;

const SCALE: &str = "/v1/tenants/contoso/apps/orders/scale";

#[tokio::test]
async fn consumer_lag_scales_out_up_to_the_partition_count() {
    let broker = TansuBroker::start().await.expect("tansu starts");
    broker.create_topic("orders", 3).await.unwrap();
    for i in 0..60u32 {
        let value = format!("order-{i}");
        broker
            .produce("orders", (i % 3) as i32, None, value.as_bytes(), &[])
            .await
            .unwrap();
    }
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let put = app
        .put_app(
            "contoso",
            "orders",
            &json!({
                "handler": {"url": "http://127.0.0.1:9/api"},
                "scale": {"limit": 10},
                "appSettings": {"Brokers": broker.bootstrap()}
            }),
        )
        .await;
    assert!(put.status().is_success(), "{}", put.status());
    let function = json!({"bindings": [{"type": "kafkaTrigger", "direction": "in",
        "name": "event", "brokerList": "%Brokers%", "topic": "orders",
        "consumerGroup": "billing", "lagThreshold": 10}]});
    let put = app
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/apps/orders/functions/Bill",
        )
        .json(&function)
        .fetch()
        .await;
    assert!(put.status().is_success(), "{}", put.status());
    let stop = CancellationToken::new();
    let scheduler = app.start_scheduler(&stop);

    // 60 events, none committed: lag 60 / 10 per instance = 6, but 3 partitions feed at most
    // 3 members.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let scale = loop {
        let scale: Value = app.admin(Method::GET, SCALE).fetch_json().await;
        if scale["desiredInstances"] == 3 {
            break scale;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "3 desired instances: {scale}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let decision = &scale["decisions"][0];
    assert_eq!(
        decision["metrics"],
        json!([{"function": "Bill", "mode": "target", "metric": 60, "target": 3, "perInstance": 10}]),
        "{decision}"
    );
    assert!(
        decision["reason"]
            .as_str()
            .unwrap()
            .contains("consumerLag 60"),
        "{decision}"
    );
    // Later ticks keep it there: never more members than partitions.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let scale: Value = app.admin(Method::GET, SCALE).fetch_json().await;
    assert_eq!(scale["desiredInstances"], 3, "{scale}");
    stop.cancel();
    scheduler.stopped().await.unwrap();
}
