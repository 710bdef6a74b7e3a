//! How a trigger reaches its source: the connection it signs in with and what it reads, resolved
//! from the binding, the app's settings and its host configuration. One resolution serves every
//! part that reaches a trigger's source as the app (the scheduler reading its backlog, the API
//! reading and replaying what failed, putting a test message on it, or diagnosing it), so they
//! connect to the same place under the same rules as the worker's listener.
//!
//! Each kind of [`crate::binding_kinds`] resolves its own source through its descriptor (a
//! storage queue, a Service Bus entity, a topic of Kafka or of an event hub's Kafka endpoint,
//! or a broker reached by a URI kept in an app setting).

use std::collections::BTreeMap;

pub use crate::binding_kinds::{BrokerSource, without_credentials};
use crate::bindings::Binding;
use crate::connection::ConnectionSpec;
use crate::host_config::HostConfig;

/// Where a trigger reads from: a kind's [`Source`], under the name every layer knows it by.
/// `Debug` never shows a secret (the connection's and the stream properties' own `Debug` mask
/// them).
pub use crate::binding_kinds::Source as TriggerSource;

/// Why a trigger's source cannot be resolved: a setting missing or unusable, named with the
/// property or setting it comes from (never a secret value).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SourceError(pub String);

/// The kinds of source [`TriggerSource::kind`] names, besides a broker's trigger `type`.
pub const STORAGE_QUEUE: &str = "storageQueue";
pub const SERVICE_BUS: &str = "serviceBus";
pub const STREAM: &str = "stream";

impl TriggerSource {
    /// The kind of source, for keys, logs and the registries each layer finds a kind's part
    /// in: `storageQueue`, `serviceBus`, `stream`, or a broker's trigger `type`
    /// (`rabbitMQTrigger`).
    pub fn kind(&self) -> &'static str {
        match self {
            TriggerSource::StorageQueue { .. } => STORAGE_QUEUE,
            TriggerSource::ServiceBus { .. } => SERVICE_BUS,
            TriggerSource::Stream(_) => STREAM,
            TriggerSource::Broker(broker) => broker.kind,
        }
    }

    /// What it reads, in one line with no secret: `queue orders`, `subscription audit of topic
    /// events`, `orders on b:9092 (consumer group billing)`. Distinct sources of one kind on
    /// one connection have distinct descriptions.
    pub fn describe(&self) -> String {
        match self {
            TriggerSource::StorageQueue { queue, .. } => format!("queue {queue}"),
            TriggerSource::ServiceBus { entity, .. } => entity.to_string(),
            TriggerSource::Stream(stream) => stream.describe(),
            TriggerSource::Broker(broker) => {
                format!(
                    "{} {} on {}",
                    broker.entity_kind,
                    broker.entity,
                    broker.address()
                )
            }
        }
    }

    /// The Azure connection it signs in with, when it has one (a stream signs in with its
    /// client properties).
    pub fn connection(&self) -> Option<&ConnectionSpec> {
        match self {
            TriggerSource::StorageQueue { connection, .. }
            | TriggerSource::ServiceBus { connection, .. } => Some(connection),
            TriggerSource::Stream(_) | TriggerSource::Broker(_) => None,
        }
    }
}

/// The source `trigger` reads from; None for a trigger that reads from nowhere Shoal reaches
/// (`httpTrigger`, a trigger nothing runs) and for an output binding.
pub fn resolve(
    trigger: &Binding,
    settings: &BTreeMap<String, String>,
    host: &HostConfig,
) -> Option<Result<TriggerSource, SourceError>> {
    let kind = trigger.kind();
    let section = host.extensions.section_of(kind);
    let source = kind.source(trigger, settings, section.as_deref())?;
    Some(source.map_err(SourceError))
}

#[cfg(test)]
mod tests;
