//! A strict worker (the default) against the suite's loopback handler: a handler URL refused
//! by its text starts no listener and leaves the queue alone; a name that resolves to loopback
//! is refused at connect time, with nothing sent to the handler.

use std::time::Duration;

use serde_json::json;
use shoal_domain::egress::{EgressPolicy, Rule};
use shoal_egress::Egress;
use shoal_testkit::flood::{FloodingHandler, Framing};
use shoal_testkit::handler::Behaviour;

use crate::support::*;

const WAIT: Duration = Duration::from_secs(30);

fn strict_worker(h: &Harness) -> shoal_worker::WorkerConfig {
    let mut config = h.worker_config("w1");
    config.egress = Egress::new(EgressPolicy::strict());
    config
}

async fn wait_status(worker: &RunningWorker, prefix: &str) -> anyhow::Result<String> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        if let Some((_, status)) = listeners_of(worker, APP)
            .into_iter()
            .find(|(_, s)| s.starts_with(prefix))
        {
            return Ok(status);
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "no listener of {APP} says {prefix:?}: {:?}",
            listeners_of(worker, APP)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_refused_handler_url_starts_no_listener_and_the_message_stays() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    h.put_app(json!({}), json!({})).await?;
    h.put_function("work", queue_trigger("jobs")).await?;
    h.enqueue("jobs", &base64("{}")).await?;
    let worker = h.start_worker(strict_worker(&h))?;
    let status = wait_status(&worker, "stopped:").await?;
    assert!(
        status.starts_with("stopped: handler.url: 127.0.0.1 port ")
            && status.ends_with("is a loopback address, which the egress policy refuses"),
        "{status}"
    );
    // No listener runs, so nothing can receive later: the queue shows the message untouched.
    assert_eq!(h.handler.count(), 0);
    let kept = h.wait_for_messages("jobs", 1, WAIT).await?;
    assert_eq!(kept.len(), 1, "the message was neither taken nor poisoned");
    assert_eq!(
        kept[0].dequeue_count, 1,
        "only the test's own receive counted"
    );
    worker.shut_down().await
}

#[tokio::test]
async fn a_name_resolving_to_loopback_is_refused_without_a_request() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    let name = shoal_testkit::loopback_host_name();
    let mut url = h.handler.url().clone();
    url.set_host(Some(&name))?;
    h.put_app(
        json!({"extensions": {"queues": {"maxDequeueCount": 1}}}),
        json!({"handler": {"url": url.as_str(), "timeoutSeconds": 5}}),
    )
    .await?;
    h.put_function("work", queue_trigger("jobs")).await?;
    h.enqueue("jobs", &base64("{}")).await?;
    // Azurite, on loopback too, is allowed by its exact port; the handler's port is not.
    let mut config = h.worker_config("w1");
    let azurite = url::Url::parse(&h.azurite.queue_endpoint())?;
    let allow =
        shoal_domain::egress::AllowList::parse(&format!("127.0.0.1:{}", azurite.port().unwrap()))
            .unwrap();
    config.egress = Egress::new(EgressPolicy::new(allow, Vec::new()));
    let egress = config.egress.clone();
    let worker = h.start_worker(config)?;
    wait_status(&worker, "listening").await?;
    h.wait_for_messages("jobs-poison", 1, WAIT).await?;
    assert_eq!(h.handler.count(), 0, "nothing reached the handler");
    assert!(egress.metrics().refusals(Rule::Loopback) >= 1);
    worker.shut_down().await
}

/// A listening port of the test's, standing for an internal service; it counts connections.
async fn internal_service() -> anyhow::Result<(FloodingHandler, u16)> {
    let internal = FloodingHandler::start(10, Framing::Declared).await?;
    let port = internal.url().port().unwrap();
    Ok((internal, port))
}

/// A worker that may reach the suite's handler and nothing else on loopback.
fn handler_only_worker(h: &Harness) -> shoal_worker::WorkerConfig {
    let mut config = h.worker_config("w1");
    let port = h.handler.url().port().unwrap();
    let allow = shoal_domain::egress::AllowList::parse(&format!("127.0.0.1:{port}")).unwrap();
    config.egress = Egress::new(EgressPolicy::new(allow, Vec::new()));
    config
}

#[tokio::test]
async fn connections_aimed_at_refused_addresses_start_nothing_and_name_their_setting()
-> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    // A listening port of the test's, standing for an internal service.
    let (internal, port) = internal_service().await?;
    h.put_app(
        json!({}),
        json!({"appSettings": {
            "AzureWebJobsStorage": h.azurite.connection_string(),
            "Bus": format!("Endpoint=sb://127.0.0.1:{port}/;SharedAccessKeyName=k;SharedAccessKey=dmFsdWU="),
            "KafkaBrokers": format!("127.0.0.1:{port}"),
        }}),
    )
    .await?;
    h.put_function("queued", queue_trigger("jobs")).await?;
    h.put_function(
        "bussed",
        json!([{"type": "serviceBusTrigger", "direction": "in", "name": "msg", "queueName": "orders", "connection": "Bus"}]),
    )
    .await?;
    h.put_function(
        "streamed",
        json!([{"type": "kafkaTrigger", "direction": "in", "name": "event",
                "brokerList": "%KafkaBrokers%", "topic": "orders", "consumerGroup": "g"}]),
    )
    .await?;
    let worker = h.start_worker(handler_only_worker(&h))?;
    let deadline = tokio::time::Instant::now() + WAIT;
    let statuses = loop {
        let mut listeners = worker
            .stats
            .reports()
            .into_iter()
            .filter(|r| r.app == APP)
            .map(|r| (r.function, r.status))
            .collect::<Vec<_>>();
        listeners.sort();
        if listeners.len() == 3 && listeners.iter().all(|(_, s)| s.starts_with("stopped:")) {
            break listeners;
        }
        anyhow::ensure!(tokio::time::Instant::now() < deadline, "{listeners:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let azurite_port = url::Url::parse(&h.azurite.queue_endpoint())?
        .port()
        .unwrap();
    let expect = [
        (
            "bussed",
            format!("stopped: Bus: 127.0.0.1 port {port} is a loopback address"),
        ),
        (
            "queued",
            format!(
                "stopped: AzureWebJobsStorage: 127.0.0.1 port {azurite_port} is a loopback address"
            ),
        ),
        (
            "streamed",
            format!("stopped: brokerList: 127.0.0.1 port {port} is a loopback address"),
        ),
    ];
    for ((function, status), (want_function, want)) in statuses.iter().zip(&expect) {
        assert_eq!(function, want_function);
        assert!(status.starts_with(want.as_str()), "{status}");
    }
    // The listeners never started, so nothing can dial later either.
    assert_eq!(
        internal.connections(),
        0,
        "the internal port never saw a connection"
    );
    worker.shut_down().await
}

#[tokio::test]
async fn the_tenant_s_allowances_open_its_handler_and_taking_them_back_stops_it()
-> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    h.put_app(json!({}), json!({})).await?;
    h.put_function("work", queue_trigger("jobs")).await?;
    h.set_egress_allow(&["127.0.0.0/8"]).await?;
    let worker = h.start_worker(strict_worker(&h))?;
    wait_status(&worker, "listening").await?;
    h.enqueue("jobs", &base64("{}")).await?;
    h.handler.wait_for(1, WAIT).await?;
    // Taken back, the tenant's change reaches the worker and the listener stops.
    h.set_egress_allow(&[]).await?;
    let status = wait_status(&worker, "stopped:").await?;
    assert!(status.contains("handler.url"), "{status}");
    worker.shut_down().await
}

#[tokio::test]
async fn a_storage_endpoint_named_by_a_name_that_resolves_to_loopback_is_never_dialled()
-> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    // Stands for an internal service; the connection string names it by this machine's name,
    // which passes every check of its text and resolves to 127.0.0.1.
    let (internal, port) = internal_service().await?;
    let name = shoal_testkit::loopback_host_name();
    h.put_app(
        json!({}),
        json!({"appSettings": {"AzureWebJobsStorage": format!(
            "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;QueueEndpoint=http://{name}:{port}/devstoreaccount1"
        )}}),
    )
    .await?;
    h.put_function("queued", queue_trigger("jobs")).await?;
    let worker = h.start_worker(handler_only_worker(&h))?;
    wait_status(&worker, "listening").await?;
    // Two polls have failed (each refused before a connection), then nothing was dialled.
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let failed: u64 = worker
            .stats
            .errors()
            .snapshot()
            .iter()
            .map(|(_, n)| n)
            .sum();
        if failed >= 2 {
            break;
        }
        anyhow::ensure!(tokio::time::Instant::now() < deadline, "no poll failed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        internal.connections(),
        0,
        "the internal port never saw a connection"
    );
    worker.shut_down().await
}

#[tokio::test]
async fn a_broker_advertising_a_refused_address_is_never_joined() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    // tansu advertises its relay; the worker may reach the handler and tansu's own port only.
    let broker = shoal_testkit::kafka::TansuBroker::start_behind_relay().await?;
    // No events are produced: the testkit's producer would keep connecting through the relay,
    // and the refusal comes before any event could be fetched anyway.
    broker.create_topic("orders", 1).await?;
    h.put_app(
        json!({}),
        json!({"appSettings": {"KafkaBrokers": broker.direct_bootstrap()}}),
    )
    .await?;
    h.put_function(
        "streamed",
        json!([{"type": "kafkaTrigger", "direction": "in", "name": "event",
                "brokerList": "%KafkaBrokers%", "topic": "orders", "consumerGroup": "g"}]),
    )
    .await?;
    let mut config = h.worker_config("w1");
    let allow = shoal_domain::egress::AllowList::parse(&format!(
        "127.0.0.1:{},{}",
        h.handler.url().port().unwrap(),
        broker.direct_bootstrap()
    ))
    .map_err(anyhow::Error::msg)?;
    config.egress = Egress::new(EgressPolicy::new(allow, Vec::new()));
    let before = broker.settled_relay_connections().await;

    let worker = h.start_worker(config)?;
    let status = wait_status(&worker, "error: joining the consumer group: ").await?;

    assert!(
        status.contains(&format!(
            "brokerList: the cluster advertises {}: ",
            broker.bootstrap()
        )) && status.contains("loopback address, which the egress policy refuses"),
        "{status}"
    );
    assert_eq!(h.handler.count(), 0, "no event was delivered");
    assert_eq!(
        broker.settled_relay_connections().await,
        before,
        "the advertised broker was dialled"
    );
    worker.shut_down().await
}
