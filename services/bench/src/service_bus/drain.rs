//! Preloading the stand-in's queues, the raw receive/complete loop, and waiting until a queue
//! is drained, judged by the entity's `ActiveMessageCount` from the management API.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use shoal_connectors::{ServiceBusAdmin, ServiceBusNamespace, SignIn};
use shoal_domain::connection::{ConnectionKind, resolve};
use shoal_domain::service_bus_entity::path::EntityPath;
use shoal_domain::service_bus_trigger::{OutgoingMessage, Settlement};
use shoal_local_bus::LocalBus;

use super::ServiceBusPlan;
use crate::drains::Drain;
use crate::queue::handler::Tally;
use crate::queue::queues::message_text;

/// Messages per send while preloading.
const PRELOAD_BATCH: u64 = 50;
/// How often a drain is checked.
const POLL: Duration = Duration::from_millis(5);
/// How long one receive waits for a first message.
const RECEIVE_WAIT: Duration = Duration::from_millis(500);

/// A queue of the stand-in and the management client that counts its messages.
pub struct Entity {
    path: EntityPath,
    admin: ServiceBusAdmin,
}

impl Entity {
    pub fn connect(bus: &LocalBus, queue: &str) -> Result<Entity> {
        let settings =
            std::collections::BTreeMap::from([("ServiceBus".to_owned(), bus.connection_string())]);
        let spec = resolve(ConnectionKind::ServiceBus, Some("ServiceBus"), &settings)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let admin = ServiceBusAdmin::connect_as(&spec, &Default::default(), &SignIn::AsConfigured)
            .context("the stand-in's management API")?;
        Ok(Entity {
            path: EntityPath::Queue(queue.to_owned()),
            admin,
        })
    }

    pub async fn active_messages(&self) -> Result<u64> {
        let description = self.admin.entity(&self.path).await?;
        Ok(description.counts.active)
    }
}

/// Sends `count` small JSON messages to `queue`, [`PRELOAD_BATCH`] per send.
pub async fn preload(namespace: &ServiceBusNamespace, queue: &str, count: u64) -> Result<()> {
    let mut sender = namespace.sender(queue).await?;
    let mut index = 0;
    while index < count {
        let end = (index + PRELOAD_BATCH).min(count);
        let batch: Vec<OutgoingMessage> = (index..end)
            .map(|i| OutgoingMessage {
                body: message_text(i).into_bytes(),
                content_type: Some("application/json".into()),
                ..OutgoingMessage::default()
            })
            .collect();
        sender.send(&batch).await?;
        index = end;
    }
    sender.close().await?;
    Ok(())
}

/// (b): receive up to `maxConcurrentCalls`, complete each, again, until `count` are completed
/// and the entity shows none active.
pub async fn raw_loop(
    namespace: &ServiceBusNamespace,
    entity: &Entity,
    plan: &ServiceBusPlan<'_>,
) -> Result<Drain> {
    let deadline = Instant::now() + plan.timeout;
    let mut receiver = namespace.receiver(&entity.path, 0).await?;
    let mut started = None;
    let mut completed = 0;
    while completed < plan.messages {
        if Instant::now() >= deadline {
            bail!(stalled(completed, plan.messages, plan.timeout));
        }
        let batch = receiver
            .receive(plan.max_concurrent_calls, RECEIVE_WAIT)
            .await?;
        if !batch.is_empty() {
            started.get_or_insert_with(Instant::now);
        }
        for message in &batch {
            receiver.settle(message, &Settlement::Complete).await?;
            completed += 1;
        }
    }
    wait_until_empty(entity, deadline).await?;
    let elapsed = started.map(|s| s.elapsed()).unwrap_or_default();
    receiver.close().await?;
    Ok(Drain {
        items: plan.messages,
        elapsed,
        cpu: Duration::ZERO,
    })
}

/// Waits until the handler has answered `count` requests and the entity shows none active,
/// timed from the handler's first request.
pub async fn wait_until_drained(
    tally: &Tally,
    entity: &Entity,
    count: u64,
    timeout: Duration,
    mut alive: impl FnMut() -> Result<()>,
) -> Result<Drain> {
    let deadline = Instant::now() + timeout;
    while tally.requests() < count {
        alive()?;
        if Instant::now() >= deadline {
            bail!(stalled(tally.requests(), count, timeout));
        }
        tokio::time::sleep(POLL).await;
    }
    wait_until_empty(entity, deadline).await?;
    let first = tally.first().unwrap_or_else(Instant::now);
    Ok(Drain {
        items: count,
        elapsed: first.elapsed(),
        cpu: Duration::ZERO,
    })
}

fn stalled(done: u64, count: u64, timeout: Duration) -> String {
    format!("{done}/{count} messages in {} s", timeout.as_secs())
}

async fn wait_until_empty(entity: &Entity, deadline: Instant) -> Result<()> {
    loop {
        let active = entity.active_messages().await?;
        if active == 0 {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!("all messages handled, but {active} still active on the queue");
        }
        tokio::time::sleep(POLL).await;
    }
}
