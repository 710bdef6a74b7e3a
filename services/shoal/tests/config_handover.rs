//! A configuration change hands an app instance over without costing its messages an attempt:
//! `PATCH`ing one app setting restarts the instance on its worker (the old listeners drain while
//! the new ones start), and a message sent just before the `PATCH` reaches the handler on its
//! first delivery — for Service Bus (`DeliveryCount` 1), Storage Queues (`DequeueCount` 1) and
//! streams (every event, none skipped, in order). A failing message gets exactly its entity's
//! attempts (`MaxDeliveryCount`, `maxDequeueCount`) before it is dead-lettered or poisoned.
//!
//! Each test runs several rounds of "send, then `PATCH` at once" against `shoal serve` and a
//! `shoal worker` process, so each round is one hand-over.

#[path = "support/host_identity.rs"]
mod host_identity;
#[path = "../../worker/tests/worker/service_bus_support.rs"]
#[allow(dead_code)]
mod service_bus_support;
#[path = "../../worker/tests/worker/support.rs"]
#[allow(dead_code)]
mod support;
#[path = "support/worker_processes.rs"]
#[allow(dead_code)]
mod worker_processes;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::{Value, json};
use shoal_testkit::handler::{Behaviour, Recorded};
use shoal_testkit::kafka::TansuBroker;

use service_bus_support::{Bus, namespace, put_app, queue, queue_entity, trigger};
use support::{APP, Harness, TENANT, base64, queue_trigger};
use worker_processes::{SHOAL, WorkerProcess, spawn_worker_env};

/// Hand-overs per test (`SHOAL_HANDOVER_ROUNDS` overrides, to repeat more).
fn rounds() -> usize {
    std::env::var("SHOAL_HANDOVER_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(30)
}

const WAIT: Duration = Duration::from_secs(60);

/// The worker under test; `SHOAL_HANDOVER_WORKER_LOG` sets its `RUST_LOG` (default `warn`).
fn spawn_worker(h: &Harness, name: &str) -> WorkerProcess {
    let log = std::env::var("SHOAL_HANDOVER_WORKER_LOG").unwrap_or_else(|_| "warn".into());
    spawn_worker_env(h, name, &["--all-apps"], &[("RUST_LOG", &log)])
}

/// `shoal serve` on the harness's database, and a platform admin's token for it.
struct Api {
    child: Child,
    base: String,
    token: String,
    http: reqwest::Client,
}

impl Drop for Api {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Api {
    async fn start(h: &Harness) -> Result<Api> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let child = Command::new(SHOAL)
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .env("DATABASE_URL", &h.database_url)
            .env("SHOAL_SECRET_KEY", h.secret_key.to_base64())
            .env("SHOAL_EGRESS_ALLOW", shoal_testkit::EGRESS_ALLOW_LOOPBACK)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .spawn()
            .context("shoal serve starts")?;
        let output = Command::new(SHOAL)
            .args(["token", "--subject", "ops", "--platform-admin"])
            .env("DATABASE_URL", &h.database_url)
            .env("SHOAL_SECRET_KEY", h.secret_key.to_base64())
            .output()
            .context("shoal token runs")?;
        anyhow::ensure!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let api = Api {
            child,
            base: format!("http://127.0.0.1:{port}"),
            token: String::from_utf8(output.stdout)?.trim().to_owned(),
            http: reqwest::Client::new(),
        };
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let ready = api.http.get(format!("{}/readyz", api.base)).send().await;
            if ready.is_ok_and(|r| r.status().is_success()) {
                return Ok(api);
            }
            anyhow::ensure!(
                tokio::time::Instant::now() < deadline,
                "the API did not become ready"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// `PATCH`es one app setting, which restarts the app's instances.
    async fn set_setting(&self, value: &str) -> Result<()> {
        let response = self
            .http
            .patch(format!("{}/v1/tenants/{TENANT}/apps/{APP}", self.base))
            .bearer_auth(&self.token)
            .header("content-type", "application/merge-patch+json")
            .body(json!({"appSettings": {"HandoverRound": value}}).to_string())
            .send()
            .await?;
        anyhow::ensure!(
            response.status().is_success(),
            "PATCH answered {}: {}",
            response.status(),
            response.text().await?
        );
        Ok(())
    }
}

/// The handler's first request whose `Data.<binding>` is `body`, waiting up to [`WAIT`].
async fn first_sight(h: &Harness, binding: &str, body: &str) -> Result<Recorded> {
    first_sight_of(h, body, |r| r.body["Data"][binding] == body).await
}

/// The handler's first request that is `what`, waiting up to [`WAIT`].
async fn first_sight_of(
    h: &Harness,
    what: &str,
    is: impl Fn(&Recorded) -> bool,
) -> Result<Recorded> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        if let Some(r) = h.handler.requests().into_iter().find(|r| is(r)) {
            return Ok(r);
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "the handler never saw {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A stream request's `Metadata.Offset`.
fn offset(r: &Recorded) -> Option<i64> {
    r.body["Metadata"]["Offset"].as_i64()
}

/// Sends one message per round, `PATCH`es a setting at once, and returns the rounds whose
/// message the handler first saw on a later attempt, with the count it reported.
async fn hand_over_rounds<F, Fut>(
    h: &Harness,
    api: &Api,
    binding: &str,
    count: &str,
    mut send: F,
) -> Result<Vec<(usize, Value)>>
where
    F: FnMut(String) -> Fut,
    Fut: std::future::Future<Output = Result<()>>,
{
    let mut late = Vec::new();
    for round in 0..rounds() {
        let body = format!("round-{round}");
        send(body.clone()).await?;
        api.set_setting(&round.to_string()).await?;
        let seen = first_sight(h, binding, &body).await?;
        let reported = seen.body["Metadata"][count].clone();
        if reported != 1 {
            late.push((round, reported));
        }
    }
    Ok(late)
}

/// Every request for `body`, in order.
fn attempts_of(h: &Harness, binding: &str, body: &str) -> Vec<Recorded> {
    h.handler
        .requests()
        .into_iter()
        .filter(|r| r.body["Data"][binding] == body)
        .collect()
}

async fn service_bus(behaviour: Behaviour) -> Result<(Harness, Bus, Api)> {
    let h = Harness::start(behaviour).await?;
    // The shortest lock Service Bus allows (5 s): a message left locked by a retiring listener
    // comes back after 5 s with its delivery counted.
    let bus = Bus::start(namespace(
        json!([queue_entity(
            "orders",
            json!({"LockDuration": "PT5S", "MaxDeliveryCount": 3})
        )]),
        json!([]),
    ))
    .await?;
    put_app(&h, &bus, json!({})).await?;
    h.put_function("take", trigger(json!({"queueName": "orders"})))
        .await?;
    let api = Api::start(&h).await?;
    Ok((h, bus, api))
}

#[tokio::test]
async fn service_bus_message_sent_before_a_setting_changes_is_first_delivered_once() -> Result<()> {
    let (h, bus, api) = service_bus(Behaviour::Respond(json!({}))).await?;
    let _worker = spawn_worker(&h, "w-handover");
    bus.send_text("orders", &["warm-up"]).await?;
    first_sight(&h, "msg", "warm-up").await?;

    let late = hand_over_rounds(&h, &api, "msg", "DeliveryCount", |body| {
        let bus = &bus;
        async move { bus.send_text("orders", &[&body]).await }
    })
    .await?;
    assert!(
        late.is_empty(),
        "{} of {} messages were first seen on a later delivery (round, DeliveryCount): {late:?}",
        late.len(),
        rounds()
    );
    // Every message completed: nothing left locked or active behind the hand-overs.
    let deadline = tokio::time::Instant::now() + WAIT;
    while !bus.is_empty(&queue("orders")).await? {
        anyhow::ensure!(tokio::time::Instant::now() < deadline, "orders not empty");
    }
    Ok(())
}

#[tokio::test]
async fn service_bus_failing_message_gets_max_delivery_count_attempts_across_hand_overs()
-> Result<()> {
    let (h, bus, api) = service_bus(Behaviour::Status(500)).await?;
    let _worker = spawn_worker(&h, "w-handover");
    bus.send_text("orders", &["warm-up"]).await?;
    first_sight(&h, "msg", "warm-up").await?;
    bus.take(&queue("orders"), 1, true).await?;

    bus.send_text("orders", &["doomed"]).await?;
    api.set_setting("doomed-0").await?;
    // A hand-over after each attempt, too.
    for attempt in 1..3 {
        let deadline = tokio::time::Instant::now() + WAIT;
        while attempts_of(&h, "msg", "doomed").len() < attempt {
            anyhow::ensure!(tokio::time::Instant::now() < deadline, "attempt {attempt}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        api.set_setting(&format!("doomed-{attempt}")).await?;
    }
    let dead = bus.take(&queue("orders"), 1, true).await?;
    assert_eq!(dead[0].message.body, b"doomed");
    let counts: Vec<Value> = attempts_of(&h, "msg", "doomed")
        .iter()
        .map(|r| r.body["Metadata"]["DeliveryCount"].clone())
        .collect();
    assert_eq!(
        counts,
        [json!(1), json!(2), json!(3)],
        "MaxDeliveryCount (3) handler attempts, each counted once"
    );
    Ok(())
}

async fn storage_queue(behaviour: Behaviour, host_config: Value) -> Result<(Harness, Api)> {
    let h = Harness::start(behaviour).await?;
    h.put_app(host_config, json!({})).await?;
    h.put_function("take", queue_trigger("orders")).await?;
    h.queue("orders").create_if_missing().await?;
    let api = Api::start(&h).await?;
    Ok((h, api))
}

#[tokio::test]
async fn storage_queue_message_sent_before_a_setting_changes_is_first_dequeued_once() -> Result<()>
{
    let (h, api) = storage_queue(Behaviour::Respond(json!({})), json!({})).await?;
    let _worker = spawn_worker(&h, "w-handover");
    h.enqueue("orders", &base64("warm-up")).await?;
    first_sight(&h, "msg", "warm-up").await?;

    let late = hand_over_rounds(&h, &api, "msg", "DequeueCount", |body| {
        let h = &h;
        async move { h.enqueue("orders", &base64(&body)).await }
    })
    .await?;
    assert!(
        late.is_empty(),
        "{} of {} messages were first seen on a later dequeue (round, DequeueCount): {late:?}",
        late.len(),
        rounds()
    );
    h.wait_until_empty("orders", WAIT).await?;
    Ok(())
}

#[tokio::test]
async fn storage_queue_failing_message_gets_max_dequeue_count_attempts_across_hand_overs()
-> Result<()> {
    let (h, api) = storage_queue(
        Behaviour::Status(500),
        json!({"extensions": {"queues": {"maxDequeueCount": 3}}}),
    )
    .await?;
    let _worker = spawn_worker(&h, "w-handover");
    h.enqueue("orders", &base64("doomed")).await?;
    api.set_setting("doomed-0").await?;
    for attempt in 1..3 {
        let deadline = tokio::time::Instant::now() + WAIT;
        while attempts_of(&h, "msg", "doomed").len() < attempt {
            anyhow::ensure!(tokio::time::Instant::now() < deadline, "attempt {attempt}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        api.set_setting(&format!("doomed-{attempt}")).await?;
    }
    let poisoned = h.wait_for_messages("orders-poison", 1, WAIT).await?;
    assert_eq!(poisoned.len(), 1);
    let counts: Vec<Value> = attempts_of(&h, "msg", "doomed")
        .iter()
        .map(|r| r.body["Metadata"]["DequeueCount"].clone())
        .collect();
    assert_eq!(
        counts,
        [json!(1), json!(2), json!(3)],
        "maxDequeueCount (3) handler attempts, each counted once"
    );
    Ok(())
}

#[tokio::test]
async fn stream_events_produced_before_a_setting_changes_are_processed_none_skipped() -> Result<()>
{
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    let broker = TansuBroker::start().await.context("tansu starts")?;
    broker.create_topic("orders", 1).await?;
    broker.create_topic("orders-poison", 1).await?;
    h.put_app(
        json!({}),
        json!({
        "handler": {"url": h.handler.url().as_str(), "timeoutSeconds": 60},
        "appSettings": {
            "AzureWebJobsStorage": h.azurite.connection_string(),
            "Brokers": broker.bootstrap(),
        }}),
    )
    .await?;
    h.put_function_body(
        APP,
        "take",
        json!({"bindings": [{"type": "kafkaTrigger", "direction": "in", "name": "event",
            "brokerList": "%Brokers%", "topic": "orders", "consumerGroup": "takers"}]}),
    )
    .await?;
    let api = Api::start(&h).await?;
    let _worker = spawn_worker(&h, "w-handover");
    broker.produce("orders", 0, None, b"warm-up", &[]).await?;
    first_sight_of(&h, "offset 0", |r| offset(r) == Some(0)).await?;

    for round in 0..rounds() {
        let body = format!("round-{round}");
        broker
            .produce("orders", 0, None, body.as_bytes(), &[])
            .await?;
        api.set_setting(&round.to_string()).await?;
        // The warm-up event is offset 0.
        let at = round as i64 + 1;
        first_sight_of(&h, &format!("offset {at}"), |r| offset(r) == Some(at)).await?;
    }
    // Every event, in offset order as first seen; one read again after a hand-over is allowed
    // (at least once), one skipped is not.
    let mut first_seen: Vec<i64> = Vec::new();
    for r in h.handler.requests() {
        let offset = offset(&r).context("Metadata.Offset")?;
        if !first_seen.contains(&offset) {
            first_seen.push(offset);
        }
    }
    let expected: Vec<i64> = (0..=rounds() as i64).collect();
    assert_eq!(first_seen, expected, "every event, first seen in order");
    Ok(())
}
