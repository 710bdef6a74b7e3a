//! Service Bus functions scaled by real `shoal scheduler` and `shoal worker` processes against
//! the local Service Bus stand-in: target-based on the queue's `ActiveMessageCount` from the
//! management API (+4 per decision to the limit, on distinct workers), and, with a listen-only
//! connection, incremental on the listeners' own saturation with that reason stored.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::json;
use shoal_connectors::ServiceBusNamespace;
use shoal_domain::service_bus_trigger::OutgoingMessage;
use shoal_local_bus::{LocalBus, LocalBusConfig};
use shoal_testkit::handler::Behaviour;

use crate::processes::Cluster;
use crate::support::Harness;

/// A stand-in with the queue `work` (a lock long enough for the slow handlers below).
async fn bus() -> anyhow::Result<LocalBus> {
    let config = LocalBusConfig::from_json(
        r#"{"UserConfig": {"Namespaces": [{"Name": "scaling", "Queues": [
            {"Name": "work", "Properties": {"LockDuration": "PT2M"}}]}]}}"#,
    )?;
    Ok(LocalBus::start(config).await?)
}

async fn send_many(bus: &LocalBus, n: u64) -> anyhow::Result<()> {
    let client =
        ServiceBusNamespace::from_connection_string(&bus.connection_string(), &Default::default())
            .await?;
    let mut sender = client.sender("work").await?;
    for chunk in (0..n).collect::<Vec<_>>().chunks(100) {
        let batch: Vec<OutgoingMessage> = chunk
            .iter()
            .map(|i| OutgoingMessage {
                body: format!("m-{i}").into_bytes(),
                ..OutgoingMessage::default()
            })
            .collect();
        sender.send(&batch).await?;
    }
    sender.close().await?;
    Ok(())
}

/// The app `orders` with one Service Bus function `work` (`maxConcurrentCalls` 16) reaching
/// the stand-in through `connection`.
async fn service_bus_app(h: &Harness, connection: String) -> anyhow::Result<()> {
    h.put_app(
        json!({"extensions": {"serviceBus": {"maxConcurrentCalls": 16}}}),
        json!({"scale": {"limit": 10}, "appSettings": {
            "AzureWebJobsStorage": h.azurite.connection_string(),
            "AzureWebJobsServiceBus": connection}}),
    )
    .await?;
    h.put_function(
        "work",
        json!([{"type": "serviceBusTrigger", "direction": "in", "name": "msg",
                "queueName": "work"}]),
    )
    .await
}

#[tokio::test]
async fn service_bus_backlog_scales_out_four_at_a_time_on_distinct_workers() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Delay(Duration::from_millis(400), json!({}))).await?;
    let bus = bus().await?;
    service_bus_app(&h, bus.connection_string()).await?;
    let mut cluster = Cluster::new(&h);
    for i in 0..10 {
        cluster.worker(&format!("w{i}"));
    }
    cluster
        .wait_for_workers(10, Duration::from_secs(30))
        .await?;
    send_many(&bus, 1000).await?;
    cluster.scheduler("s1");

    let peak = cluster
        .wait_for_desired(10, Duration::from_secs(30))
        .await?;
    assert_eq!(
        peak.iter().map(|d| d.to).collect::<Vec<_>>(),
        [4, 8, 10],
        "{peak:#?}"
    );
    assert!(peak.iter().all(|d| d.mode == "target"), "{peak:#?}");
    assert!(peak[0].reason.contains("scale out"), "{}", peak[0].reason);
    let placed = cluster
        .wait_for_placement(10, Duration::from_secs(10))
        .await?;
    let workers: BTreeSet<&String> = placed.iter().map(|(_, w)| w).collect();
    assert_eq!(workers.len(), 10, "{placed:?}");
    bus.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn listen_only_rights_scale_on_the_listeners_saturation() -> anyhow::Result<()> {
    // Slow enough that every listener holds its 16 calls while messages remain.
    let h = Harness::start(Behaviour::Delay(Duration::from_secs(4), json!({}))).await?;
    let bus = bus().await?;
    service_bus_app(&h, bus.listen_only_connection_string()).await?;
    let mut cluster = Cluster::new(&h);
    cluster.start_workers(3).await?;
    send_many(&bus, 500).await?;
    cluster.scheduler("s1");

    let decisions = cluster.wait_for_desired(2, Duration::from_secs(40)).await?;
    let last = decisions.last().expect("a decision");
    assert!(
        decisions.iter().all(|d| d.to <= d.from + 1),
        "incremental: one at a time {decisions:#?}"
    );
    assert!(
        last.reason.contains("listen-only"),
        "the fallback says why: {}",
        last.reason
    );
    bus.shutdown().await;
    Ok(())
}
