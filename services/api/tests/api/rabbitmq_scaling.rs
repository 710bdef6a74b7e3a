//! The scheduler scales a RabbitMQ trigger's app on the messages ready in its queue — read
//! over AMQP from a real broker (`deploy/local/rabbitmq.sh`), the messages published by PyPI
//! `pika` — divided by `prefetchCount` (capped at what the live workers' listeners hold at
//! once), and back to zero once the queue is empty.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use shoal_domain::workers::WorkerState;
use shoal_store::workers::{Heartbeat, heartbeat};
use shoal_testkit::rabbitmq::{self, pika};
use shoal_worker::WorkerConfig;
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

/// A worker at the default limits holds 32 messages per listener and lowers `prefetchCount`
/// to that: with it live, an instance of an app asking for 250 is counted as taking 32, and the
/// decision says why.
#[tokio::test]
async fn a_prefetch_count_above_what_the_workers_hold_counts_what_they_hold() {
    let decision = first_decision_beside_a_default_worker(Some(250), 500).await;
    // 500 ready / 32 held per instance.
    assert_eq!(
        decision["metrics"],
        json!([{"function": "Take", "mode": "target", "metric": 500, "target": 16,
                "perInstance": 32, "askedPerInstance": 250}]),
        "{decision}"
    );
    assert_eq!(
        decision["reason"],
        "scale out: Take queueLength 500 / 32 per instance (prefetchCount 250, held 32 at a time \
         by workers) = 16; +4 per decision",
        "{decision}"
    );
}

/// The default `prefetchCount` (30) is within what a worker at the default limits holds: the
/// target is the setting's, as without workers.
#[tokio::test]
async fn the_default_prefetch_count_is_within_what_the_workers_hold() {
    let decision = first_decision_beside_a_default_worker(None, 500).await;
    // 500 ready / 30 per instance.
    assert_eq!(
        decision["metrics"],
        json!([{"function": "Take", "mode": "target", "metric": 500, "target": 17,
                "perInstance": 30}]),
        "{decision}"
    );
    assert_eq!(
        decision["reason"],
        "scale out: Take queueLength 500 / 30 per instance = 17; +4 per decision",
        "{decision}"
    );
}

/// The first scale decision for an app with `prefetchCount` (the default when None) whose
/// queue holds `ready` messages, with one live worker at the default limits registered.
async fn first_decision_beside_a_default_worker(prefetch: Option<u16>, ready: u32) -> Value {
    let url = rabbitmq::url().expect("a RabbitMQ broker");
    let queue = rabbitmq::queue_name("orders");
    pika(&url, &["declare", &queue]).await.unwrap();
    pika(&url, &["publish", &queue, &ready.to_string(), "order"])
        .await
        .unwrap();
    let mut host = json!({"version": "2.0"});
    if let Some(prefetch) = prefetch {
        host["extensions"] = json!({"rabbitMQ": {"prefetchCount": prefetch}});
    }
    // Limited to the first step, so the decision that reaches it is the last one taken.
    let app = rabbit_app(
        json!({
            "scale": {"limit": 4},
            "appSettings": {"Rabbit": url},
            "hostConfig": host,
        }),
        rabbit_trigger(&queue),
    )
    .await;
    let defaults = WorkerConfig::new("worker-a");
    let (pool, mut tx) = app.platform_tx().await;
    heartbeat(
        &mut tx,
        &Heartbeat {
            name: &defaults.name,
            state: WorkerState::Running,
            version: "test",
            started_at: chrono::Utc::now(),
            listeners: &[],
            capacity: defaults.capacity,
            lease_ttl: Duration::from_secs(60),
            hold_limit: Some(defaults.held_messages()),
        },
    )
    .await
    .unwrap();
    shoal_store::commit(tx).await.unwrap();
    pool.close().await;
    let stop = CancellationToken::new();
    let scheduler = app.start_scheduler(&stop);

    // The first decision scales out by the step (to the limit), whatever the target.
    let scale = wait_for_desired(&app, SCALE, 4).await;
    stop.cancel();
    scheduler.stopped().await.unwrap();
    pika(&url, &["purge", &queue]).await.unwrap();
    scale["decisions"][0].clone()
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
