//! Output bindings: after a successful invocation, the handler's `Outputs.<name>` (and
//! `ReturnValue` for a binding named `$return`) are written to each output's target — a Storage
//! Queue (`queue`, created on first use as Azure's output binding does), a Service Bus queue
//! or topic (`serviceBus`, connected on first use; Azure does not create entities either), or a
//! Kafka topic or an event hub through its Kafka endpoint (`kafka`, `eventHub`; the producer is
//! made on first use, every record acknowledged by the brokers before the invocation counts as
//! done).

use std::sync::Arc;

use futures::future::try_join_all;
use serde_json::Value;
use shoal_connectors::kafka::{KafkaProperties, OutgoingRecord, StreamProducer};
use shoal_connectors::{MessageSender, Queue, ServiceBusNamespace};
use shoal_domain::bindings::Binding;
use shoal_domain::connection::ConnectionSpec;
use shoal_domain::connection::outbound::AppIdentities;
use shoal_domain::host_config::MessageEncoding;
use shoal_domain::invocation::{HandlerResponse, queue_output_messages};
use shoal_domain::queue_trigger::encode_body;
use shoal_domain::service_bus_trigger::{output_entity, service_bus_output_messages};
use shoal_domain::stream_trigger::{stream_output, stream_output_records};
use shoal_egress::Egress;
use tokio::sync::{Mutex, OnceCell};

use crate::config::WorkerConfig;
use crate::connections;
use crate::error::TriggerSourceError;
use crate::hosted_apps::{HostedApp, HostedFunction};
use crate::watcher::WriteWatcher;

pub const RETURN_BINDING: &str = "$return";

/// One output binding of a function, bound to its target.
pub struct Output {
    pub binding: String,
    target: Target,
}

enum Target {
    Queue(OutputQueue),
    /// Boxed: it carries the connection settings, far larger than a queue handle.
    ServiceBus(Box<ServiceBusOutput>),
    Stream(Box<StreamOutput>),
}

/// A Kafka topic (or an event hub through its Kafka endpoint); the producer is made on first
/// use and kept.
pub struct StreamOutput {
    topic: String,
    properties: KafkaProperties,
    /// `kafka` outputs read the `KafkaEventData` form (key, headers); `eventHub` ones do not.
    event_data_form: bool,
    producer: OnceCell<StreamProducer>,
    /// The app's egress policy, which the brokers pass before the producer is made.
    egress: Egress,
}

pub struct OutputQueue {
    queue: Queue,
    encoding: MessageEncoding,
    address: String,
    created: OnceCell<()>,
}

/// A Service Bus queue or topic; the connection and the sender are made on first use and kept.
pub struct ServiceBusOutput {
    spec: ConnectionSpec,
    identities: AppIdentities,
    connector: shoal_connectors::ConnectorOptions,
    entity: String,
    sender: Mutex<Option<MessageSender>>,
    /// The namespace connection, kept so a failed sender can be reopened on it.
    namespace: Arc<OnceCell<ServiceBusNamespace>>,
}

impl Output {
    pub fn queue(binding: String, queue: Queue, encoding: MessageEncoding) -> Output {
        Output {
            binding,
            target: Target::Queue(OutputQueue {
                address: queue.address(),
                queue,
                encoding,
                created: OnceCell::new(),
            }),
        }
    }
}

/// Connects every output binding of `function` (Service Bus ones on first use), or says why
/// one cannot be (never naming a secret value).
pub fn bind(
    app: &HostedApp,
    function: &HostedFunction,
    config: &WorkerConfig,
) -> Result<Vec<Output>, String> {
    let mut outputs = Vec::new();
    for binding in function.spec.bindings.iter().filter(|b| !b.is_trigger()) {
        match binding {
            Binding::Queue(out) => {
                let queues = connections::storage_queues(out.connection.as_deref(), app, config)?;
                let name = out.queue_name.resolve(&app.settings)?;
                let queue = queues.queue(name.as_str()).map_err(|e| e.to_string())?;
                outputs.push(Output::queue(
                    out.name.as_str().to_owned(),
                    queue,
                    app.host.extensions.queues.message_encoding,
                ));
            }
            Binding::ServiceBus(out) => {
                let spec = connections::service_bus(out.connection.as_deref(), app, config)?;
                let entity = output_entity(out, &app.settings)?;
                outputs.push(Output {
                    binding: out.name.as_str().to_owned(),
                    target: Target::ServiceBus(Box::new(ServiceBusOutput {
                        spec,
                        identities: app.identities.clone(),
                        connector: connections::connector_options(app, config),
                        entity,
                        sender: Mutex::new(None),
                        namespace: Arc::new(OnceCell::new()),
                    })),
                });
            }
            Binding::Kafka(_) | Binding::EventHub(_) => {
                let target = stream_output(binding, &app.settings)
                    .map_err(|e| format!("output {}: {e}", binding.name().as_str()))?;
                connections::check_brokers(&target.properties, app, config)
                    .map_err(|e| format!("output {}: {e}", binding.name().as_str()))?;
                let mut properties = KafkaProperties::new();
                for (key, value) in &target.properties {
                    properties.set(key, value);
                }
                outputs.push(Output {
                    binding: binding.name().as_str().to_owned(),
                    target: Target::Stream(Box::new(StreamOutput {
                        topic: target.topic,
                        properties,
                        event_data_form: matches!(binding, Binding::Kafka(_)),
                        producer: OnceCell::new(),
                        egress: config.egress.for_tenant(&app.egress_allow),
                    })),
                });
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
/// of the written Storage Queues on this worker are woken (see [`WriteWatcher`]). Every
/// Service Bus value is checked before anything is written, so a malformed one fails the
/// invocation without half its outputs sent.
pub async fn write(
    outputs: &[Output],
    response: &HandlerResponse,
    watcher: &WriteWatcher,
) -> Result<usize, TriggerSourceError> {
    let value_of = |output: &Output| -> Option<&Value> {
        if output.binding == RETURN_BINDING {
            response.return_value.as_ref()
        } else {
            response.outputs.get(&output.binding)
        }
    };
    let mut service_bus = Vec::new();
    for output in outputs {
        if let (Target::ServiceBus(_), Some(value)) = (&output.target, value_of(output)) {
            service_bus.push(service_bus_output_messages(&output.binding, value)?);
        }
    }
    let mut service_bus = service_bus.into_iter();
    let mut written = 0;
    for output in outputs {
        let Some(value) = value_of(output) else {
            continue;
        };
        match &output.target {
            Target::Queue(queue) => {
                let messages = queue_output_messages(value);
                if messages.is_empty() {
                    continue;
                }
                queue
                    .created
                    .get_or_try_init(|| queue.queue.create_if_missing())
                    .await?;
                for text in messages {
                    queue
                        .queue
                        .enqueue(&encode_body(&text, queue.encoding))
                        .await?;
                    written += 1;
                }
                watcher.written(&queue.address);
            }
            Target::ServiceBus(target) => {
                let messages = service_bus.next().unwrap_or_default();
                if messages.is_empty() {
                    continue;
                }
                target.send(&messages).await?;
                written += messages.len();
            }
            Target::Stream(target) => written += target.send(value).await?,
        }
    }
    Ok(written)
}

impl StreamOutput {
    /// Produces the records `value` stands for and waits for every acknowledgement.
    async fn send(&self, value: &Value) -> Result<usize, TriggerSourceError> {
        let records = stream_output_records(value, self.event_data_form);
        if records.is_empty() {
            return Ok(0);
        }
        let producer = self
            .producer
            .get_or_try_init(|| {
                connections::stream_producer(&self.properties, &self.topic, &self.egress)
            })
            .await?;
        let count = records.len();
        try_join_all(records.into_iter().map(|record| {
            producer.send(
                &self.topic,
                OutgoingRecord {
                    key: record.key,
                    value: record.value,
                    headers: record.headers,
                    partition: None,
                },
            )
        }))
        .await
        .map_err(|e| format!("producing to {}: {e}", self.topic))?;
        Ok(count)
    }
}

impl ServiceBusOutput {
    async fn send(
        &self,
        messages: &[shoal_domain::service_bus_trigger::OutgoingMessage],
    ) -> Result<(), TriggerSourceError> {
        let mut sender = self.sender.lock().await;
        if sender.is_none() {
            let namespace = self
                .namespace
                .get_or_try_init(|| {
                    ServiceBusNamespace::connect_for_app(
                        &self.spec,
                        &self.connector,
                        &self.identities,
                    )
                })
                .await?;
            *sender = Some(namespace.sender(&self.entity).await?);
        }
        let Some(open) = sender.as_mut() else {
            return Err("the Service Bus sender is not open".into());
        };
        if let Err(e) = open.send(messages).await {
            // A broken link is reopened by the next invocation's outputs.
            *sender = None;
            return Err(format!("sending to {}: {e}", self.entity).into());
        }
        Ok(())
    }
}
