//! A stream trigger's handler that cannot take an event now. A retry far enough off to be parked
//! (`shoal_domain::durable_retry`): the event goes to the retry topic `orders-retry` with its
//! due time and where its retries stand, the partition moves on, and the retry topic's own group
//! (`billing-retry`) tries it again when it is due — on whichever worker reads that partition
//! of the retry topic, after a restart too — with the next `RetryCount` and the attempt's own
//! `webhook-id`. A handler answering 429 with `Retry-After`: the event waits, no attempt counted.

use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::json;
use shoal_domain::stream_trigger::retry_topic::{RETRY_COUNT, parked_event};
use shoal_testkit::handler::{Behaviour, Recorded};

use crate::kafka::{Stream, WAIT, trigger, values};
use crate::retries::metadata;
use crate::service_bus_support::wait_for_line;

fn value(request: &Recorded) -> String {
    values(&request.body).join(",")
}

/// A function on `orders` that retries once after `delay`, whose handler fails the first
/// request and takes every other.
async fn one_slow_retry(delay: &str) -> Result<Stream> {
    let s = Stream::start(Behaviour::Respond(json!({})), 1).await?;
    s.h.handler.script(vec![Behaviour::Status(500)]);
    s.put_function(json!({
        "bindings": trigger(json!({})),
        "retry": {"strategy": "fixedDelay", "maxRetryCount": 1, "delayInterval": delay},
    }))
    .await?;
    Ok(s)
}

#[tokio::test]
async fn a_long_retry_is_parked_on_the_retry_topic_and_the_partition_moves_on() -> Result<()> {
    let s = one_slow_retry("00:01:00").await?;
    s.produce(0, &["first", "second", "third"]).await?;
    let mut config = s.h.worker_config("w1");
    // The minute's wait takes 1.5 s; that it is a minute decides the parking.
    config.retry_divisor = 40;
    let worker = s.h.start_worker(config)?;

    let requests = s.h.handler.wait_for(4, WAIT).await?;
    let order: Vec<String> = requests.iter().map(value).collect();
    assert_eq!(
        order,
        ["first", "second", "third", "first"],
        "the events behind the parked one are not held back by its wait"
    );
    assert_eq!(
        metadata(&requests, &["RetryContext", "RetryCount"]),
        [0, 0, 0, 1].map(|n| json!(n))
    );
    let (failed, retried) = (&requests[0], &requests[3]);
    assert_eq!(
        retried.header("webhook-id"),
        failed.header("webhook-id"),
        "the retry is the same event to the handler"
    );
    assert_eq!(retried.header("webhook-id"), Some("orders-0-0"));
    assert_eq!(retried.body["Metadata"]["Offset"], 0);
    assert_eq!(retried.body["Metadata"]["Topic"], "orders");
    assert_eq!(retried.body["Data"], failed.body["Data"]);
    assert!(
        retried.body["Metadata"]["RetryContext"]["Exception"]["Message"]
            .as_str()
            .is_some_and(|m| m.contains("500")),
        "the failure before the park crosses it: {}",
        retried.body["Metadata"]["RetryContext"]
    );
    let waited = retried.at - failed.at;
    assert!(
        waited >= Duration::from_millis(1400),
        "tried again after {waited:?}, sooner than its wait"
    );

    let parked = s.read_topic("orders-retry", 1).await?;
    assert_eq!(parked.len(), 1, "one record parked");
    let record = parked_event(&parked[0]).map_err(anyhow::Error::msg)?;
    assert_eq!(record.state.retries, 1);
    assert_eq!(
        (record.event.topic.as_str(), record.event.offset),
        ("orders", 0)
    );
    assert_eq!(record.event.key.as_deref(), Some(&b"customer-7"[..]));
    assert!(record.event.headers.iter().any(|(k, _)| k == "trace"));

    s.wait_for_lag(0).await?;
    let line = wait_for_line(&worker, "bill", |r| r.succeeded == 3 && r.parked == 1).await?;
    assert_eq!((line.failed, line.poisoned), (0, 0));
    s.wait_for_retries_done().await?;
    assert_eq!(s.h.handler.count(), 4, "the retry is delivered once");
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn a_parked_event_survives_its_worker_and_is_tried_once_when_due() -> Result<()> {
    let s = one_slow_retry("00:10:00").await?;
    s.produce(0, &["late"]).await?;
    let mut config = s.h.worker_config("w1");
    // Ten minutes take 12 s: long enough to stop the worker in between.
    config.retry_divisor = 50;
    let worker = s.h.start_worker(config.clone())?;
    let first = s.h.handler.wait_for(1, WAIT).await?;
    let parked_at = Instant::now();
    // The checkpoint moves on once the event is parked.
    s.wait_for_lag(0).await?;
    let parked = s.read_topic("orders-retry", 1).await?;
    assert_eq!(
        parked[0]
            .headers
            .iter()
            .find(|(k, _)| k == RETRY_COUNT)
            .and_then(|(_, v)| v.clone()),
        Some(b"1".to_vec())
    );
    worker.shut_down().await?;
    assert_eq!(
        s.h.handler.count(),
        1,
        "not tried again before its due time"
    );

    config.name = "w2".into();
    let again = s.h.start_worker(config)?;
    let requests = s.h.handler.wait_for(2, Duration::from_secs(60)).await?;
    let retry = &requests[1];
    assert!(
        parked_at.elapsed() >= Duration::from_secs(10),
        "tried again {:?} after the park, before its due time",
        parked_at.elapsed()
    );
    assert_eq!(value(retry), "late");
    assert_eq!(retry.body["Metadata"]["RetryContext"]["RetryCount"], 1);
    assert_eq!(retry.header("webhook-id"), first[0].header("webhook-id"));
    s.wait_for_retries_done().await?;
    s.wait_for_lag(0).await?;
    assert_eq!(s.h.handler.count(), 2, "delivered once after the restart");
    again.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn a_throttling_handler_costs_a_stream_event_no_attempt() -> Result<()> {
    let s = Stream::start(Behaviour::Respond(json!({})), 1).await?;
    let throttled = || Behaviour::RespondHttp {
        status: 429,
        headers: vec![("retry-after", "1")],
        body: "",
    };
    s.h.handler
        .script(vec![throttled(), throttled(), throttled()]);
    // No retry policy: a failed attempt would send the event to the dead-letter topic at once.
    s.put_function(json!({"bindings": trigger(json!({}))}))
        .await?;
    s.produce(0, &["a", "b"]).await?;
    let worker = s.h.start_worker(s.h.worker_config("w1"))?;

    let requests = s.h.handler.wait_for(5, WAIT).await?;
    let order: Vec<String> = requests.iter().map(value).collect();
    assert_eq!(order, ["a", "a", "a", "a", "b"], "a waits, then b");
    for gap in crate::retries::gaps(&requests[..4]) {
        assert!(
            gap >= Duration::from_millis(900),
            "tried again {gap:?} after a 429 asking for a second"
        );
    }
    s.wait_for_lag(0).await?;
    let line = wait_for_line(&worker, "bill", |r| r.succeeded == 2).await?;
    assert_eq!(
        (line.failed, line.retried, line.poisoned, line.deferred),
        (0, 0, 0, 3),
        "three deferrals, no attempt lost: {line:?}"
    );
    worker.shut_down().await?;
    Ok(())
}
