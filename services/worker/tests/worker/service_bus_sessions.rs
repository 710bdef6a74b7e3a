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

/// The host settings of the stuck-slot tests: `tryTimeout` 2 s, so a slot gives up on an accept
/// the broker does not answer after 7 s (`accept_bound`: the try timeout and a 5 s margin).
fn short_try_timeout(max_concurrent_sessions: u32) -> serde_json::Value {
    json!({"extensions": {"serviceBus": {
        "maxConcurrentSessions": max_concurrent_sessions,
        "sessionIdleTimeout": "00:00:01",
        "clientRetryOptions": {"tryTimeout": "00:00:02"},
    }}})
}

fn local(bus: &Bus) -> &shoal_local_bus::LocalBus {
    bus.local.as_ref().expect("the tests' stand-in")
}

#[tokio::test]
async fn an_accept_the_broker_never_answers_holds_up_only_its_slot_and_shows_as_stuck()
-> anyhow::Result<()> {
    let (h, bus) = start(
        Behaviour::Respond(json!({})),
        namespace(
            json!([queue_entity("orders", json!({"RequiresSession": true}))]),
            json!([]),
        ),
    )
    .await?;
    put_app(&h, &bus, short_try_timeout(2)).await?;
    h.put_function(
        "ordered",
        trigger(json!({"queueName": "orders", "isSessionsEnabled": true})),
    )
    .await?;
    let messages: Vec<OutgoingMessage> = ["s0", "s1"]
        .iter()
        .map(|s| OutgoingMessage {
            session_id: Some((*s).to_owned()),
            ..text(s)
        })
        .collect();
    bus.send("orders", &messages).await?;
    // The first slot to ask for a session gets no answer at all, ever.
    local(&bus).hold_next_session_attaches(1);
    let worker = h.start_worker(h.worker_config("w1"))?;

    // The other slot takes both sessions meanwhile.
    wait_for_line(&worker, "ordered", |r| r.succeeded == 2 && r.in_flight == 0).await?;
    // Once the held accept has waited 7 s, the line says so instead of `listening` …
    let stuck = wait_for_line(&worker, "ordered", |r| r.status.starts_with("stuck:")).await?;
    assert_eq!(
        stuck.status,
        "stuck: 1 of 2 session slots got no answer from the broker (accept next session: no \
         answer within 7s); they retry on new connections"
    );
    // … until that slot, on a new connection, is answered again.
    wait_for_line(&worker, "ordered", |r| r.status == "listening").await?;
    assert_eq!(h.handler.count(), 2, "each message once");
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn idle_slots_pause_while_the_broker_has_no_session_for_them() -> anyhow::Result<()> {
    let (h, bus) = start(
        Behaviour::Respond(json!({})),
        namespace(
            json!([queue_entity("orders", json!({"RequiresSession": true}))]),
            json!([]),
        ),
    )
    .await?;
    put_app(&h, &bus, short_try_timeout(8)).await?;
    h.put_function(
        "idle",
        trigger(json!({"queueName": "orders", "isSessionsEnabled": true})),
    )
    .await?;
    let worker = h.start_worker(h.worker_config("w1"))?;
    wait_for_line(&worker, "idle", |r| r.status == "listening").await?;
    // Every slot has asked once and been refused at once (the stand-in holds no accept).
    let deadline = tokio::time::Instant::now() + WAIT;
    while local(&bus).next_session_attaches() < 8 {
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "the slots never asked"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Over the next three seconds a slot pauses 0.5 + 1 + 2 s between refusals: at most four
    // asks each, however fast or slow the machine (a slower one asks less). Without the pauses
    // the slots asked again as soon as the stand-in refused, one after another behind the
    // connection's lock: over 60 times in those 3 s on a two-core test machine, more on a
    // faster one.
    let before = local(&bus).next_session_attaches();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let asked = local(&bus).next_session_attaches() - before;
    assert!(asked <= 8 * 4, "8 idle slots asked {asked} times in 3 s");

    // A session that arrives now is still taken, within the longest pause.
    bus.send(
        "orders",
        &[OutgoingMessage {
            session_id: Some("late".into()),
            ..text("late")
        }],
    )
    .await?;
    wait_for_line(&worker, "idle", |r| r.succeeded == 1 && r.in_flight == 0).await?;
    worker.shut_down().await?;
    Ok(())
}
