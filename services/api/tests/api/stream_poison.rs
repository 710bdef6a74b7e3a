//! A Kafka-triggered function's dead-letter topic through the poison endpoints, against a real
//! Kafka-protocol broker (tansu) and a real worker: the events a failing handler dead-lettered
//! are listed, replayed to the trigger's topic with their key and headers and a replay mark
//! once the handler works, processed again, and a second replay replays nothing.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_api::identity::Role;
use shoal_store::crypto::Cipher;
use shoal_store::pool::{PoolConfig, connect_lazy};
use shoal_testkit::handler::{Behaviour, RecordingHandler};
use shoal_testkit::kafka::TansuBroker;
use shoal_worker::{Hosting, Worker, WorkerConfig};
use tokio_util::sync::CancellationToken;

use crate::helpers::{Fetch, TestApp, error_paths, problem};

const POISON: &str = "/v1/tenants/contoso/apps/orders/functions/bill/poison";
const WAIT: Duration = Duration::from_secs(60);

/// Polls the listing until it shows `n` dead letters.
async fn wait_for_dead_letters(api: &TestApp, token: &str, n: u64) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let seen: Value = api
            .request(Method::GET, &format!("{POISON}?top=10"), Some(token))
            .fetch_json()
            .await;
        if seen["approximateCount"] == n {
            return seen;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the dead-letter topic shows {seen}, expected {n}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The `Metadata.Headers` of a request, as (key, text) pairs.
fn headers(request: &Value) -> Vec<(String, String)> {
    use base64::Engine as _;
    request["Metadata"]["Headers"]
        .as_array()
        .expect("Headers")
        .iter()
        .map(|h| {
            let value = base64::engine::general_purpose::STANDARD
                .decode(h["Value"].as_str().unwrap_or_default())
                .unwrap();
            (
                h["Key"].as_str().unwrap().to_owned(),
                String::from_utf8(value).unwrap(),
            )
        })
        .collect()
}

fn value(request: &Value) -> String {
    let event: Value = serde_json::from_str(request["Data"]["event"].as_str().unwrap()).unwrap();
    event["Value"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn dead_lettered_events_are_listed_replayed_with_key_and_headers_and_never_twice() {
    let broker = TansuBroker::start().await.expect("tansu starts");
    broker.create_topic("orders", 2).await.unwrap();
    broker.create_topic("orders-poison", 1).await.unwrap();
    let handler = RecordingHandler::start(Behaviour::Status(500))
        .await
        .unwrap();
    let api = TestApp::spawn().await;
    api.put_tenant("contoso").await;
    let put = api
        .put_app(
            "contoso",
            "orders",
            &json!({
                "handler": {"url": handler.url().as_str(), "timeoutSeconds": 5},
                "appSettings": {"Brokers": broker.bootstrap()},
            }),
        )
        .await;
    assert!(put.status().is_success(), "{:?}", put.text().await);
    let put = api
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/apps/orders/functions/bill",
        )
        .json(&json!({
            "bindings": [{"type": "kafkaTrigger", "direction": "in", "name": "event",
                "brokerList": "%Brokers%", "topic": "orders", "consumerGroup": "billing"}],
            "circuitBreaker": {"enabled": false},
        }))
        .fetch()
        .await;
    assert!(put.status().is_success(), "{:?}", put.text().await);
    for (partition, order) in [(0, "order-0"), (1, "order-1"), (1, "order-2")] {
        broker
            .produce(
                "orders",
                partition,
                Some(b"customer-7"),
                order.as_bytes(),
                &[("trace", b"t-1")],
            )
            .await
            .unwrap();
    }
    let mut config = WorkerConfig::new("w1");
    config.egress = crate::helpers::loopback_egress();
    config.hosting = Hosting::AllApps;
    config.refresh_interval = Duration::from_millis(200);
    let pool = connect_lazy(&api.database_url, &PoolConfig::default()).unwrap();
    let stop = CancellationToken::new();
    let worker = Worker::new(config, pool, Cipher::new(&api.secret_key))
        .start(stop.clone())
        .unwrap();

    // The three failed events are listed, with why they failed.
    let contributor = api.token_for("contoso", Role::Contributor);
    let seen = wait_for_dead_letters(&api, &contributor, 3).await;
    assert_eq!(seen["triggerQueue"], "orders", "{seen}");
    assert_eq!(seen["poisonQueue"], "orders-poison", "{seen}");
    let messages = seen["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{seen}");
    let mut bodies: Vec<&str> = messages
        .iter()
        .map(|m| m["body"].as_str().unwrap())
        .collect();
    bodies.sort_unstable();
    assert_eq!(bodies, ["order-0", "order-1", "order-2"]);
    assert!(
        messages
            .iter()
            .all(|m| m["deadLetterReason"].as_str().unwrap().contains("500")),
        "{seen}"
    );

    // Stream dead letters replay in order: naming some is refused, with the field.
    let bad = api
        .request(
            Method::POST,
            &format!("{POISON}/replay"),
            Some(&contributor),
        )
        .json(&json!({"messageIds": ["0-0"]}))
        .fetch()
        .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error_paths(&problem(bad).await), ["messageIds"]);

    // The handler works again: the events come back to the trigger's topic and are processed.
    handler.set_behaviour(Behaviour::Respond(json!({})));
    let failed = handler.count();
    let replay: Value = api
        .request(
            Method::POST,
            &format!("{POISON}/replay"),
            Some(&contributor),
        )
        .json(&json!({}))
        .fetch_json()
        .await;
    assert_eq!(replay["replayed"], 3, "{replay}");
    assert_eq!(
        replay["messageIds"],
        json!(["0-0", "0-1", "0-2"]),
        "{replay}"
    );
    handler.wait_for(failed + 3, WAIT).await.unwrap();
    let again = &handler.requests()[failed..];
    let mut replayed: Vec<(String, i64)> = again
        .iter()
        .map(|r| {
            (
                value(&r.body),
                r.body["Metadata"]["Partition"].as_i64().unwrap(),
            )
        })
        .collect();
    replayed.sort_unstable();
    // Each to the partition it came from, so its key's order holds there.
    assert_eq!(
        replayed,
        [
            ("order-0".to_owned(), 0),
            ("order-1".to_owned(), 1),
            ("order-2".to_owned(), 1)
        ]
    );
    for request in again {
        assert_eq!(request.body["Metadata"]["Key"], "customer-7");
        let headers = headers(&request.body);
        let names: Vec<&str> = headers.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            ["trace", "shoal-replayed-from", "shoal-replay-count"],
            "{headers:?}"
        );
        assert_eq!(headers[0].1, "t-1");
        assert!(headers[1].1.starts_with("orders-poison/0/"), "{headers:?}");
        assert_eq!(headers[2].1, "1");
    }

    // Nothing is left to replay, and a second replay replays nothing.
    wait_for_dead_letters(&api, &contributor, 0).await;
    let second: Value = api
        .request(
            Method::POST,
            &format!("{POISON}/replay"),
            Some(&contributor),
        )
        .json(&json!({"count": 10}))
        .fetch_json()
        .await;
    assert_eq!(second["replayed"], 0, "{second}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(handler.count(), failed + 3, "no event was replayed twice");

    stop.cancel();
    worker.stopped().await.unwrap();
}
