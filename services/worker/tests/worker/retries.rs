//! Retry policies (`retry` in a function or in `host.json`) executed by the worker: attempts
//! on the same instance while the message stays invisible, each with the same `webhook-id` and
//! its `RetryContext`, before the failure is final and the queue's own path (release, then
//! poison after `maxDequeueCount`) applies.

use std::time::Duration;

use serde_json::{Value, json};
use shoal_testkit::handler::{Behaviour, Recorded};

use crate::service_bus_support::wait_for_line;
use crate::support::*;

const WAIT: Duration = Duration::from_secs(60);

pub(crate) fn gaps(requests: &[Recorded]) -> Vec<Duration> {
    requests.windows(2).map(|p| p[1].at - p[0].at).collect()
}

/// Every attempt carries the same idempotency key.
pub(crate) fn assert_one_webhook_id(requests: &[Recorded]) {
    let ids: Vec<_> = requests
        .iter()
        .map(|r| r.header("webhook-id").unwrap().to_owned())
        .collect();
    assert!(
        ids.iter().all(|id| *id == ids[0]),
        "one webhook-id for every attempt: {ids:?}"
    );
}

pub(crate) fn metadata(requests: &[Recorded], path: &[&str]) -> Vec<Value> {
    requests
        .iter()
        .map(|r| {
            path.iter()
                .fold(&r.body["Metadata"], |value, key| &value[*key])
                .clone()
        })
        .collect()
}

#[tokio::test]
async fn fixed_delay_retries_then_the_queue_releases_and_finally_poisons() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Status(500)).await?;
    h.put_jobs_function(
        json!({"maxDequeueCount": 2, "visibilityTimeout": "00:00:01"}),
        "fails",
        json!({"retry": {"strategy": "fixedDelay", "maxRetryCount": 2, "delayInterval": "00:00:01"}}),
    )
    .await?;
    h.enqueue("jobs", &base64("job 1")).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;

    let poisoned = h.wait_for_messages("jobs-poison", 1, WAIT).await?;
    assert_eq!(
        poisoned[0].text,
        base64("job 1"),
        "the body reaches poison intact"
    );
    let requests = h.handler.requests();
    // maxDequeueCount × (1 + maxRetryCount) handler calls.
    assert_eq!(requests.len(), 6, "2 dequeues × 3 attempts");
    assert_one_webhook_id(&requests);
    assert_eq!(
        metadata(&requests, &["DequeueCount"]),
        [1, 1, 1, 2, 2, 2].map(|n| json!(n))
    );
    assert_eq!(
        metadata(&requests, &["RetryContext", "RetryCount"]),
        [0, 1, 2, 0, 1, 2].map(|n| json!(n))
    );
    assert_eq!(
        metadata(&requests, &["RetryContext", "MaxRetryCount"]),
        vec![json!(2); 6]
    );
    let exceptions = metadata(&requests, &["RetryContext", "Exception", "Message"]);
    assert!(
        exceptions[0].is_null() && exceptions[3].is_null(),
        "a first attempt has no Exception"
    );
    assert!(
        exceptions[1].as_str().is_some_and(|m| m.contains("500")),
        "a retry says why the attempt before failed: {exceptions:?}"
    );
    for (i, gap) in gaps(&requests).into_iter().enumerate() {
        assert!(
            gap >= Duration::from_millis(950),
            "gap {i}: {gap:?} < delayInterval (1 s)"
        );
    }
    let report = wait_for_line(&worker, "fails", |r| r.poisoned == 1 && r.in_flight == 0).await?;
    assert_eq!(
        (report.retried, report.failed),
        (4, 2),
        "4 retries; 2 final failures"
    );
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn exponential_backoff_from_host_json_grows_to_its_maximum() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Status(500)).await?;
    h.put_app(
        json!({
            "extensions": {"queues": {"maxDequeueCount": 1}},
            "retry": {"strategy": "exponentialBackoff", "maxRetryCount": 3,
                      "minimumInterval": "00:00:01", "maximumInterval": "00:00:03"}
        }),
        json!({}),
    )
    .await?;
    h.put_function("fails", queue_trigger("jobs")).await?;
    h.enqueue("jobs", &base64("job")).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;

    h.wait_for_messages("jobs-poison", 1, WAIT).await?;
    let requests = h.handler.requests();
    assert_eq!(requests.len(), 4, "1 + maxRetryCount attempts, then poison");
    // minimumInterval, then min + (0.8…1.2)·min, then min + (0.8…1.2)·2·min capped at 3 s.
    let gaps = gaps(&requests);
    let floors = [950, 1750, 2550];
    for ((gap, floor), retry) in gaps.iter().zip(floors).zip(1..) {
        assert!(
            *gap >= Duration::from_millis(floor),
            "retry {retry} came after {gap:?}, before its back-off ({floor} ms)"
        );
    }
    assert!(
        gaps[2] < Duration::from_secs(6),
        "the maximum (3 s) bounds the back-off: {gaps:?}"
    );
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn retrying_until_success_stops_when_the_handler_recovers() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    h.handler.script(vec![
        Behaviour::Status(500),
        Behaviour::Status(502),
        Behaviour::Status(500),
    ]);
    h.put_jobs_function(
        json!({"maxDequeueCount": 1}),
        "recovers",
        json!({"retry": {"strategy": "fixedDelay", "maxRetryCount": -1, "delayInterval": "00:00:00.200"}}),
    )
    .await?;
    h.enqueue("jobs", &base64("job")).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;

    h.wait_until_empty("jobs", WAIT).await?;
    let report = wait_for_line(&worker, "recovers", |r| r.succeeded == 1).await?;
    assert_eq!((report.retried, report.failed, report.poisoned), (3, 0, 0));
    let requests = h.handler.requests();
    assert_eq!(
        requests.len(),
        4,
        "three failures, then the success ends the retries"
    );
    assert_eq!(
        metadata(&requests, &["RetryContext", "RetryCount"]),
        [0, 1, 2, 3].map(|n| json!(n))
    );
    assert_eq!(
        metadata(&requests, &["DequeueCount"]),
        vec![json!(1); 4],
        "never released"
    );
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn service_bus_retries_under_the_lock_then_dead_letters_at_max_delivery_count()
-> anyhow::Result<()> {
    use crate::service_bus_support::ship_orders_with_retry;
    // A 5 s lock and 6 s between attempts: the retry outlasts the lock, which is renewed.
    let retry = json!({"strategy": "fixedDelay", "maxRetryCount": 1, "delayInterval": "00:00:06"});
    let (h, bus) = ship_orders_with_retry(
        Behaviour::Status(500),
        json!({"MaxDeliveryCount": 2, "LockDuration": "PT5S"}),
        retry,
    )
    .await?;
    bus.send_text("orders", &["order 1"]).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;

    let dead = bus
        .take(
            &shoal_domain::service_bus_entity::path::EntityPath::Queue("orders".into()),
            1,
            true,
        )
        .await?;
    assert_eq!(dead[0].message.body, b"order 1");
    let report = wait_for_line(&worker, "ship", |r| r.failed == 2 && r.in_flight == 0).await?;
    assert_eq!(report.retried, 2, "one retry per delivery");
    let requests = h.handler.requests();
    assert_eq!(
        requests.len(),
        4,
        "MaxDeliveryCount × (1 + maxRetryCount) handler calls"
    );
    assert_eq!(
        metadata(&requests, &["DeliveryCount"]),
        [1, 1, 2, 2].map(|n| json!(n))
    );
    assert_eq!(
        metadata(&requests, &["RetryContext", "RetryCount"]),
        [0, 1, 0, 1].map(|n| json!(n))
    );
    assert_one_webhook_id(&requests);
    assert!(
        gaps(&requests)[0] >= Duration::from_millis(5950),
        "the retry waited its delayInterval"
    );
    worker.shut_down().await?;
    Ok(())
}
