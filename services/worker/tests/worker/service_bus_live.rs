//! The live suite: the Service Bus trigger against a **real** Service Bus namespace, for what
//! the local stand-in can only imitate. It runs when `SHOAL_LIVE_SERVICEBUS_CONNECTION` holds
//! a connection string (Send and Listen rights; Manage for the management API test) and
//! `SHOAL_LIVE_SERVICEBUS_QUEUE` (default `shoal-live`) names a queue without sessions kept for
//! these tests alone — the suite completes whatever it finds there. `make live-servicebus`
//! runs it and fails loudly without the variable; `make test` runs it when the variable is set
//! and otherwise says it was skipped (docs/testing.md).

use std::time::Duration;

use serde_json::json;
use shoal_connectors::{QueueError, ServiceBusAdmin, SignIn};
use shoal_domain::connection::{ConnectionKind, resolve};
use shoal_domain::service_bus_trigger::Settlement;
use shoal_testkit::handler::Behaviour;

use crate::service_bus_support::*;
use crate::support::Harness;

const CONNECTION: &str = "SHOAL_LIVE_SERVICEBUS_CONNECTION";
const QUEUE: &str = "SHOAL_LIVE_SERVICEBUS_QUEUE";
const IGNORED: &str =
    "live Service Bus: run `make live-servicebus` with SHOAL_LIVE_SERVICEBUS_CONNECTION set";

/// The live namespace and queue; panics, naming the variable, when they are not given (the
/// tests only run when asked for).
fn live() -> (String, String) {
    let connection =
        std::env::var(CONNECTION).unwrap_or_else(|_| panic!("{CONNECTION} is not set: {IGNORED}"));
    let queue = std::env::var(QUEUE).unwrap_or_else(|_| "shoal-live".to_owned());
    (connection, queue)
}

/// A unique message id, so a run recognises its own messages among stale ones.
fn unique(what: &str) -> String {
    format!("shoal-live-{what}-{}", uuid::Uuid::new_v4())
}

async fn start_live(behaviour: Behaviour) -> anyhow::Result<(Harness, Bus, String)> {
    let (connection, queue) = live();
    let h = Harness::start(behaviour).await?;
    let bus = Bus::connect(connection).await?;
    put_app(&h, &bus, json!({})).await?;
    h.put_function("live", trigger(json!({"queueName": queue})))
        .await?;
    Ok((h, bus, queue))
}

#[tokio::test]
#[ignore = "live Service Bus: run `make live-servicebus` with SHOAL_LIVE_SERVICEBUS_CONNECTION set"]
async fn live_delivers_with_metadata_and_completes() -> anyhow::Result<()> {
    let (h, bus, queue) = start_live(Behaviour::Respond(json!({}))).await?;
    let id = unique("deliver");
    let mut message = text("live hello");
    message.message_id = Some(id.clone());
    message.application_properties = json!({"suite": "live"})
        .as_object()
        .cloned()
        .unwrap_or_default();
    bus.send(&queue, &[message]).await?;
    let worker = h.start_worker(h.worker_config("live-1"))?;

    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let ours = loop {
        let seen = h.handler.requests();
        if let Some(r) = seen
            .iter()
            .find(|r| r.body["Metadata"]["MessageId"] == id.as_str())
        {
            break r.clone();
        }
        anyhow::ensure!(tokio::time::Instant::now() < deadline, "{id} not delivered");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let meta = &ours.body["Metadata"];
    assert_eq!(ours.body["Data"]["msg"], "live hello");
    assert_eq!(meta["DeliveryCount"], 1);
    assert_eq!(meta["ApplicationProperties"]["suite"], "live");
    assert!(meta["SequenceNumber"].as_i64().is_some(), "{meta}");
    assert!(meta["EnqueuedTimeUtc"].is_string() && meta["LockToken"].is_string());
    // Completed: not delivered a second time while the worker keeps listening.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let deliveries = h
        .handler
        .requests()
        .iter()
        .filter(|r| r.body["Metadata"]["MessageId"] == id.as_str())
        .count();
    assert_eq!(deliveries, 1);
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
#[ignore = "live Service Bus: run `make live-servicebus` with SHOAL_LIVE_SERVICEBUS_CONNECTION set"]
async fn live_handler_dead_letter_is_readable_from_the_dead_letter_queue() -> anyhow::Result<()> {
    let settle = json!({"Settlement": {"action": "deadLetter", "reason": "LiveSuite",
                                       "description": "asked by the handler"}});
    let (h, bus, queue) = start_live(Behaviour::Respond(settle)).await?;
    let id = unique("dead-letter");
    let mut message = text("live poison");
    message.message_id = Some(id.clone());
    bus.send(&queue, &[message]).await?;
    let worker = h.start_worker(h.worker_config("live-1"))?;

    let mut dead = bus.client.dead_letter_receiver(&queue_path(&queue)).await?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let found = 'search: loop {
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "{id} not in the dead-letter queue"
        );
        for m in dead.receive(10, Duration::from_secs(2)).await? {
            dead.settle(&m, &Settlement::Complete).await?;
            if m.message.message_id.as_deref() == Some(id.as_str()) {
                break 'search m;
            }
        }
    };
    // Service Bus keeps the reason among the application properties (`DeadLetterReason`).
    let properties = &found.message.application_properties;
    assert_eq!(
        properties["DeadLetterReason"], "LiveSuite",
        "{properties:?}"
    );
    dead.close().await?;
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
#[ignore = "live Service Bus: run `make live-servicebus` with SHOAL_LIVE_SERVICEBUS_CONNECTION set"]
async fn live_management_api_reads_the_queue_or_reports_missing_rights() -> anyhow::Result<()> {
    let (connection, queue) = live();
    let settings = std::collections::BTreeMap::from([("Live".to_owned(), connection)]);
    let spec = resolve(ConnectionKind::ServiceBus, Some("Live"), &settings)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let admin = ServiceBusAdmin::connect_as(&spec, &Default::default(), &SignIn::AsConfigured)?;
    match admin.entity(&queue_path(&queue)).await {
        // Manage rights: the counts the scaler reads.
        Ok(description) => eprintln!("live: {queue}: {:?}", description.counts),
        // Send/Listen only: the error the scaler falls back to incremental scaling on.
        Err(QueueError::Unauthorized(why)) => {
            assert!(!why.contains("SharedAccessKey="), "{why}");
            eprintln!("live: no Manage rights: {why}");
        }
        Err(other) => anyhow::bail!("reading {queue}: {other}"),
    }
    Ok(())
}

fn queue_path(name: &str) -> shoal_domain::service_bus_trigger::EntityPath {
    queue(name)
}
