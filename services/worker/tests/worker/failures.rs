use std::time::Duration;

use serde_json::json;
use shoal_testkit::handler::Behaviour;

use crate::support::*;

const WAIT: Duration = Duration::from_secs(30);

#[tokio::test]
async fn failing_handler_gets_max_dequeue_count_attempts_then_poison() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Status(500)).await?;
    h.put_app(
        json!({"extensions": {"queues": {"maxDequeueCount": 3, "visibilityTimeout": "00:00:01"}}}),
        json!({}),
    )
    .await?;
    h.put_function("fails", queue_trigger("jobs")).await?;
    let raw = base64(r#"{"job": 7}"#);
    h.enqueue("jobs", &raw).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;

    let poisoned = h.wait_for_messages("jobs-poison", 1, WAIT).await?;
    assert_eq!(poisoned.len(), 1);
    assert_eq!(
        poisoned[0].text, raw,
        "the body reaches the poison queue intact"
    );
    h.wait_until_empty("jobs", WAIT).await?;
    let attempts = h.handler.requests();
    assert_eq!(attempts.len(), 3, "exactly maxDequeueCount attempts");
    let ids: Vec<_> = attempts
        .iter()
        .map(|r| r.header("webhook-id").unwrap().to_owned())
        .collect();
    assert!(
        ids.iter().all(|id| *id == ids[0]),
        "webhook-id is stable across retries"
    );
    let counts: Vec<_> = attempts
        .iter()
        .map(|r| r.body["Metadata"]["DequeueCount"].clone())
        .collect();
    assert_eq!(counts, vec![json!(1), json!(2), json!(3)]);
    for pair in attempts.windows(2) {
        let gap = pair[1].at - pair[0].at;
        assert!(
            gap >= Duration::from_millis(900),
            "visibilityTimeout (1 s) between attempts, saw {gap:?}"
        );
    }
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn message_past_max_dequeue_count_goes_straight_to_poison() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    h.put_app(
        json!({"extensions": {"queues": {"maxDequeueCount": 1}}}),
        json!({}),
    )
    .await?;
    h.put_function("f", queue_trigger("late")).await?;
    h.enqueue("late", &base64("crashed before")).await?;
    // Two earlier receives (as by workers that crashed) leave its dequeue count at 2.
    for count in 1..=2 {
        let got = h
            .receive_when_visible("late", Duration::from_secs(1), WAIT)
            .await?;
        assert_eq!(got.dequeue_count, count);
    }
    let worker = h.start_worker(h.worker_config("w1"))?;
    let poisoned = h.wait_for_messages("late-poison", 1, WAIT).await?;
    assert_eq!(poisoned[0].text, base64("crashed before"));
    assert_eq!(
        h.handler.count(),
        0,
        "not invoked: it arrived past maxDequeueCount"
    );
    worker.shut_down().await?;
    Ok(())
}

/// A queue whose name ends in `-poison` has no poison queue of its own, as in Azure
/// (`QueueListenerFactory.CreatePoisonQueueReference`): a failed message is not released but
/// stays invisible until its invisibility lapses, however short `visibilityTimeout` is; past
/// `maxDequeueCount` it is left on the queue, not invoked again, and no `-poison-poison` queue
/// appears.
#[tokio::test]
async fn a_poison_queue_gets_no_poison_queue_and_keeps_its_failed_messages() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Status(500)).await?;
    h.put_app(
        json!({"extensions": {"queues": {"maxDequeueCount": 2, "visibilityTimeout": "00:00:00"}}}),
        json!({}),
    )
    .await?;
    h.put_function("drain", queue_trigger("jobs-poison"))
        .await?;
    h.enqueue("jobs-poison", &base64("still failing")).await?;
    let mut config = h.worker_config("w1");
    let invisibility = Duration::from_secs(2);
    config.invisibility = invisibility;
    let worker = h.start_worker(config)?;

    let attempts = h.handler.wait_for(2, WAIT).await?;
    let gap = attempts[1].at - attempts[0].at;
    assert!(
        gap >= invisibility - Duration::from_millis(200),
        "left invisible for the invisibility ({invisibility:?}), not released at once: {gap:?}"
    );
    // Past maxDequeueCount: received again after each invisibility, never invoked, never moved.
    tokio::time::sleep(invisibility * 3).await;
    assert_eq!(h.handler.count(), 2, "invoked past maxDequeueCount");
    match h.queue("jobs-poison-poison").approximate_length().await {
        Err(shoal_connectors::QueueError::QueueNotFound { .. }) => {}
        other => panic!("a poison queue of the poison queue: {other:?}"),
    }
    let report = &worker.stats.reports()[0];
    assert_eq!((report.failed, report.poisoned), (2, 0));
    worker.shut_down().await?;
    assert_eq!(
        h.queue("jobs-poison").approximate_length().await?,
        1,
        "the message stays on its queue"
    );
    Ok(())
}

/// Each way a handler can fail ends, with `maxDequeueCount` 1, in the poison queue after one
/// attempt.
async fn fails_into_poison(
    behaviour: Behaviour,
    handler_url: Option<&str>,
    expect_requests: usize,
) -> anyhow::Result<()> {
    let h = Harness::start(behaviour).await?;
    let mut extra = json!({});
    if let Some(url) = handler_url {
        extra = json!({"handler": {"url": url, "timeoutSeconds": 1}});
    } else {
        extra["handler"] = json!({"url": h.handler.url().as_str(), "timeoutSeconds": 1});
    }
    h.put_app(
        json!({"extensions": {"queues": {"maxDequeueCount": 1}}}),
        extra,
    )
    .await?;
    h.put_function("f", queue_trigger("qqq")).await?;
    h.enqueue("qqq", &base64("payload")).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;
    let poisoned = h.wait_for_messages("qqq-poison", 1, WAIT).await?;
    assert_eq!(poisoned[0].text, base64("payload"));
    h.wait_until_empty("qqq", WAIT).await?;
    assert_eq!(h.handler.count(), expect_requests);
    let report = &worker.stats.reports()[0];
    assert_eq!(
        (
            report.received,
            report.succeeded,
            report.failed,
            report.poisoned
        ),
        (1, 0, 1, 1)
    );
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn handler_timeout_is_a_failure() -> anyhow::Result<()> {
    fails_into_poison(Behaviour::Delay(Duration::from_secs(5), json!({})), None, 1).await
}

/// A handler that takes no connections says nothing about the message: it is held in hand, not
/// failed. With `maxDequeueCount` 1 one failed attempt would poison it (as it did before a
/// connection failure stopped counting as one); it stays received, neither failed nor poisoned.
#[tokio::test]
async fn connection_refused_holds_the_message_rather_than_failing_it() -> anyhow::Result<()> {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    h.put_app(
        json!({"extensions": {"queues": {"maxDequeueCount": 1}}}),
        json!({"handler": {"url": format!("http://127.0.0.1:{port}/api"), "timeoutSeconds": 1}}),
    )
    .await?;
    h.put_function("f", queue_trigger("qqq")).await?;
    h.enqueue("qqq", &base64("payload")).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;
    let deadline = tokio::time::Instant::now() + WAIT;
    while worker
        .stats
        .reports()
        .first()
        .is_none_or(|r| r.received == 0)
    {
        anyhow::ensure!(tokio::time::Instant::now() < deadline, "nothing received");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A failed attempt was settled (poisoned) well within this before.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let report = &worker.stats.reports()[0];
    assert_eq!(
        (
            report.received,
            report.succeeded,
            report.failed,
            report.poisoned
        ),
        (1, 0, 0, 0)
    );
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn non_2xx_is_a_failure() -> anyhow::Result<()> {
    fails_into_poison(Behaviour::Status(404), None, 1).await
}

#[tokio::test]
async fn malformed_response_body_is_a_failure() -> anyhow::Result<()> {
    fails_into_poison(Behaviour::RespondRaw("{\"Outputs\": 12"), None, 1).await
}

#[tokio::test]
async fn undecodable_message_is_a_failure_that_ends_in_poison_intact() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    h.put_app(
        json!({"extensions": {"queues": {"maxDequeueCount": 2, "visibilityTimeout": "00:00:00"}}}),
        json!({}),
    )
    .await?;
    h.put_function("f", queue_trigger("bin")).await?;
    h.enqueue("bin", "%%% not base64 %%%").await?;
    let worker = h.start_worker(h.worker_config("w1"))?;
    let poisoned = h.wait_for_messages("bin-poison", 1, WAIT).await?;
    assert_eq!(poisoned[0].text, "%%% not base64 %%%");
    assert_eq!(h.handler.count(), 0, "never handed to the handler");
    worker.shut_down().await?;
    Ok(())
}
