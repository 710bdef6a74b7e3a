//! A message stays with the delivery that holds it: its invisibility is renewed while the
//! handler runs, and a second receipt of a message still in flight does not start a second
//! invocation.

use std::time::Duration;

use serde_json::json;
use shoal_testkit::handler::Behaviour;

use crate::support::*;

const WAIT: Duration = Duration::from_secs(20);

/// The handler runs three times as long as the (test-only, 2 s) invisibility: the worker pushes
/// the invisibility out every second, so the message never becomes visible to another
/// consumer meanwhile, and it is deleted once the handler answers.
#[tokio::test]
async fn invisibility_is_renewed_while_the_handler_outlives_it() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Delay(Duration::from_secs(6), json!({}))).await?;
    h.put_app(
        json!({}),
        json!({"handler": {"url": h.handler.url().as_str(), "timeoutSeconds": 30}}),
    )
    .await?;
    h.put_function("slow", queue_trigger("renewed")).await?;
    h.enqueue("renewed", &base64("long job")).await?;
    let mut config = h.worker_config("w1");
    config.invisibility = Duration::from_secs(2);
    let worker = h.start_worker(config)?;

    let started = h.handler.wait_for(1, WAIT).await?[0].at;
    let id = h.handler.requests()[0].body["Metadata"]["Id"]
        .as_str()
        .expect("Id")
        .to_owned();
    // The window in which another consumer must find nothing: from past the first 2 s of
    // invisibility until shortly before the handler answers.
    let q = h.queue("renewed");
    tokio::time::sleep_until(started + Duration::from_millis(2500)).await;
    while tokio::time::Instant::now() < started + Duration::from_millis(5500) {
        let stolen = q.receive(1, Duration::from_secs(30)).await?;
        assert!(
            stolen.is_empty(),
            "the message became visible while its handler ran ({:?} after it started)",
            started.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    h.wait_until_empty("renewed", WAIT).await?;
    let renewals = h.azurite.requests_matching(|l| {
        l.contains(&format!("PUT /devstoreaccount1/renewed/messages/{id}?"))
            && l.contains("visibilitytimeout=2")
    });
    assert!(
        renewals >= 4,
        "about one renewal a second over the 6 s invocation, saw {renewals}"
    );
    assert_eq!(h.handler.count(), 1);
    worker.shut_down().await?;
    Ok(())
}

/// While the handler runs, the test makes the message visible again with the receipt the
/// handler was given, so the worker really receives it a second time. The delivery in flight
/// adopts the new receipt: the handler is not called again, and the message is deleted with
/// the newer receipt when the first invocation succeeds.
#[tokio::test]
async fn a_message_received_again_while_in_flight_is_not_processed_twice() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Delay(Duration::from_secs(6), json!({}))).await?;
    h.put_app(
        json!({}),
        json!({"handler": {"url": h.handler.url().as_str(), "timeoutSeconds": 30}}),
    )
    .await?;
    h.put_function("slow", queue_trigger("twice")).await?;
    h.enqueue("twice", &base64("only once")).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;

    let first = h.handler.wait_for(1, WAIT).await?.remove(0);
    let meta = &first.body["Metadata"];
    let id = meta["Id"].as_str().expect("Id");
    let mut receipt = meta["PopReceipt"].as_str().expect("PopReceipt").to_owned();
    let q = h.queue("twice");
    // Keep the message visible until someone else's receive invalidates our receipt: only the
    // worker's poll can.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(4);
    loop {
        match q.update_visibility(id, &receipt, Duration::ZERO).await {
            Ok(new) => receipt = new.pop_receipt,
            Err(_) => break,
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "the worker never received the message again"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        first.at.elapsed() < Duration::from_secs(6),
        "received again while the first invocation still runs"
    );

    // Deleted with the adopted receipt (a stale one would leave it invisible for 10 minutes).
    h.wait_until_empty("twice", WAIT).await?;
    assert_eq!(h.handler.count(), 1, "the handler ran once");
    assert_eq!(h.handler.overlapping_deliveries(), 0);
    let report = &worker.stats.reports()[0];
    assert_eq!(
        (report.received, report.succeeded, report.failed),
        (1, 1, 0)
    );
    worker.shut_down().await?;
    Ok(())
}
