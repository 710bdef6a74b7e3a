//! A function's circuit breaker across three `shoal worker` processes against real Azurite:
//! a handler failing every call opens it within the window; then no listener receives any
//! more (counted in Azurite's access log), the queue keeps its messages and nothing is
//! poisoned; once the handler recovers, the half-open probe closes it and the backlog drains,
//! every message processed. Each transition is posted, signed, to the operator webhook.

#[path = "support/host_identity.rs"]
#[allow(dead_code)]
mod host_identity;
#[path = "../../worker/tests/worker/support.rs"]
#[allow(dead_code)]
mod support;
#[path = "support/worker_processes.rs"]
#[allow(dead_code)]
mod worker_processes;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::json;
use shoal_domain::circuit_breaker::{BreakerCause, BreakerState};
use shoal_store::breakers::{self, FunctionRef};
use shoal_testkit::handler::{Behaviour, RecordingHandler};
use support::{APP, Harness, base64, queue_trigger, tenant};
use worker_processes::spawn_worker;

const FUNCTION: &str = "fragile";
const MESSAGES: usize = 150;
const THRESHOLD: u32 = 20;

async fn state(h: &Harness) -> anyhow::Result<breakers::BreakerRecord> {
    let id = tenant();
    let mut tx = shoal_store::begin_tenant(&h.pool, &id).await?;
    let record = breakers::get(
        &mut tx,
        FunctionRef {
            tenant: &id,
            app: APP,
            function: FUNCTION,
        },
    )
    .await?;
    shoal_store::commit(tx).await?;
    Ok(record)
}

async fn wait_for_state(
    h: &Harness,
    wanted: BreakerState,
    timeout: Duration,
) -> anyhow::Result<breakers::BreakerRecord> {
    let deadline = Instant::now() + timeout;
    loop {
        let record = state(h).await?;
        if record.state == wanted {
            return Ok(record);
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "the breaker stayed {:?}, expected {wanted:?}",
            record.state
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn receives(h: &Harness) -> usize {
    h.azurite
        .requests_containing("GET /devstoreaccount1/jobs/messages")
}

#[tokio::test]
async fn a_failing_handler_opens_the_breaker_for_every_worker_and_a_probe_closes_it()
-> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Status(500)).await?;
    let operator = RecordingHandler::start(Behaviour::Status(204)).await?;
    // A failed message is visible again after 5 s, and poisoned after five failures: the
    // breaker must open before any message could have failed that often.
    h.put_app(
        json!({"extensions": {"queues": {"maxDequeueCount": 5, "batchSize": 4,
                                         "visibilityTimeout": "00:00:05"}}}),
        json!({}),
    )
    .await?;
    h.put_function_body(
        APP,
        FUNCTION,
        json!({
            "bindings": queue_trigger("jobs"),
            "circuitBreaker": {
                "failureThreshold": THRESHOLD,
                "window": "00:00:30",
                "cooldown": "00:00:08",
                "notifyUrl": format!("{}/ops", operator.url()),
            }
        }),
    )
    .await?;
    for i in 0..MESSAGES {
        h.enqueue("jobs", &base64(&format!("job {i}"))).await?;
    }
    let workers: Vec<_> = (1..=3)
        .map(|i| spawn_worker(&h, &format!("w{i}")))
        .collect();

    let opened = wait_for_state(&h, BreakerState::Open, Duration::from_secs(60)).await?;
    let opened_at = Instant::now();
    assert_eq!(opened.cause, Some(BreakerCause::Failures));
    assert!(
        !opened.failures.is_empty() && opened.failures[0].reason.contains("500"),
        "the failures that opened it are kept: {:?}",
        opened.failures
    );
    // Every worker learns within a second or so; in-flight deliveries settle.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (polls, calls) = (receives(&h), h.handler.count());
    let length = h.queue("jobs").approximate_length().await?;
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(
        opened_at.elapsed() < Duration::from_secs(8),
        "still inside the cooldown"
    );
    assert_eq!(receives(&h), polls, "no listener receives while open");
    assert_eq!(h.handler.count(), calls, "no invocation while open");
    assert_eq!(
        h.queue("jobs").approximate_length().await?,
        length,
        "the queue keeps its messages"
    );
    assert_eq!(
        length as usize, MESSAGES,
        "every message is still there: nothing was lost or poisoned"
    );
    let poisoned = match h.queue("jobs-poison").approximate_length().await {
        Ok(n) => n,
        Err(shoal_connectors::QueueError::QueueNotFound { .. }) => 0,
        Err(e) => return Err(e.into()),
    };
    assert_eq!(poisoned, 0, "nothing is poisoned because of the pause");

    // The handler recovers; after the cooldown one worker probes, the probe's success closes
    // the breaker, and the backlog drains.
    h.handler.set_behaviour(Behaviour::Respond(json!({})));
    let recovered_from = h.handler.count();
    wait_for_state(&h, BreakerState::Closed, Duration::from_secs(30)).await?;
    h.wait_until_empty("jobs", Duration::from_secs(60)).await?;
    let processed: BTreeSet<String> = h.handler.requests()[recovered_from..]
        .iter()
        .filter_map(|r| r.body["Data"]["msg"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        processed.len(),
        MESSAGES,
        "every message processed at least once"
    );

    let id = tenant();
    let mut tx = shoal_store::begin_tenant(&h.pool, &id).await?;
    let history = breakers::transitions(
        &mut tx,
        FunctionRef {
            tenant: &id,
            app: APP,
            function: FUNCTION,
        },
        None,
        10,
    )
    .await?;
    shoal_store::commit(tx).await?;
    let causes: Vec<_> = history.iter().rev().map(|t| t.cause).collect();
    assert_eq!(
        causes,
        [
            BreakerCause::Failures,
            BreakerCause::Cooldown,
            BreakerCause::ProbeSucceeded
        ],
        "closed → open → half-open → closed"
    );

    let secret = h.secret().await?;
    let posts = operator.wait_for(3, Duration::from_secs(10)).await?;
    let types: Vec<&str> = posts
        .iter()
        .map(|p| p.body["type"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        types,
        [
            "shoal.function.breaker.opened",
            "shoal.function.breaker.halfOpened",
            "shoal.function.breaker.closed"
        ]
    );
    for post in &posts {
        let id = post.header("webhook-id").unwrap_or_default();
        let timestamp: i64 = post.header("webhook-timestamp").unwrap_or("0").parse()?;
        let signature = post.header("webhook-signature").unwrap_or_default();
        assert!(secret.verify(id, timestamp, &post.raw, signature), "signed");
    }
    drop(workers);
    Ok(())
}
