//! The scheduler scales a RabbitMQ trigger's app on the messages ready in its queue — read
//! over AMQP from a real broker (`deploy/local/rabbitmq.sh`), the messages published by PyPI
//! `pika` — divided by `prefetchCount`, and back to zero once the queue is empty.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use shoal_testkit::rabbitmq::{self, pika};
use tokio_util::sync::CancellationToken;

use crate::helpers::*;

const SCALE: &str = "/v1/tenants/contoso/apps/orders/scale";

#[tokio::test]
async fn two_thousand_ready_messages_scale_out_and_an_empty_queue_back_to_zero() {
    let url = rabbitmq::url().expect("a RabbitMQ broker");
    let queue = rabbitmq::queue_name("orders");
    pika(&url, &["declare", &queue]).await.unwrap();
    pika(&url, &["publish", &queue, "2000", "order"])
        .await
        .unwrap();
    let app = rabbit_app(
        json!({
            "scale": {"limit": 20},
            "appSettings": {"Rabbit": url},
            "hostConfig": {"version": "2.0", "extensions": {"rabbitMQ": {"prefetchCount": 250}}},
        }),
        rabbit_trigger(&queue),
    )
    .await;
    let stop = CancellationToken::new();
    let scheduler = app.start_scheduler_scaling_in_after(Duration::from_secs(1), &stop);

    // 2,000 ready / 250 per instance.
    let scale = wait_for_desired(&app, SCALE, 8).await;
    let decision = &scale["decisions"][0];
    assert_eq!(
        decision["metrics"],
        json!([{"function": "Take", "mode": "target", "metric": 2000, "target": 8, "perInstance": 250}]),
        "{decision}"
    );
    // The read only reads: every message is still there.
    assert_eq!(pika(&url, &["count", &queue]).await.unwrap(), 2000);

    pika(&url, &["purge", &queue]).await.unwrap();
    wait_for_desired(&app, SCALE, 0).await;
    stop.cancel();
    scheduler.stopped().await.unwrap();
}

/// The app's settings name a broker the egress policy refuses (the cloud metadata address): the
/// scheduler never dials it; the metric is unreadable and the app is kept at one instance, as
/// for any unreadable metric.
#[tokio::test]
async fn a_refused_broker_is_never_read() {
    let app = rabbit_app(
        json!({"appSettings": {"Rabbit": "amqp://shoal:hunter2@169.254.169.254:5672/%2f"}}),
        rabbit_trigger("orders"),
    )
    .await;
    let stop = CancellationToken::new();
    let scheduler = app.start_scheduler(&stop);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let scale = loop {
        let scale: Value = app.admin(Method::GET, SCALE).fetch_json().await;
        if scale["decisions"].as_array().is_some_and(|d| !d.is_empty()) {
            break scale;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no decision: {scale}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let reason = scale["decisions"][0]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("metric unreadable"), "{scale}");
    assert!(!scale.to_string().contains("hunter2"), "{scale}");
    assert_eq!(scale["desiredInstances"], 1, "{scale}");
    stop.cancel();
    scheduler.stopped().await.unwrap();
}
