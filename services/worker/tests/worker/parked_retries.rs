//! Retries far enough off to be parked at the queue (`shoal_domain::durable_retry`), and the
//! handler asking for a later try itself (`retryAfter`, or `Retry-After` on a failure): the
//! message's visibility timeout carries the wait, Postgres where its retries stand, and the
//! receive that parked it raises no dequeue count. The process test
//! (`services/shoal/tests/handler_outage/parked_retry.rs`) kills the worker in between.

use std::time::Duration;

use serde_json::{Value, json};
use shoal_testkit::handler::Behaviour;

use crate::retries::{assert_one_webhook_id, gaps, metadata};
use crate::service_bus_support::wait_for_line;
use crate::support::*;

const WAIT: Duration = Duration::from_secs(60);

/// A queue function on `jobs` with `retry` (none: null), whose app allows `max_dequeue_count`
/// dequeues, and one message for it.
async fn queue_function(
    h: &Harness,
    function: &str,
    retry: Value,
    max_dequeue_count: u32,
) -> anyhow::Result<()> {
    h.put_app(
        json!({"extensions": {"queues": {"maxDequeueCount": max_dequeue_count}}}),
        json!({}),
    )
    .await?;
    let mut body = json!({"bindings": queue_trigger("jobs")});
    if !retry.is_null() {
        body["retry"] = retry;
    }
    h.put_function_body(APP, function, body).await?;
    h.enqueue("jobs", &base64("job")).await
}

#[tokio::test]
async fn a_long_retry_is_parked_at_the_queue_and_resumed_where_it_stood() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Status(500)).await?;
    // One dequeue only: a parked receive that counted would poison the message at once.
    let retry = json!({"strategy": "fixedDelay", "maxRetryCount": 2, "delayInterval": "00:01:00"});
    queue_function(&h, "later", retry, 1).await?;
    let mut config = h.worker_config("w1");
    // Each minute's wait takes 1.5 s; that it is a minute decides the parking.
    config.retry_divisor = 40;
    let worker = h.start_worker(config)?;

    h.handler.wait_for(1, WAIT).await?;
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while h.parked_retries().await? == 0 {
        anyhow::ensure!(std::time::Instant::now() < deadline, "never parked");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let poisoned = h.wait_for_messages("jobs-poison", 1, WAIT).await?;
    assert_eq!(poisoned[0].text, base64("job"));
    let requests = h.handler.requests();
    assert_eq!(requests.len(), 3, "1 + maxRetryCount attempts, then poison");
    assert_eq!(
        metadata(&requests, &["RetryContext", "RetryCount"]),
        [0, 1, 2].map(|n| json!(n)),
        "each parked retry resumed where the one before stood"
    );
    assert_eq!(
        metadata(&requests, &["DequeueCount"]),
        vec![json!(1); 3],
        "the receives that parked it are no attempts"
    );
    let exceptions = metadata(&requests, &["RetryContext", "Exception", "Message"]);
    assert!(
        exceptions[2].as_str().is_some_and(|m| m.contains("500")),
        "the previous failure crosses the park: {exceptions:?}"
    );
    assert_one_webhook_id(&requests);
    for gap in gaps(&requests) {
        assert!(
            gap >= Duration::from_millis(1400),
            "a retry came {gap:?} after the attempt before, sooner than its wait"
        );
    }
    let report = wait_for_line(&worker, "later", |r| r.poisoned == 1 && r.in_flight == 0).await?;
    assert_eq!((report.parked, report.retried, report.failed), (2, 2, 1));
    assert_eq!(
        h.parked_retries().await?,
        0,
        "settled: nothing stays parked"
    );
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn the_handler_sets_the_wait_before_the_next_try() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    // Under a policy whose own delay is short, the handler's five minutes (3 s here) replace
    // it for that retry and park the message.
    h.handler.script(vec![Behaviour::Respond(
        json!({"retryAfter": "00:05:00", "Logs": ["busy"]}),
    )]);
    let retry =
        json!({"strategy": "fixedDelay", "maxRetryCount": 1, "delayInterval": "00:00:00.100"});
    queue_function(&h, "asks", retry, 1).await?;
    let mut config = h.worker_config("w1");
    config.retry_divisor = 100;
    let worker = h.start_worker(config)?;

    h.handler.wait_for(2, WAIT).await?;
    h.wait_until_empty("jobs", WAIT).await?;
    let requests = h.handler.requests();
    assert!(
        gaps(&requests)[0] >= Duration::from_millis(2900),
        "tried again after the handler's wait, not the policy's: {:?}",
        gaps(&requests)
    );
    assert_eq!(metadata(&requests, &["DequeueCount"]), [json!(1), json!(1)]);
    assert_eq!(
        metadata(&requests, &["RetryContext", "Exception", "Message"])[1],
        json!("the handler asked for the message to be tried again after 00:05:00")
    );
    let report = wait_for_line(&worker, "asks", |r| r.succeeded == 1).await?;
    assert_eq!((report.parked, report.retried, report.failed), (1, 1, 0));
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn without_a_policy_retry_after_replaces_the_visibility_timeout() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    h.handler.script(vec![Behaviour::RespondHttp {
        status: 500,
        headers: vec![("retry-after", "2")],
        body: "",
    }]);
    // `visibilityTimeout` 0: without the header the message would be back at once.
    queue_function(&h, "plain", Value::Null, 3).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;

    h.handler.wait_for(2, WAIT).await?;
    h.wait_until_empty("jobs", WAIT).await?;
    let requests = h.handler.requests();
    assert!(
        gaps(&requests)[0] >= Duration::from_millis(1900),
        "visible again only after the Retry-After: {:?}",
        gaps(&requests)
    );
    assert_eq!(
        metadata(&requests, &["DequeueCount"]),
        [json!(1), json!(2)],
        "a failed attempt all the same"
    );
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn a_service_bus_retry_is_parked_as_a_scheduled_copy_of_the_same_message()
-> anyhow::Result<()> {
    use crate::service_bus_support::{queue, ship_orders_with_retry, text};
    let retry = json!({"strategy": "fixedDelay", "maxRetryCount": 1, "delayInterval": "00:01:00"});
    let (h, bus) = ship_orders_with_retry(
        Behaviour::Respond(json!({})),
        json!({"MaxDeliveryCount": 2}),
        retry,
    )
    .await?;
    h.handler.script(vec![Behaviour::Status(500)]);
    let mut message = text("order 1");
    message.message_id = Some("order-1".into());
    message
        .application_properties
        .insert("region".into(), json!("west"));
    bus.send("orders", &[message]).await?;
    let mut config = h.worker_config("w1");
    // The minute's wait takes 2 s.
    config.retry_divisor = 30;
    let worker = h.start_worker(config)?;

    h.handler.wait_for(2, WAIT).await?;
    let report = wait_for_line(&worker, "ship", |r| r.succeeded == 1 && r.in_flight == 0).await?;
    assert_eq!((report.parked, report.retried, report.failed), (1, 1, 0));
    let requests = h.handler.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        gaps(&requests)[0] >= Duration::from_millis(1900),
        "the copy was due after the wait: {:?}",
        gaps(&requests)
    );
    assert_one_webhook_id(&requests);
    let retry = &requests[1].body["Metadata"];
    assert_eq!(retry["MessageId"], "order-1", "the original's id");
    assert_eq!(retry["DeliveryCount"], 1, "the hop counts no delivery");
    assert_eq!(retry["RetryContext"]["RetryCount"], 1);
    assert!(
        retry["RetryContext"]["Exception"]["Message"]
            .as_str()
            .is_some_and(|m| m.contains("500")),
        "{retry}"
    );
    assert_eq!(
        retry["UserProperties"],
        json!({"region": "west"}),
        "Shoal's own properties are taken out"
    );
    assert!(
        bus.is_empty(&queue("orders")).await?,
        "the original was completed"
    );
    let mut dead = bus.client.dead_letter_receiver(&queue("orders")).await?;
    let dead_letters = dead.receive(10, Duration::from_millis(500)).await?;
    assert!(dead_letters.is_empty(), "nothing dead-lettered");
    worker.shut_down().await?;
    Ok(())
}
