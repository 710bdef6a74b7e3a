//! Azure Storage queues: the `queueTrigger` and the `queue` output, in the binding shape of
//! Azure Functions' Storage Queues extension (azure-sdk-for-net
//! `Microsoft.Azure.WebJobs.Extensions.Storage.Queues`: `queueName`, `connection`, `dataType`),
//! with `host.json`'s `extensions.queues` (`batchSize`, `newBatchThreshold`,
//! `maxPollingInterval`, `visibilityTimeout`, `maxDequeueCount`, `messageEncoding`).
//!
//! `crate::host_config` reads the `queues` section itself, into a typed section whose defaults
//! depend on where the worker runs (`HostDefaults`); this kind is handed it as JSON like any
//! other kind's section. The listener's rules (polling, settlement, encodings) are
//! `crate::queue_trigger`'s; this is what the binding table asks of the kinds.
//!
//! A trigger scales on its queue's approximate message count with `batchSize` per instance,
//! as Azure's `QueueTargetScaler` does; a message that fails `maxDequeueCount` deliveries goes
//! to `<queue>-poison` (see [`poison_queue_name`]).

mod kinds;
mod output_name;

use std::collections::BTreeMap;

use crate::binding_kinds::{KindBinding, Source, typed_if};
use crate::connection::{ConnectionKind, resolve as resolve_connection};
pub use crate::names::POISON_SUFFIX;
use crate::names::QueueName;

pub use kinds::{OUTPUT, TRIGGER};
pub use output_name::{OutputQueueName, resolved_queue_name};

/// The trigger's `type`.
pub const TRIGGER_TYPE: &str = "queueTrigger";
/// The output's `type`.
pub const OUTPUT_TYPE: &str = "queue";
/// The `host.json` section both read, under `extensions`.
pub const HOST_SECTION: &str = "queues";

binding_struct!(
    /// `queueTrigger`: runs the function for each message on a storage queue.
    QueueTriggerBinding {
        queue_name: QueueName,
        /// App setting (or prefix of settings) naming the account; empty means `AzureWebJobsStorage`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        connection: Option<String>,
    }
);

binding_struct!(
    /// `queue` (out): enqueues the handler's output after a successful invocation.
    QueueOutputBinding {
        /// May hold binding expressions (`out-{Id}`), resolved per invocation.
        queue_name: OutputQueueName,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        connection: Option<String>,
    }
);

/// A `queueTrigger`'s properties; None for a binding of another type.
pub fn trigger(binding: &KindBinding) -> Option<Result<QueueTriggerBinding, String>> {
    typed_if(binding, TRIGGER_TYPE)
}

/// A `queue` output's properties; None for a binding of another type.
pub fn output(binding: &KindBinding) -> Option<Result<QueueOutputBinding, String>> {
    typed_if(binding, OUTPUT_TYPE)
}

/// The queue a trigger listens to on the account its connection names.
pub fn trigger_source(
    binding: &QueueTriggerBinding,
    settings: &BTreeMap<String, String>,
) -> Result<Source, String> {
    let connection = resolve_connection(
        ConnectionKind::StorageQueue,
        binding.connection.as_deref(),
        settings,
    )
    .map_err(|e| e.to_string())?;
    let queue = trigger_queue_name(&binding.queue_name, settings)?;
    Ok(Source::StorageQueue {
        connection,
        queue: queue.as_str().to_owned(),
    })
}

/// The queue a trigger listens to: its `queueName` resolved (see [`QueueName::resolve`]). A
/// literal name was checked on write; one taken from an app setting is checked here.
pub fn trigger_queue_name(
    name: &QueueName,
    settings: &BTreeMap<String, String>,
) -> Result<QueueName, String> {
    name.resolve(settings)
}

/// Why a trigger queue has no poison queue.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoPoisonQueue {
    #[error("queue {0} is itself a poison queue (its name ends in {POISON_SUFFIX})")]
    IsPoisonQueue(String),
    #[error("{0}{POISON_SUFFIX} would be longer than {MAX_QUEUE_NAME} characters")]
    NameTooLong(String),
}

/// The longest queue name Azure Storage accepts.
const MAX_QUEUE_NAME: usize = 63;

/// The queue a function's messages go to after `maxDequeueCount` failed deliveries,
/// `<queue>-poison`, or none, as Azure decides (`QueueListenerFactory.CreatePoisonQueueReference`
/// in azure-sdk-for-net `Microsoft.Azure.WebJobs.Extensions.Storage.Queues`): a queue that is
/// itself a poison queue gets none, and neither does one whose poison queue's name would be too
/// long. Without one, a failed message is left invisible and tried again when its invisibility
/// lapses (`crate::queue_trigger::AfterFailure::LeaveInvisible`).
pub fn poison_queue_name(queue: &str) -> Result<String, NoPoisonQueue> {
    if queue.ends_with(POISON_SUFFIX) {
        return Err(NoPoisonQueue::IsPoisonQueue(queue.to_owned()));
    }
    if queue.len() + POISON_SUFFIX.len() > MAX_QUEUE_NAME {
        return Err(NoPoisonQueue::NameTooLong(queue.to_owned()));
    }
    Ok(format!("{queue}{POISON_SUFFIX}"))
}
