//! Sessions: in order within a session, one consumer per session, at most
//! `maxConcurrentSessions` at once, and the slot moves on when a session is idle.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;
use shoal_domain::service_bus_trigger::OutgoingMessage;
use shoal_testkit::handler::Behaviour;

use crate::service_bus_support::*;

const HANDLER_TIME: Duration = Duration::from_millis(150);

#[tokio::test]
async fn sessions_are_fifo_exclusive_and_bounded_by_max_concurrent_sessions() -> anyhow::Result<()>
{
    let (h, bus) = start(
        Behaviour::Delay(HANDLER_TIME, json!({})),
        namespace(
            json!([queue_entity("orders", json!({"RequiresSession": true}))]),
            json!([]),
        ),
    )
    .await?;
    put_app(
        &h,
        &bus,
        json!({"extensions": {"serviceBus": {"maxConcurrentSessions": 2, "sessionIdleTimeout": "00:00:01"}}}),
    )
    .await?;
    h.put_function(
        "fifo",
        trigger(json!({"queueName": "orders", "isSessionsEnabled": true})),
    )
    .await?;
    // Interleaved: s0-0, s1-0, s2-0, s3-0, s0-1, …
    let mut messages = Vec::new();
    for i in 0..5 {
        for s in 0..4 {
            messages.push(OutgoingMessage {
                session_id: Some(format!("s{s}")),
                ..text(&format!("s{s}-{i}"))
            });
        }
    }
    bus.send("orders", &messages).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;

    wait_for_line(&worker, "fifo", |r| r.succeeded == 20 && r.in_flight == 0).await?;
    let requests = h.handler.requests();
    assert_eq!(requests.len(), 20, "each message once");
    let mut by_session: BTreeMap<String, Vec<(String, tokio::time::Instant)>> = BTreeMap::new();
    for request in &requests {
        let session = request.body["Metadata"]["SessionId"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        let body = request.body["Data"]["msg"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        assert!(
            body.starts_with(&format!("{session}-")),
            "{body} in {session}"
        );
        by_session
            .entry(session)
            .or_default()
            .push((body, request.at));
    }
    assert_eq!(by_session.len(), 4);
    for (session, seen) in &by_session {
        let bodies: Vec<&str> = seen.iter().map(|(b, _)| b.as_str()).collect();
        let expected: Vec<String> = (0..5).map(|i| format!("{session}-{i}")).collect();
        assert_eq!(bodies, expected, "in order within {session}");
        // One consumer at a time: the next message of a session arrives only after the
        // previous invocation (which takes HANDLER_TIME) ended.
        for pair in seen.windows(2) {
            let gap = pair[1].1 - pair[0].1;
            assert!(
                gap >= HANDLER_TIME - Duration::from_millis(10),
                "{session}: next after {gap:?}"
            );
        }
    }
    let most = h.handler.max_concurrent_of("fifo");
    assert_eq!(most, 2, "two sessions at a time, never more");
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn the_session_lock_is_renewed_while_the_handler_outlives_it() -> anyhow::Result<()> {
    let (h, bus) = start(
        Behaviour::Delay(Duration::from_secs(13), json!({})),
        namespace(
            json!([queue_entity(
                "orders",
                json!({"RequiresSession": true, "LockDuration": "PT5S"})
            )]),
            json!([]),
        ),
    )
    .await?;
    put_app_with_timeout(
        &h,
        &bus,
        json!({"extensions": {"serviceBus": {"sessionIdleTimeout": "00:00:01"}}}),
        30,
    )
    .await?;
    h.put_function(
        "slow",
        trigger(json!({"queueName": "orders", "isSessionsEnabled": true})),
    )
    .await?;
    bus.send(
        "orders",
        &[OutgoingMessage {
            session_id: Some("s".into()),
            ..text("slow one")
        }],
    )
    .await?;
    let worker = h.start_worker(h.worker_config("w1"))?;

    wait_for_line(&worker, "slow", |r| r.succeeded == 1 && r.in_flight == 0).await?;
    assert_eq!(
        h.handler.count(),
        1,
        "the 5 s session lock never lapsed during the 13 s invocation"
    );
    assert_eq!(h.handler.requests()[0].body["Metadata"]["DeliveryCount"], 1);
    worker.shut_down().await?;
    // The message was completed under the renewed session lock, so the session receiver does
    // not get it again before the worker stops (it did while only the session lock, not the
    // session's message locks, was renewed).
    assert_eq!(h.handler.count(), 1, "completed once, not delivered again");
    Ok(())
}
