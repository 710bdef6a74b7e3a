//! Per-event outcomes of a `cardinality: many` Kafka batch against a real Kafka-protocol broker
//! (tansu): a handler that names failed events in `batchItemFailures` gets only those again
//! (as a smaller batch, with their own `webhook-id`), and only those are dead-lettered when
//! the retries run out; an answer that cannot be read fails the whole batch, as Lambda does.

use std::collections::BTreeMap;

use anyhow::Result;
use serde_json::{Value, json};
use shoal_testkit::handler::Behaviour;

use crate::kafka::{Stream, trigger, values};
use crate::service_bus_support::wait_for_line;

/// Reports every event whose value starts with `bad` failed, by its `ItemIdentifier`.
fn fail_the_bad_ones(request: &Value) -> Value {
    let ids = request["Metadata"]["ItemIdentifierArray"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let failures: Vec<Value> = values(request)
        .iter()
        .zip(ids)
        .filter(|(value, _)| value.starts_with("bad"))
        .map(|(_, id)| json!({"itemIdentifier": id}))
        .collect();
    json!({"batchItemFailures": failures})
}

const EVENTS: [&str; 10] = [
    "ok-0", "ok-1", "bad-2", "ok-3", "ok-4", "ok-5", "ok-6", "bad-7", "ok-8", "ok-9",
];

/// How often each event value reached the handler.
fn deliveries(s: &Stream) -> BTreeMap<String, usize> {
    let mut seen = BTreeMap::new();
    for request in s.h.handler.requests() {
        for value in values(&request.body) {
            *seen.entry(value).or_insert(0) += 1;
        }
    }
    seen
}

#[tokio::test]
async fn only_the_events_a_batch_handler_reports_failed_are_retried_and_dead_lettered() -> Result<()>
{
    let s = Stream::start(Behaviour::RespondBy(fail_the_bad_ones), 1).await?;
    s.put_function(json!({
        "bindings": trigger(json!({"cardinality": "many"})),
        "retry": {"strategy": "fixedDelay", "maxRetryCount": 2, "delayInterval": "00:00:01"},
    }))
    .await?;
    s.produce(0, &EVENTS).await?;
    let worker = s.h.start_worker(s.h.worker_config("w1"))?;

    s.wait_for_lag(0).await?;
    let line = wait_for_line(&worker, "bill", |r| r.poisoned == 2).await?;
    assert_eq!(line.failed, 2, "{line:?}");
    assert_eq!(line.succeeded, 8, "{line:?}");

    // The good events once; the bad ones once, then in each of the two retries.
    let seen = deliveries(&s);
    for event in EVENTS {
        let want = if event.starts_with("bad") { 3 } else { 1 };
        assert_eq!(seen.get(event), Some(&want), "{event}: {seen:?}");
    }
    // A retry carries only what failed, under an idempotency key of its own.
    let requests = s.h.handler.requests();
    let retries: Vec<_> = requests
        .iter()
        .filter(|r| r.body["Metadata"]["RetryContext"]["RetryCount"].as_u64() > Some(0))
        .collect();
    assert_eq!(retries.len(), 2);
    for retry in &retries {
        assert_eq!(values(&retry.body), ["bad-2", "bad-7"]);
        assert_eq!(
            retry.body["Metadata"]["ItemIdentifierArray"],
            json!(["0-2", "0-7"])
        );
        assert_ne!(retry.header("webhook-id"), requests[0].header("webhook-id"));
    }

    // Only the two are on orders-poison.
    let dead = s.read_topic("orders-poison", 2).await?;
    let mut dead: Vec<String> = dead
        .iter()
        .map(|d| String::from_utf8(d.value.clone().unwrap_or_default()).unwrap())
        .collect();
    dead.sort_unstable();
    assert_eq!(dead, ["bad-2", "bad-7"]);
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn a_batch_answer_that_cannot_be_read_fails_the_whole_batch() -> Result<()> {
    let answer = json!({"batchItemFailures": [{"itemIdentifier": "0-99"}]});
    let s = Stream::start(Behaviour::Respond(answer), 1).await?;
    s.put_function(json!({"bindings": trigger(json!({"cardinality": "many"}))}))
        .await?;
    s.produce(0, &["a", "b", "c"]).await?;
    let worker = s.h.start_worker(s.h.worker_config("w1"))?;

    s.wait_for_lag(0).await?;
    let line = wait_for_line(&worker, "bill", |r| r.poisoned == 3).await?;
    assert_eq!(line.failed, 3, "{line:?}");
    let dead = s.read_topic("orders-poison", 3).await?;
    assert_eq!(dead.len(), 3);
    let reason = dead[0]
        .headers
        .iter()
        .find(|(k, _)| k == "shoal-dead-letter-reason")
        .and_then(|(_, v)| v.clone())
        .map(|v| String::from_utf8(v).unwrap())
        .unwrap_or_default();
    assert!(reason.contains("\"0-99\" is no event"), "{reason}");
    worker.shut_down().await?;
    Ok(())
}
