//! Service Bus test helpers: the local Service Bus stand-in (`shoal-local-bus`) with the
//! entities a test declares, the tests' own client of it (Shoal's connector), and apps whose
//! `AzureWebJobsServiceBus` points at it.

use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::{Value, json};
use shoal_connectors::{ConnectorOptions, Received, ServiceBusNamespace};
use shoal_domain::service_bus_trigger::{EntityPath, OutgoingMessage, Settlement};
use shoal_local_bus::{LocalBus, LocalBusConfig};
use shoal_testkit::handler::Behaviour;

use crate::support::{APP, Harness};

pub const WAIT: Duration = Duration::from_secs(30);

/// A namespace the tests drive: the local stand-in, or a real one for the live suite.
pub struct Bus {
    /// The stand-in, running until the test ends (None for a live namespace).
    pub local: Option<LocalBus>,
    connection_string: String,
    pub client: ServiceBusNamespace,
}

impl Bus {
    /// A stand-in with the namespace `config` describes (see [`namespace`]).
    pub async fn start(config: Value) -> Result<Bus> {
        let local = LocalBus::start(LocalBusConfig::from_json(&config.to_string())?).await?;
        let mut bus = Bus::connect(local.connection_string()).await?;
        bus.local = Some(local);
        Ok(bus)
    }

    /// A namespace reached through `connection_string` (the live suite's real one).
    pub async fn connect(connection_string: String) -> Result<Bus> {
        let client = ServiceBusNamespace::from_connection_string(
            &connection_string,
            &ConnectorOptions::default(),
        )
        .await?;
        Ok(Bus {
            local: None,
            connection_string,
            client,
        })
    }

    pub fn connection_string(&self) -> String {
        self.connection_string.clone()
    }

    pub async fn send(&self, entity: &str, messages: &[OutgoingMessage]) -> Result<()> {
        let mut sender = self.client.sender(entity).await?;
        sender.send(messages).await?;
        sender.close().await?;
        Ok(())
    }

    pub async fn send_text(&self, entity: &str, texts: &[&str]) -> Result<()> {
        let messages: Vec<OutgoingMessage> = texts.iter().map(|t| text(t)).collect();
        self.send(entity, &messages).await
    }

    /// Receives and completes `n` messages of `entity` (its dead-letter queue if `dead`),
    /// waiting up to [`WAIT`].
    pub async fn take(&self, entity: &EntityPath, n: usize, dead: bool) -> Result<Vec<Received>> {
        let mut receiver = if dead {
            self.client.dead_letter_receiver(entity).await?
        } else {
            self.client.receiver(entity, 0).await?
        };
        let deadline = tokio::time::Instant::now() + WAIT;
        let mut taken = Vec::new();
        while taken.len() < n {
            anyhow::ensure!(
                tokio::time::Instant::now() < deadline,
                "{entity} ({}) had {} messages, expected {n}",
                if dead { "dead-letter queue" } else { "active" },
                taken.len()
            );
            for message in receiver
                .receive((n - taken.len()) as u32, Duration::from_millis(500))
                .await?
            {
                receiver.settle(&message, &Settlement::Complete).await?;
                taken.push(message);
            }
        }
        receiver.close().await?;
        Ok(taken)
    }

    /// Whether `entity` has no message to receive now (none active and unlocked).
    pub async fn is_empty(&self, entity: &EntityPath) -> Result<bool> {
        let mut receiver = self.client.receiver(entity, 0).await?;
        let found = receiver.receive(1, Duration::from_millis(500)).await?;
        for message in &found {
            receiver.settle(message, &Settlement::abandon()).await?;
        }
        receiver.close().await?;
        Ok(found.is_empty())
    }
}

/// The stand-in's configuration (the Service Bus emulator's `Config.json` shape) with these
/// queues and topics.
pub fn namespace(queues: Value, topics: Value) -> Value {
    json!({"UserConfig": {"Namespaces": [{"Name": "sbemulatorns", "Queues": queues, "Topics": topics}]}})
}

/// A queue entry of [`namespace`] with its `Properties` (emulator names: `LockDuration`
/// `"PT5S"`, `MaxDeliveryCount`, `RequiresSession`, …).
pub fn queue_entity(name: &str, properties: Value) -> Value {
    json!({"Name": name, "Properties": properties})
}

/// The first `n` messages of `queue`'s dead-letter queue as Microsoft's Python SDK reads them
/// (`python/dead_letters.py`): body, application properties, dead-letter reason, description,
/// source and delivery count.
pub async fn dead_letters_seen_by_python(bus: &Bus, queue: &str, n: usize) -> Result<Vec<Value>> {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/worker/python/dead_letters.py");
    let env =
        std::collections::HashMap::from([("SB_CONNECTION".to_owned(), bus.connection_string())]);
    let n_text = n.to_string();
    let found =
        shoal_testkit::python::run_json(&script, &[queue, &n_text], &env, Duration::from_secs(60))
            .await?;
    let found = found.as_array().cloned().unwrap_or_default();
    anyhow::ensure!(
        found.len() == n,
        "the dead-letter queue of {queue} had {found:?}, expected {n} messages"
    );
    Ok(found)
}

pub fn text(body: &str) -> OutgoingMessage {
    OutgoingMessage {
        body: body.as_bytes().to_vec(),
        ..OutgoingMessage::default()
    }
}

pub fn queue(name: &str) -> EntityPath {
    EntityPath::Queue(name.to_owned())
}

/// A harness (Postgres, Azurite, handler) and a stand-in namespace.
pub async fn start(behaviour: Behaviour, bus: Value) -> Result<(Harness, Bus)> {
    let h = Harness::start(behaviour).await?;
    let bus = Bus::start(bus)
        .await
        .context("the local Service Bus starts")?;
    Ok((h, bus))
}

/// A harness and a stand-in namespace whose queue `orders` has `properties`, the app on it, and
/// its function `ship` triggered by `orders` under the retry policy `retry`.
pub async fn ship_orders_with_retry(
    behaviour: Behaviour,
    properties: Value,
    retry: Value,
) -> Result<(Harness, Bus)> {
    let (h, bus) = start(
        behaviour,
        namespace(json!([queue_entity("orders", properties)]), json!([])),
    )
    .await?;
    put_app(&h, &bus, json!({})).await?;
    let function = json!({"bindings": trigger(json!({"queueName": "orders"})), "retry": retry});
    h.put_function_body(APP, "ship", function).await?;
    Ok((h, bus))
}

/// Writes the app with `AzureWebJobsServiceBus` pointing at the stand-in.
pub async fn put_app(h: &Harness, bus: &Bus, host_config: Value) -> Result<()> {
    put_app_with_timeout(h, bus, host_config, 5).await
}

/// [`put_app`] with the handler's `timeoutSeconds`.
pub async fn put_app_with_timeout(
    h: &Harness,
    bus: &Bus,
    host_config: Value,
    timeout_seconds: u32,
) -> Result<()> {
    h.put_app(
        host_config,
        json!({
        "handler": {"url": h.handler.url().as_str(), "timeoutSeconds": timeout_seconds},
        "appSettings": {
            "AzureWebJobsStorage": h.azurite.connection_string(),
            "AzureWebJobsServiceBus": bus.connection_string(),
            "OrdersQueue": "orders",
        }}),
    )
    .await
}

pub fn trigger(extra: Value) -> Value {
    let mut binding = json!({"type": "serviceBusTrigger", "direction": "in", "name": "msg"});
    if let (Value::Object(b), Value::Object(extra)) = (&mut binding, extra) {
        b.extend(extra);
    }
    json!([binding])
}

/// Waits until the statistics line of `function` satisfies `done`; returns it.
pub async fn wait_for_line(
    worker: &crate::support::RunningWorker,
    function: &str,
    done: impl Fn(&shoal_domain::workers::ListenerReport) -> bool,
) -> Result<shoal_domain::workers::ListenerReport> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let line = worker
            .stats
            .reports()
            .into_iter()
            .find(|r| r.function == function);
        if let Some(line) = &line
            && done(line)
        {
            return Ok(line.clone());
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "the line of {function} is still {line:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub fn time(v: &Value) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(v.as_str().expect("a time string"))
        .expect("RFC 3339")
        .with_timezone(&chrono::Utc)
}
