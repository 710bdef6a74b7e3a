//! The Azure Storage Queue trigger (`queueTrigger`), with the Azure Functions host's
//! semantics: batch polling with randomized back-off (`listener`), visibility renewal and
//! settlement by `maxDequeueCount` (`delivery`), and no message processed twice at once by one
//! function (`in_flight`).

mod delivery;
mod in_flight;
mod listener;
mod parking;

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use shoal_connectors::Queue;
use shoal_domain::binding_kinds::storage_queue;
use shoal_domain::bindings::{Binding, DataType};
use shoal_domain::host_config::QueuesOptions;
use shoal_domain::queue_trigger::poison_queue_name;
use shoal_domain::trigger_source::TriggerSource;
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

use crate::bind_error::BindError;
use crate::config::WorkerConfig;
use crate::connections;
use crate::hosted_apps::{HostedApp, HostedFunction};
use crate::invocation::FunctionHost;
use crate::triggers::kind::{TriggerKind, TriggerListener, source_of};
use crate::triggers::storage_queue::delivery::QueueFunction;
use crate::triggers::storage_queue::listener::QueueListener;

pub struct StorageQueueTrigger;

impl TriggerKind for StorageQueueTrigger {
    fn binding_type(&self) -> &'static str {
        storage_queue::TRIGGER_TYPE
    }

    fn source(&self, trigger: &Binding, app: &HostedApp) -> String {
        let Some(Ok(trigger)) = storage_queue::trigger(trigger) else {
            return String::new();
        };
        trigger
            .queue_name
            .resolve(&app.settings)
            .unwrap_or_else(|_| trigger.queue_name.clone())
            .as_str()
            .to_owned()
    }

    fn bind(
        &self,
        _function: &HostedFunction,
        trigger: &Binding,
        app: &HostedApp,
        config: &WorkerConfig,
    ) -> Result<Box<dyn TriggerListener>, BindError> {
        let (
            Some(Ok(trigger)),
            TriggerSource::StorageQueue {
                connection,
                queue: queue_name,
            },
        ) = (storage_queue::trigger(trigger), source_of(trigger, app)?)
        else {
            return Err(BindError::Mismatch("queue trigger"));
        };
        let queues = connections::storage_queues_at(&connection, app, config)?;
        let queue_name = queue_name.as_str();
        let queue = queues
            .queue(queue_name)
            .map_err(|e| BindError::Source(e.to_string()))?;
        // Some queues have no poison queue, as in Azure (see `poison_queue_name`).
        let poison = match poison_queue_name(queue_name) {
            Ok(name) => Some(
                queues
                    .queue(&name)
                    .map_err(|e| BindError::Source(e.to_string()))?,
            ),
            Err(reason) => {
                tracing::info!(%reason, "no poison queue: failed messages stay on the queue");
                None
            }
        };
        Ok(Box::new(BoundQueueTrigger {
            binding: trigger.name.as_str().to_owned(),
            data_type: trigger.data_type,
            queue,
            poison,
            options: app.host.extensions.queues.clone(),
            invisibility: config.invisibility,
        }))
    }
}

/// A queue trigger connected to its queue and its poison queue, if it has one.
struct BoundQueueTrigger {
    binding: String,
    data_type: Option<DataType>,
    queue: Queue,
    poison: Option<Queue>,
    options: QueuesOptions,
    invisibility: Duration,
}

impl TriggerListener for BoundQueueTrigger {
    fn listen(
        self: Box<Self>,
        function: Arc<FunctionHost>,
        stop: CancellationToken,
        abandon: CancellationToken,
    ) -> BoxFuture<'static, ()> {
        let trigger = *self;
        QueueListener {
            options: trigger.options.clone(),
            context: Arc::new(QueueFunction {
                function,
                binding: trigger.binding,
                data_type: trigger.data_type,
                queue: trigger.queue,
                poison: trigger.poison,
                poison_created: OnceCell::new(),
                options: trigger.options,
                invisibility: trigger.invisibility,
            }),
            stop,
            abandon,
        }
        .run()
        .boxed()
    }
}
