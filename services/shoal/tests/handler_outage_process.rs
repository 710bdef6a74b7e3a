//! A handler that is down or asks Shoal to slow down never costs a message, against real
//! `shoal worker` processes, Azurite and the local Service Bus stand-in:
//!
//! * the handler's port is closed when messages arrive, then it starts: every queue message
//!   and every Service Bus message is processed exactly once afterwards, with its dequeue or
//!   delivery count still 1, nothing poisoned or dead-lettered — with the breaker's default
//!   settings and a single message first (a low-traffic function no longer reaches poison);
//!   meanwhile every breaker of the app is open with cause `handlerUnreachable`;
//! * a handler answering 429 with `Retry-After: 2` for a few seconds: no attempt is counted
//!   (`RetryContext.RetryCount` and `DequeueCount` stay as they were), each message is tried
//!   again only after the delay, and all are delivered once it answers;
//! * a handler whose declared health check (`handler.health`) fails: every listener of the app
//!   stops receiving (cause `handlerUnreachable`) although the handler still answers calls, and
//!   the messages that arrived meanwhile are delivered once after the checks pass again;
//! * a minute-long outage while 200 queue and 200 Service Bus messages arrive
//!   (`handler_outage/under_load.rs`);
//! * a retry ten minutes off, parked at the queue, survives a SIGKILL of its worker
//!   (`handler_outage/parked_retry.rs`).

#[path = "support/host_identity.rs"]
#[allow(dead_code)]
mod host_identity;
#[path = "handler_outage/parked_retry.rs"]
mod parked_retry;
#[path = "../../worker/tests/worker/service_bus_support.rs"]
#[allow(dead_code)]
mod service_bus_support;
#[path = "../../worker/tests/worker/support.rs"]
#[allow(dead_code)]
mod support;
#[path = "handler_outage/under_load.rs"]
mod under_load;
#[path = "support/worker_processes.rs"]
#[allow(dead_code)]
mod worker_processes;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use shoal_domain::circuit_breaker::{BreakerCause, BreakerState};
use shoal_store::breakers::{self, FunctionRef};
use shoal_testkit::handler::{Behaviour, Recorded, RecordingHandler};
use support::{APP, Harness, base64, queue_trigger, tenant};
use worker_processes::spawn_worker;

use service_bus_support::{Bus, namespace, queue, queue_entity, trigger};

const FUNCTION: &str = "steady";
/// How long the handler stays down once the worker has found it unreachable.
const OUTAGE: Duration = Duration::from_secs(4);

async fn breaker(h: &Harness) -> anyhow::Result<breakers::BreakerRecord> {
    let id = tenant();
    let mut tx = shoal_store::begin_tenant(&h.pool, &id).await?;
    let f = FunctionRef {
        tenant: &id,
        app: APP,
        function: FUNCTION,
    };
    let record = breakers::get(&mut tx, f).await?;
    shoal_store::commit(tx).await?;
    Ok(record)
}

async fn history(h: &Harness) -> anyhow::Result<Vec<BreakerCause>> {
    let id = tenant();
    let mut tx = shoal_store::begin_tenant(&h.pool, &id).await?;
    let f = FunctionRef {
        tenant: &id,
        app: APP,
        function: FUNCTION,
    };
    let transitions = breakers::transitions(&mut tx, f, None, 20).await?;
    shoal_store::commit(tx).await?;
    Ok(transitions.iter().rev().map(|t| t.cause).collect())
}

async fn wait_for_state(
    h: &Harness,
    wanted: BreakerState,
    timeout: Duration,
) -> anyhow::Result<breakers::BreakerRecord> {
    let deadline = Instant::now() + timeout;
    loop {
        let record = breaker(h).await?;
        if record.state == wanted {
            return Ok(record);
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "the breaker stayed {:?} ({:?}), expected {wanted:?}",
            record.state,
            record.cause
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn poisoned(h: &Harness, queue: &str) -> anyhow::Result<i64> {
    match h
        .queue(&format!("{queue}-poison"))
        .approximate_length()
        .await
    {
        Ok(n) => Ok(n as i64),
        Err(shoal_connectors::QueueError::QueueNotFound { .. }) => Ok(0),
        Err(e) => Err(e.into()),
    }
}

/// The handler's requests by the message's text (`Data.msg`).
fn by_message(requests: &[Recorded]) -> BTreeMap<String, Vec<&Recorded>> {
    let mut by = BTreeMap::<String, Vec<&Recorded>>::new();
    for r in requests {
        let text = r.body["Data"]["msg"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        by.entry(text).or_default().push(r);
    }
    by
}

/// The outage's shape, whatever the trigger: one message while the handler is down (a
/// low-traffic function), the app's breakers open, two more arrive, then the handler starts.
async fn outage(
    h: &Harness,
    send: impl AsyncFn(&str) -> anyhow::Result<()>,
    port: u16,
) -> anyhow::Result<RecordingHandler> {
    send("first").await?;
    // Generous: the worker process starts and connects first.
    let opened = wait_for_state(h, BreakerState::Open, Duration::from_secs(60)).await?;
    assert_eq!(opened.cause, Some(BreakerCause::HandlerUnreachable));
    assert!(
        opened.failures[0].reason.contains("could not be reached"),
        "the first connection failure says why: {:?}",
        opened.failures
    );
    send("second").await?;
    send("third").await?;
    tokio::time::sleep(OUTAGE).await;
    let handler = RecordingHandler::start_on(port, Behaviour::Respond(json!({}))).await?;
    let started = Instant::now();
    handler.wait_for(3, Duration::from_secs(20)).await?;
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "processed within a probe interval or two of the handler coming back ({:?})",
        started.elapsed()
    );
    wait_for_state(h, BreakerState::Closed, Duration::from_secs(10)).await?;
    assert_eq!(
        history(h).await?,
        [
            BreakerCause::HandlerUnreachable,
            BreakerCause::HandlerReachable
        ]
    );
    Ok(handler)
}

fn assert_processed_once(handler: &RecordingHandler, count: &str) {
    let requests = handler.requests();
    let by = by_message(&requests);
    assert_eq!(
        by.keys().map(String::as_str).collect::<Vec<_>>(),
        ["first", "second", "third"]
    );
    for (text, calls) in &by {
        assert_eq!(calls.len(), 1, "{text} processed exactly once");
        assert_eq!(
            calls[0].body["Metadata"][count], 1,
            "{text}: the outage raised no {count}"
        );
    }
}

#[tokio::test]
async fn queue_messages_wait_out_a_handler_that_is_down() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    let (port, down) = RecordingHandler::closed_port().await?;
    // Before, two refused connections (visible again at once) poisoned a message.
    h.put_app(
        json!({"extensions": {"queues": {"maxDequeueCount": 2}}}),
        json!({"handler": {"url": down.as_str(), "timeoutSeconds": 5}}),
    )
    .await?;
    h.put_function_body(APP, FUNCTION, json!({"bindings": queue_trigger("jobs")}))
        .await?;
    h.queue("jobs").create_if_missing().await?;
    let _worker = spawn_worker(&h, "w-outage");
    let send = async |text: &str| h.enqueue("jobs", &base64(text)).await;
    let handler = outage(&h, send, port).await?;
    h.wait_until_empty("jobs", Duration::from_secs(20)).await?;
    // Nothing comes back later: every message was deleted after its one invocation.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_processed_once(&handler, "DequeueCount");
    assert_eq!(poisoned(&h, "jobs").await?, 0, "nothing poisoned");
    Ok(())
}

#[tokio::test]
async fn service_bus_messages_wait_out_a_handler_that_is_down() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    let (port, down) = RecordingHandler::closed_port().await?;
    // Before, each refused connection abandoned the message: three dead-lettered it.
    let bus = Bus::start(namespace(
        json!([queue_entity("orders", json!({"MaxDeliveryCount": 3}))]),
        json!([]),
    ))
    .await?;
    h.put_app(
        json!({}),
        json!({
            "handler": {"url": down.as_str(), "timeoutSeconds": 5},
            "appSettings": {
                "AzureWebJobsStorage": h.azurite.connection_string(),
                "AzureWebJobsServiceBus": bus.connection_string(),
            }
        }),
    )
    .await?;
    h.put_function_body(
        APP,
        FUNCTION,
        json!({"bindings": trigger(json!({"queueName": "orders"}))}),
    )
    .await?;
    let _worker = spawn_worker(&h, "w-outage");
    let send = async |text: &str| bus.send_text("orders", &[text]).await;
    let handler = outage(&h, send, port).await?;
    let deadline = Instant::now() + Duration::from_secs(20);
    while !bus.is_empty(&queue("orders")).await? {
        anyhow::ensure!(Instant::now() < deadline, "orders not empty");
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_processed_once(&handler, "DeliveryCount");
    let mut dead = bus.client.dead_letter_receiver(&queue("orders")).await?;
    let dead_letters = dead.receive(10, Duration::from_millis(500)).await?;
    assert!(dead_letters.is_empty(), "nothing dead-lettered");
    Ok(())
}

#[tokio::test]
async fn a_handler_asking_to_slow_down_costs_no_attempt() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::RespondHttp {
        status: 429,
        headers: vec![("retry-after", "2")],
        body: "",
    })
    .await?;
    // Before, a 429 was a failure: one retry, then a second dequeue poisoned the message.
    h.put_jobs_function(
        json!({"maxDequeueCount": 2}),
        FUNCTION,
        json!({"retry": {"strategy": "fixedDelay", "maxRetryCount": 1, "delayInterval": "00:00:01"}}),
    )
    .await?;
    for text in ["first", "second"] {
        h.enqueue("jobs", &base64(text)).await?;
    }
    let _worker = spawn_worker(&h, "w-throttled");
    h.handler.wait_for(1, Duration::from_secs(30)).await?;
    tokio::time::sleep(Duration::from_secs(5)).await;
    h.handler.set_behaviour(Behaviour::Respond(json!({})));
    h.wait_until_empty("jobs", Duration::from_secs(20)).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;

    let requests = h.handler.requests();
    let by = by_message(&requests);
    assert_eq!(
        by.keys().map(String::as_str).collect::<Vec<_>>(),
        ["first", "second"]
    );
    let throttled = requests
        .iter()
        .filter(|r| r.at < requests[0].at + Duration::from_secs(5))
        .count();
    assert!(
        throttled >= 3,
        "the handler was asked again while it throttled ({throttled} calls)"
    );
    for (text, calls) in &by {
        for call in calls {
            let metadata: &Value = &call.body["Metadata"];
            assert_eq!(
                metadata["RetryContext"]["RetryCount"], 0,
                "{text}: a deferral is no retry"
            );
            assert!(
                metadata["RetryContext"].get("Exception").is_none(),
                "{text}: nor a previous failure"
            );
            assert_eq!(metadata["DequeueCount"], 1, "{text}: nor a dequeue");
        }
        for pair in calls.windows(2) {
            let gap = pair[1].at - pair[0].at;
            assert!(
                gap >= Duration::from_millis(1900),
                "{text}: asked again after {gap:?}, before its Retry-After of 2 s"
            );
        }
    }
    assert_eq!(poisoned(&h, "jobs").await?, 0, "nothing poisoned");
    let record = breaker(&h).await?;
    assert_eq!(
        record.state,
        BreakerState::Closed,
        "a throttle shorter than the window pauses nothing"
    );
    Ok(())
}

#[tokio::test]
async fn a_failing_health_check_holds_every_message_until_it_passes() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    h.put_app(
        json!({"extensions": {"queues": {"maxDequeueCount": 2}}}),
        json!({"handler": {"url": h.handler.url().as_str(), "timeoutSeconds": 5, "health": {
            "path": "/healthz",
            "intervalSeconds": 1,
            "failureThreshold": 2,
            "successThreshold": 2,
        }}}),
    )
    .await?;
    h.put_function_body(APP, FUNCTION, json!({"bindings": queue_trigger("jobs")}))
        .await?;
    h.queue("jobs").create_if_missing().await?;
    let _worker = spawn_worker(&h, "w-health");
    h.enqueue("jobs", &base64("first")).await?;
    h.handler.wait_for(1, Duration::from_secs(60)).await?;
    assert!(
        h.handler.health_checks() >= 1,
        "the worker checks the handler"
    );

    // The handler still answers its calls, but says it cannot take work.
    h.handler.set_health(503);
    let opened = wait_for_state(&h, BreakerState::Open, Duration::from_secs(20)).await?;
    assert_eq!(opened.cause, Some(BreakerCause::HandlerUnreachable));
    assert!(
        opened.failures[0]
            .reason
            .contains("health check GET /healthz answered 503"),
        "the failing check says why: {:?}",
        opened.failures
    );
    h.enqueue("jobs", &base64("second")).await?;
    h.enqueue("jobs", &base64("third")).await?;
    // Several check intervals: no listener receives while the checks fail.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(h.handler.count(), 1, "nothing delivered while unhealthy");

    let checks = h.handler.health_checks();
    h.handler.set_health(200);
    h.handler.wait_for(3, Duration::from_secs(20)).await?;
    assert!(
        h.handler.health_checks() >= checks + 2,
        "two passes in a row before it counts as healthy"
    );
    wait_for_state(&h, BreakerState::Closed, Duration::from_secs(10)).await?;
    assert_eq!(
        history(&h).await?,
        [
            BreakerCause::HandlerUnreachable,
            BreakerCause::HandlerReachable
        ]
    );
    h.wait_until_empty("jobs", Duration::from_secs(20)).await?;
    assert_processed_once(&h.handler, "DequeueCount");
    assert_eq!(poisoned(&h, "jobs").await?, 0, "nothing poisoned");
    Ok(())
}
