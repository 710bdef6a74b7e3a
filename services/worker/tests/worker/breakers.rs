//! The worker under a function's circuit breaker: a paused Service Bus function receives
//! nothing (its messages stay in the entity) until it is resumed; a retry loop stops when the
//! breaker opens and gives the message back instead of poisoning it, keeping its id and its
//! attempts; a half-open probe whose message never reaches the handler hands its turn back.

use std::time::Duration;

use serde_json::json;
use shoal_domain::circuit_breaker::BreakerCause;
use shoal_testkit::handler::Behaviour;

use crate::service_bus_support::wait_for_line;
use crate::support::*;

#[tokio::test]
async fn a_paused_service_bus_function_receives_nothing_until_resumed() -> anyhow::Result<()> {
    use crate::service_bus_support::{namespace, put_app, queue, queue_entity, start, trigger};
    let (h, bus) = start(
        Behaviour::Respond(json!({})),
        namespace(json!([queue_entity("orders", json!({}))]), json!([])),
    )
    .await?;
    put_app(&h, &bus, json!({})).await?;
    h.put_function_body(
        APP,
        "ship",
        json!({"bindings": trigger(json!({"queueName": "orders"}))}),
    )
    .await?;
    set_by_hand(&h, "ship", BreakerCause::Paused).await?;
    bus.send_text("orders", &["a", "b", "c"]).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;

    let line = wait_for_line(&worker, "ship", |r| r.status.starts_with("paused")).await?;
    assert_eq!(line.received, 0);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(h.handler.count(), 0, "nothing is invoked while paused");
    assert!(!bus.is_empty(&queue("orders")).await?, "the messages stay");

    set_by_hand(&h, "ship", BreakerCause::Resumed).await?;
    h.handler.wait_for(3, Duration::from_secs(20)).await?;
    let line = wait_for_line(&worker, "ship", |r| r.succeeded == 3 && r.in_flight == 0).await?;
    assert_eq!(line.status, "listening");
    assert!(bus.is_empty(&queue("orders")).await?);
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn an_opening_breaker_stops_retries_and_poisons_nothing() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Status(500)).await?;
    h.put_jobs_function(
        json!({"maxDequeueCount": 1}),
        "fails",
        json!({"retry": {"strategy": "fixedDelay", "maxRetryCount": -1, "delayInterval": "00:00:00.300"}}),
    )
    .await?;
    h.enqueue("jobs", &base64("job")).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;
    h.handler.wait_for(2, Duration::from_secs(20)).await?;

    // maxDequeueCount 1: without the breaker, the retries' end would poison the message.
    set_by_hand(&h, "fails", BreakerCause::Paused).await?;
    let line = wait_for_line(&worker, "fails", |r| r.in_flight == 0 && r.failed == 1).await?;
    let calls = h.handler.count();
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        h.handler.count(),
        calls,
        "no retry once the breaker is open"
    );
    assert_eq!(line.poisoned, 0);
    let requeued = h.queue("jobs").approximate_length().await?;
    assert_eq!(requeued, 1, "the message went back to the queue");
    let poison = match h.queue("jobs-poison").approximate_length().await {
        Ok(n) => n,
        Err(shoal_connectors::QueueError::QueueNotFound { .. }) => 0,
        Err(e) => return Err(e.into()),
    };
    assert_eq!(poison, 0, "nothing is poisoned because of the pause");

    // Resumed with the handler working: the same message is processed, its held receive not
    // counted as an attempt, under the same webhook-id as before the pause.
    h.handler.set_behaviour(Behaviour::Respond(json!({})));
    set_by_hand(&h, "fails", BreakerCause::Resumed).await?;
    h.wait_until_empty("jobs", Duration::from_secs(20)).await?;
    let requests = h.handler.requests();
    let (first, last) = (&requests[0], requests.last().unwrap());
    assert_eq!(last.body["Data"]["msg"], "job");
    assert_eq!(
        last.body["Metadata"]["DequeueCount"], 1,
        "the pause cost no attempt"
    );
    assert_eq!(
        last.header("webhook-id"),
        first.header("webhook-id"),
        "the idempotency key survives the pause"
    );
    assert_eq!(
        last.body["Metadata"]["Id"], first.body["Metadata"]["Id"],
        "the same message, not a copy"
    );
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn a_probe_whose_message_is_poisoned_on_arrival_hands_its_turn_back() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Status(500)).await?;
    // One message at a time: both fail (and are poisoned) before the breaker opens on them.
    h.put_jobs_function(
        json!({"maxDequeueCount": 1, "batchSize": 1}),
        "fails",
        json!({"circuitBreaker": {"failureThreshold": 1, "window": "00:00:30", "cooldown": "00:00:02"}}),
    )
    .await?;
    for i in 0..2 {
        h.enqueue("jobs", &base64(&format!("job {i}"))).await?;
    }
    let worker = h.start_worker(h.worker_config("w1"))?;
    wait_for_line(&worker, "fails", |r| r.status.starts_with("paused")).await?;

    // Received once by someone else while the breaker is open: back past maxDequeueCount, it
    // is the message the half-open probe receives, and it goes to poison without an invocation.
    h.enqueue("jobs", &base64("stale")).await?;
    let stale = h
        .receive_when_visible("jobs", Duration::from_secs(3), Duration::from_secs(10))
        .await?;
    assert_eq!(stale.dequeue_count, 1);
    let poisoned = h
        .wait_for_messages("jobs-poison", 3, Duration::from_secs(30))
        .await?;
    assert!(poisoned.iter().any(|m| m.text == base64("stale")));
    let calls = h.handler.count();

    // The probe turn came back: the next probe takes a fresh message, and its success closes
    // the breaker.
    h.handler.set_behaviour(Behaviour::Respond(json!({})));
    h.enqueue("jobs", &base64("fresh")).await?;
    let requests = h
        .handler
        .wait_for(calls + 1, Duration::from_secs(20))
        .await?;
    assert_eq!(requests[calls].body["Data"]["msg"], "fresh");
    wait_for_line(&worker, "fails", |r| r.status == "listening").await?;
    worker.shut_down().await?;
    Ok(())
}
