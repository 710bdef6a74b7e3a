//! Queue output bindings: after a successful invocation, the handler's `Outputs.<name>` (and
//! `ReturnValue` for a binding named `$return`) are enqueued. The queue is created on first
//! use, as Azure's output binding does.

use shoal_connectors::{Queue, QueueError};
use shoal_domain::bindings::Binding;
use shoal_domain::host_config::MessageEncoding;
use shoal_domain::invocation::{HandlerResponse, queue_output_messages};
use shoal_domain::queue_trigger::encode_body;
use tokio::sync::OnceCell;

use crate::config::WorkerConfig;
use crate::connections;
use crate::hosted_apps::{HostedApp, HostedFunction};
use crate::watcher::WriteWatcher;

pub const RETURN_BINDING: &str = "$return";

pub struct OutputQueue {
    pub binding: String,
    pub queue: Queue,
    pub encoding: MessageEncoding,
    address: String,
    created: OnceCell<()>,
}

impl OutputQueue {
    pub fn new(binding: String, queue: Queue, encoding: MessageEncoding) -> OutputQueue {
        OutputQueue {
            binding,
            address: queue.address(),
            queue,
            encoding,
            created: OnceCell::new(),
        }
    }

    async fn ensure_exists(&self) -> Result<(), QueueError> {
        self.created
            .get_or_try_init(|| self.queue.create_if_missing())
            .await
            .map(|_| ())
    }
}

/// Connects every output binding of `function`, or says why one cannot be (never naming a
/// secret value).
pub fn bind(
    app: &HostedApp,
    function: &HostedFunction,
    config: &WorkerConfig,
) -> Result<Vec<OutputQueue>, String> {
    let mut outputs = Vec::new();
    for binding in function.spec.bindings.iter().filter(|b| !b.is_trigger()) {
        match binding {
            Binding::Queue(out) => {
                let queues = connections::storage_queues(out.connection.as_deref(), app, config)?;
                let name = out.queue_name.resolve(&app.settings)?;
                let queue = queues.queue(name.as_str()).map_err(|e| e.to_string())?;
                outputs.push(OutputQueue::new(
                    out.name.as_str().to_owned(),
                    queue,
                    app.host.extensions.queues.message_encoding,
                ));
            }
            other => {
                return Err(format!(
                    "{} output bindings are not available yet (binding {})",
                    other.type_name(),
                    other.name().as_str()
                ));
            }
        }
    }
    Ok(outputs)
}

/// Writes every output value of `response`. Returns how many messages were written. Listeners
/// of the written queues on this worker are woken (see [`WriteWatcher`]).
pub async fn write(
    outputs: &[OutputQueue],
    response: &HandlerResponse,
    watcher: &WriteWatcher,
) -> Result<usize, QueueError> {
    let mut written = 0;
    for output in outputs {
        let value = if output.binding == RETURN_BINDING {
            response.return_value.as_ref()
        } else {
            response.outputs.get(&output.binding)
        };
        let Some(value) = value else { continue };
        let messages = queue_output_messages(value);
        if messages.is_empty() {
            continue;
        }
        output.ensure_exists().await?;
        for text in messages {
            output
                .queue
                .enqueue(&encode_body(&text, output.encoding))
                .await?;
            written += 1;
        }
        watcher.written(&output.address);
    }
    Ok(written)
}
