//! The scheduler scales a Kafka trigger's app on its consumer group's lag — read from outside
//! the group on a real Kafka-protocol broker (tansu) — divided by `lagThreshold`, capped at the
//! topic's partition count, as Azure's Kafka target scaler does, also when the trigger signs
//! in; seen through `GET …/scale`.

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
    let app = orders_app(
        json!({"Brokers": broker.bootstrap()}),
        json!({"consumerGroup": "billing", "lagThreshold": 10}),
    )
    .await;
    let stop = CancellationToken::new();
    let scheduler = app.start_scheduler(&stop);

    // 60 events, none committed: lag 60 / 10 per instance = 6, but 3 partitions feed at most
    // 3 members.
    let scale = wait_for_desired(&app, SCALE, 3).await;
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

/// The scheduler reads the lag with the trigger's own sign-in (SCRAM-SHA-512, checked by the
/// broker), as the listener connects.
#[tokio::test]
async fn the_lag_of_a_signed_in_kafka_trigger_is_read_with_its_credentials() {
    let broker = TansuBroker::start_with_scram_users(&[("billing", "right-pass-9")])
        .await
        .expect("tansu starts");
    broker.create_topic("orders", 4).await.unwrap();
    for i in 0..25u32 {
        broker
            .produce("orders", (i % 4) as i32, None, b"order", &[])
            .await
            .unwrap();
    }
    let app = orders_app(
        json!({"Brokers": broker.bootstrap(), "KafkaPassword": "right-pass-9"}),
        json!({"consumerGroup": "billing", "lagThreshold": 10, "protocol": "saslPlaintext",
            "authenticationMode": "scramSha512", "username": "billing",
            "password": "%KafkaPassword%"}),
    )
    .await;
    let stop = CancellationToken::new();
    let scheduler = app.start_scheduler(&stop);

    // 25 events / 10 per instance = 3 (of 4 partitions).
    let scale = wait_for_desired(&app, SCALE, 3).await;
    let decision = &scale["decisions"][0];
    assert!(
        decision["reason"]
            .as_str()
            .unwrap()
            .contains("consumerLag 25"),
        "{decision}"
    );
    stop.cancel();
    scheduler.stopped().await.unwrap();
}

/// The lag is read under the scheduler's egress policy: a cluster on an allowed address that
/// advertises a refused one is never dialled at that hop, and the refusal is counted (and
/// checked again on later ticks, since a refused cluster is never taken as checked).
#[tokio::test]
async fn the_lag_of_a_cluster_advertising_a_refused_address_is_not_read() {
    let broker = TansuBroker::start_behind_relay()
        .await
        .expect("tansu starts");
    // No events are produced: the testkit's producer would keep connecting through the relay.
    broker.create_topic("orders", 3).await.unwrap();
    let app = orders_app(
        json!({"Brokers": broker.direct_bootstrap()}),
        json!({"consumerGroup": "billing", "lagThreshold": 10}),
    )
    .await;
    let before = broker.settled_relay_connections().await;
    let allow = shoal_domain::egress::AllowList::parse(&broker.direct_bootstrap()).unwrap();
    let scheduler = app.scheduler(shoal_egress::Egress::new(
        shoal_domain::egress::EgressPolicy::new(allow, Vec::new()),
    ));
    let status = scheduler.status();
    let stop = CancellationToken::new();
    let running = scheduler.start(stop.clone());

    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while status.egress.refusals(shoal_domain::egress::Rule::Loopback) == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the advertised broker was never refused"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Later ticks read the cluster's brokers again (nothing was cached as checked) and refuse.
    let first = status.egress.refusals(shoal_domain::egress::Rule::Loopback);
    while status.egress.refusals(shoal_domain::egress::Rule::Loopback) == first {
        assert!(
            tokio::time::Instant::now() < deadline,
            "a later tick did not check again"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        broker.settled_relay_connections().await,
        before,
        "the advertised broker was dialled"
    );
    stop.cancel();
    running.stopped().await.unwrap();
}

/// App `orders` with `settings` and function `Bill`: a `kafkaTrigger` on `%Brokers%`/`orders`
/// with the `trigger` properties added.
async fn orders_app(settings: Value, trigger: Value) -> TestApp {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let put = app
        .put_app(
            "contoso",
            "orders",
            &json!({
                "handler": {"url": "http://127.0.0.1:9/api"},
                "scale": {"limit": 10},
                "appSettings": settings,
            }),
        )
        .await;
    assert!(put.status().is_success(), "{}", put.status());
    let mut binding = json!({"type": "kafkaTrigger", "direction": "in", "name": "event",
        "brokerList": "%Brokers%", "topic": "orders"});
    if let (Value::Object(b), Value::Object(extra)) = (&mut binding, trigger) {
        b.extend(extra);
    }
    let put = app
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/apps/orders/functions/Bill",
        )
        .json(&json!({"bindings": [binding]}))
        .fetch()
        .await;
    assert!(put.status().is_success(), "{}", put.status());
    app
}
