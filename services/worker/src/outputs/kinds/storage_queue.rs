//! The `queue` output: the handler's output enqueued on a Storage queue, a string as its
//! text, an array as one message per element, any other JSON value serialized, each encoded
//! as `host.json`'s `extensions.queues.messageEncoding` says. The queue is created on first use,
//! as Azure's queue output binding does, and a name with binding expressions is lower-cased
//! before it is checked, as Azure's `QueuesExtensionConfigProvider.GetQueue` does. Listeners of
//! the written queue on this worker are woken at once.

use std::collections::HashSet;
use std::sync::Mutex;

use futures::FutureExt as _;
use serde_json::Value;
use shoal_connectors::{Queue, StorageQueues};
use shoal_domain::binding_expressions::has_expressions;
use shoal_domain::binding_kinds::KindBinding;
use shoal_domain::binding_kinds::storage_queue::{OUTPUT_TYPE, QueueOutputBinding};
use shoal_domain::bindings::resolved_queue_name;
use shoal_domain::host_config::MessageEncoding;
use shoal_domain::invocation::queue_output_messages;
use shoal_domain::queue_trigger::encode_body;
use shoal_domain::trace_context::TraceContext;
use tokio::sync::OnceCell;

use super::{Bound, KindTarget, OutputKind, Prepared};
use crate::config::WorkerConfig;
use crate::connections;
use crate::error::OutputWriteError;
use crate::hosted_apps::HostedApp;

pub struct QueueOutput;

impl OutputKind for QueueOutput {
    fn binding_type(&self) -> &'static str {
        OUTPUT_TYPE
    }

    fn bind(
        &self,
        binding: &KindBinding,
        app: &HostedApp,
        config: &WorkerConfig,
    ) -> Result<Bound, String> {
        let out: QueueOutputBinding = binding.typed()?;
        let queues = connections::storage_queues(out.connection.as_deref(), app, config)?;
        let encoding = app.host.extensions.queues.message_encoding;
        let written = out.queue_name.as_str();
        if has_expressions(written) {
            return Ok(Bound {
                name: Some(written.to_owned()),
                target: Box::new(NamedQueues {
                    queues,
                    encoding,
                    created: Mutex::new(HashSet::new()),
                }),
            });
        }
        let Some(literal) = out.queue_name.literal() else {
            return Err("the queue name did not parse".into());
        };
        let name = literal.resolve(&app.settings)?;
        let queue = queues.queue(name.as_str()).map_err(|e| e.to_string())?;
        Ok(Bound {
            name: None,
            target: Box::new(OutputQueue {
                address: queue.address(),
                queue,
                encoding,
                created: OnceCell::new(),
            }),
        })
    }
}

/// One queue, named without expressions.
struct OutputQueue {
    queue: Queue,
    encoding: MessageEncoding,
    address: String,
    created: OnceCell<()>,
}

/// The queues of one storage connection an output with an expression in its name writes to.
struct NamedQueues {
    queues: StorageQueues,
    encoding: MessageEncoding,
    /// Queues already created (or found) by this output, so each is created once; cleared when
    /// it reaches [`CREATED_KEPT`] (names such as `{rand-guid}` never repeat).
    created: Mutex<HashSet<String>>,
}

/// The most created queue names an output remembers.
const CREATED_KEPT: usize = 1024;

/// The queue messages `value` stands for, encoded; a Storage queue message has no place for
/// a trace context.
fn bodies(value: &Value, encoding: MessageEncoding) -> Vec<String> {
    queue_output_messages(value)
        .iter()
        .map(|text| encode_body(text, encoding))
        .collect()
}

impl KindTarget for OutputQueue {
    fn check_name(&self, written: &str, resolved: String) -> Result<String, String> {
        check_queue_name(written, &resolved)
    }

    fn prepare<'a>(
        &'a self,
        value: &'a Value,
        _trace: &'a TraceContext,
    ) -> Result<Prepared<'a>, OutputWriteError> {
        let bodies = bodies(value, self.encoding);
        Ok(Box::new(move |_, watcher| {
            async move {
                if bodies.is_empty() {
                    return Ok(0);
                }
                self.created
                    .get_or_try_init(|| self.queue.create_if_missing())
                    .await?;
                for body in &bodies {
                    self.queue.enqueue(body).await?;
                }
                watcher.written(&self.address);
                Ok(bodies.len())
            }
            .boxed()
        }))
    }
}

impl KindTarget for NamedQueues {
    fn check_name(&self, written: &str, resolved: String) -> Result<String, String> {
        check_queue_name(written, &resolved)
    }

    fn prepare<'a>(
        &'a self,
        value: &'a Value,
        _trace: &'a TraceContext,
    ) -> Result<Prepared<'a>, OutputWriteError> {
        let bodies = bodies(value, self.encoding);
        Ok(Box::new(move |name, watcher| {
            async move {
                let Some(name) = name.filter(|_| !bodies.is_empty()) else {
                    return Ok(0);
                };
                let queue = self.write(&name, &bodies).await?;
                watcher.written(&queue.address());
                Ok(bodies.len())
            }
            .boxed()
        }))
    }
}

/// A resolved queue name, lower-cased first as Azure does
/// (`QueuesExtensionConfigProvider.GetQueue`).
fn check_queue_name(written: &str, resolved: &str) -> Result<String, String> {
    resolved_queue_name(written, resolved).map(|q| q.as_str().to_owned())
}

impl NamedQueues {
    /// Enqueues `bodies` on `name`, creating the queue the first time this output writes to
    /// it (as Azure's queue output binding creates its queue).
    async fn write(&self, name: &str, bodies: &[String]) -> Result<Queue, OutputWriteError> {
        let queue = self.queues.queue(name)?;
        let known = self
            .created
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(name);
        if !known {
            queue.create_if_missing().await?;
            let mut created = self.created.lock().unwrap_or_else(|p| p.into_inner());
            if created.len() >= CREATED_KEPT {
                created.clear();
            }
            created.insert(name.to_owned());
        }
        for body in bodies {
            queue.enqueue(body).await?;
        }
        Ok(queue)
    }
}
