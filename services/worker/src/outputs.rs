//! Output bindings: after a successful invocation, the handler's `Outputs.<name>` (and
//! `ReturnValue` for a binding named `$return`) are written to each output's target — a Storage
//! Queue (`queue`, created on first use as Azure's output binding does), a Service Bus queue
//! or topic (`serviceBus`, connected on first use; Azure does not create entities either), or a
//! Kafka topic or an event hub through its Kafka endpoint (`kafka`, `eventHub`; the producer is
//! made on first use, every record acknowledged by the brokers before the invocation counts as
//! done).
//!
//! A target name with binding expressions (`out-{Id}`) is resolved for each invocation from the
//! request the handler was sent (see `shoal_domain::binding_expressions`), every such name
//! before anything is written, so a name that does not resolve to a valid one fails the
//! invocation — and the message takes the trigger's retry, poison or dead-letter path — without
//! half its outputs written. Names without expressions are resolved once, when bound.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::Mutex as SyncMutex;

use futures::future::try_join_all;
use serde_json::Value;
use shoal_connectors::kafka::{KafkaProperties, OutgoingRecord, StreamProducer};
use shoal_connectors::{MessageSender, Queue, ServiceBusNamespace, StorageQueues};
use shoal_domain::binding_expressions::{BindingData, BoundTemplate, Template};
use shoal_domain::binding_kinds::service_bus::{self, ServiceBusOutputBinding};
use shoal_domain::binding_kinds::storage_queue::{self, QueueOutputBinding};
use shoal_domain::binding_kinds::stream;
use shoal_domain::bindings::{Binding, resolved_queue_name};
use shoal_domain::connection::ConnectionSpec;
use shoal_domain::connection::outbound::AppIdentities;
use shoal_domain::host_config::MessageEncoding;
use shoal_domain::invocation::{HandlerResponse, queue_output_messages};
use shoal_domain::queue_trigger::encode_body;
use shoal_domain::service_bus_trigger::{
    check_output_entity, output_entity, service_bus_output_messages,
};
use shoal_domain::stream_trigger::source::StreamTarget;
use shoal_domain::stream_trigger::source::check_topic;
use shoal_domain::stream_trigger::stream_output_records;
use shoal_domain::trace_context::TraceContext;
use shoal_egress::Egress;
use tokio::sync::{Mutex, OnceCell};

use crate::config::WorkerConfig;
use crate::connections;
use crate::error::OutputWriteError;
use crate::hosted_apps::{HostedApp, HostedFunction};
use crate::spans;
use crate::watcher::WriteWatcher;

mod kinds;

pub const RETURN_BINDING: &str = "$return";

/// One output binding of a function, bound to its target.
pub struct Output {
    pub binding: String,
    target: Target,
    /// The target's name when it has binding expressions, resolved for each invocation.
    name: Option<NameTemplate>,
}

/// A target name with binding expressions, its `%Setting%` references already resolved.
struct NameTemplate {
    written: String,
    bound: BoundTemplate,
}

impl NameTemplate {
    /// `None` for a name without expressions (bound once, the way it always was).
    fn of(
        written: &str,
        settings: &std::collections::BTreeMap<String, String>,
    ) -> Result<Option<NameTemplate>, String> {
        let template = Template::parse(written)?;
        if !template.has_expressions() {
            return Ok(None);
        }
        Ok(Some(NameTemplate {
            written: written.to_owned(),
            bound: template.bind_settings(settings)?,
        }))
    }

    /// The name for this invocation, checked as `target`'s names are: a queue name lower-cased
    /// first, as Azure does (`QueuesExtensionConfigProvider.GetQueue`).
    fn resolve(&self, data: &BindingData<'_>, target: &Target) -> Result<String, String> {
        let resolved = self.bound.resolve(data)?;
        match target {
            Target::Queue(_) | Target::QueueByName(_) => {
                resolved_queue_name(&self.written, &resolved).map(|q| q.as_str().to_owned())
            }
            Target::ServiceBus(out) => {
                check_output_entity(&out.binding, &resolved).map(|()| resolved)
            }
            Target::Kind(_, target) => target.check_name(&resolved).map(|()| resolved),
            Target::Stream(_) => match check_topic(&resolved) {
                Ok(()) => Ok(resolved),
                Err(e) => Err(format!(
                    "{} resolves to {resolved:?}, which {e}",
                    self.written
                )),
            },
        }
    }
}

enum Target {
    Queue(OutputQueue),
    /// A queue whose name is resolved per invocation.
    QueueByName(Box<NamedQueues>),
    /// Boxed: it carries the connection settings, far larger than a queue handle.
    ServiceBus(Box<ServiceBusOutput>),
    Stream(Box<StreamOutput>),
    /// An output of a kind of `binding_kinds` (see `kinds`), with its binding type.
    Kind(&'static str, Box<dyn kinds::KindTarget>),
}

impl Target {
    /// The binding type that writes here, as `function.json` names it.
    fn kind(&self) -> &'static str {
        match self {
            Target::Queue(_) | Target::QueueByName(_) => "queue",
            Target::ServiceBus(_) => "serviceBus",
            Target::Stream(stream) if stream.event_data_form => "kafka",
            Target::Stream(_) => "eventHub",
            Target::Kind(kind, _) => kind,
        }
    }
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

/// The queues of one storage connection an output with an expression in its name writes to.
pub struct NamedQueues {
    queues: StorageQueues,
    encoding: MessageEncoding,
    /// Queues already created (or found) by this output, so each is created once; cleared when
    /// it reaches [`CREATED_KEPT`] (names such as `{rand-guid}` never repeat).
    created: SyncMutex<HashSet<String>>,
}

/// The most created queue names an output remembers.
const CREATED_KEPT: usize = 1024;

/// A Service Bus queue or topic; the connection and the sender are made on first use and kept.
pub struct ServiceBusOutput {
    binding: ServiceBusOutputBinding,
    spec: ConnectionSpec,
    identities: AppIdentities,
    connector: shoal_connectors::ConnectorOptions,
    entity: String,
    sender: Mutex<Option<MessageSender>>,
    /// Senders to the entities a name with expressions resolved to, oldest first.
    named_senders: Mutex<Vec<(String, MessageSender)>>,
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
            name: None,
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
        let out = binding;
        if let Some(written) = storage_queue::output(out) {
            outputs.push(queue_output(&written?, app, config)?);
            continue;
        }
        if let Some(written) = service_bus::output(out) {
            outputs.push(service_bus_output(written?, app, config)?);
            continue;
        }
        if let Some(target) = stream::client(out, &app.settings) {
            let target = target.map_err(|e| format!("output {}: {e}", out.name()))?;
            outputs.push(stream_output(out, target, app, config)?);
            continue;
        }
        let Some(kind) = kinds::kind_of(out) else {
            return Err(format!(
                "{} output bindings are not available yet (binding {})",
                out.kind().type_name(),
                out.name()
            ));
        };
        let bound = kind
            .bind(out, app, config)
            .map_err(|e| format!("output {}: {e}", out.name()))?;
        let name = match &bound.name {
            Some(written) => NameTemplate::of(written, &app.settings)
                .map_err(|e| format!("output {}: {e}", out.name()))?,
            None => None,
        };
        outputs.push(Output {
            binding: out.name().as_str().to_owned(),
            name,
            target: Target::Kind(kind.binding_type(), bound.target),
        });
    }
    Ok(outputs)
}

/// A `queue` output: to one queue, or to the queues its name's expressions resolve to.
fn queue_output(
    out: &QueueOutputBinding,
    app: &HostedApp,
    config: &WorkerConfig,
) -> Result<Output, String> {
    let queues = connections::storage_queues(out.connection.as_deref(), app, config)?;
    let encoding = app.host.extensions.queues.message_encoding;
    let name = NameTemplate::of(out.queue_name.as_str(), &app.settings)
        .map_err(|e| format!("output {}: {e}", out.name))?;
    if let Some(name) = name {
        return Ok(Output {
            binding: out.name.as_str().to_owned(),
            target: Target::QueueByName(Box::new(NamedQueues {
                queues,
                encoding,
                created: SyncMutex::new(HashSet::new()),
            })),
            name: Some(name),
        });
    }
    let Some(literal) = out.queue_name.literal() else {
        return Err(format!("output {}: the queue name did not parse", out.name));
    };
    let name = literal.resolve(&app.settings)?;
    let queue = queues.queue(name.as_str()).map_err(|e| e.to_string())?;
    Ok(Output::queue(out.name.as_str().to_owned(), queue, encoding))
}

/// A `kafka` or `eventHub` output writing to `target`: its producer is made on first use.
fn stream_output(
    out: &Binding,
    target: StreamTarget,
    app: &HostedApp,
    config: &WorkerConfig,
) -> Result<Output, String> {
    connections::check_brokers(&target.properties, app, config)
        .map_err(|e| format!("output {}: {e}", out.name()))?;
    let mut properties = KafkaProperties::new();
    for (key, value) in &target.properties {
        properties.set(key, value);
    }
    let name = NameTemplate::of(&target.topic, &app.settings)
        .map_err(|e| format!("output {}: {e}", out.name()))?;
    Ok(Output {
        binding: out.name().as_str().to_owned(),
        name,
        target: Target::Stream(Box::new(StreamOutput {
            topic: target.topic,
            properties,
            event_data_form: !stream::is_event_hubs(out),
            producer: OnceCell::new(),
            egress: config.egress.for_tenant(&app.egress_allow),
        })),
    })
}

/// A `serviceBus` output: its sender is made on first use.
fn service_bus_output(
    out: ServiceBusOutputBinding,
    app: &HostedApp,
    config: &WorkerConfig,
) -> Result<Output, String> {
    let spec = connections::service_bus(out.connection.as_deref(), app, config)?;
    let entity = output_entity(&out, &app.settings)?;
    let name = NameTemplate::of(&entity, &app.settings)
        .map_err(|e| format!("output {}: {e}", out.name))?;
    Ok(Output {
        binding: out.name.as_str().to_owned(),
        name,
        target: Target::ServiceBus(Box::new(ServiceBusOutput {
            binding: out,
            spec,
            identities: app.identities.clone(),
            connector: connections::connector_options(app, config),
            entity,
            sender: Mutex::new(None),
            named_senders: Mutex::new(Vec::new()),
            namespace: Arc::new(OnceCell::new()),
        })),
    })
}

/// What an invocation's outputs are resolved from: the request its handler was sent and the
/// name of its trigger binding (`Data.<trigger>`).
pub struct Invocation<'a> {
    pub request: &'a Value,
    pub trigger: &'a str,
    /// The attempt's trace context: every message written carries it (Service Bus
    /// application properties, Kafka and RabbitMQ headers; a Storage queue message has no
    /// place for it), unless the handler gave the message one of its own.
    pub trace: &'a TraceContext,
}

/// Writes every output value of `response`. Returns how many messages were written. Listeners
/// of the written Storage Queues on this worker are woken (see [`WriteWatcher`]). Every
/// Service Bus value and every name with binding expressions is checked before anything is
/// written, so a malformed one fails the invocation without half its outputs sent.
pub async fn write(
    outputs: &[Output],
    response: &HandlerResponse,
    watcher: &WriteWatcher,
    invocation: &Invocation<'_>,
) -> Result<usize, OutputWriteError> {
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
            let mut messages = service_bus_output_messages(&output.binding, value)?;
            for message in &mut messages {
                let properties = &mut message.application_properties;
                let added = invocation
                    .trace
                    .for_output(true, |name| properties.contains_key(name));
                for (name, value) in added {
                    properties.insert(name.to_owned(), Value::String(value));
                }
            }
            service_bus.push(messages);
        }
    }
    // Read only when some output that writes something names its target with expressions.
    let mut data = None;
    let mut names = Vec::with_capacity(outputs.len());
    for output in outputs {
        let name = match (&output.name, value_of(output)) {
            (Some(name), Some(value)) if writes_something(value) => {
                let data = data.get_or_insert_with(|| {
                    BindingData::from_request(
                        invocation.request,
                        invocation.trigger,
                        chrono::Utc::now(),
                    )
                });
                Some(
                    name.resolve(data, &output.target)
                        .map_err(|e| format!("output {}: {e}", output.binding))?,
                )
            }
            _ => None,
        };
        names.push(name);
    }
    let mut service_bus = service_bus.into_iter();
    let mut written = 0;
    for (output, name) in outputs.iter().zip(names) {
        let Some(value) = value_of(output) else {
            continue;
        };
        // The Service Bus messages were made (and checked) above, one list per such output.
        let messages = match &output.target {
            Target::ServiceBus(_) => service_bus.next().unwrap_or_default(),
            _ => Vec::new(),
        };
        let mut span = spans::output(invocation.trace, &output.binding, output.target.kind());
        match write_one(output, name, value, messages, watcher, invocation).await {
            Ok(count) => {
                spans::messages_written(&mut span, count);
                span.end("written", false);
                written += count;
            }
            Err(e) => {
                span.end("failed", true);
                return Err(e);
            }
        }
    }
    Ok(written)
}

/// Writes one output's value (`name`: where its expressions resolved to; `service_bus`: its
/// messages, for a Service Bus output). How many messages were written.
async fn write_one(
    output: &Output,
    name: Option<String>,
    value: &Value,
    service_bus: Vec<shoal_domain::service_bus_trigger::OutgoingMessage>,
    watcher: &WriteWatcher,
    invocation: &Invocation<'_>,
) -> Result<usize, OutputWriteError> {
    match &output.target {
        Target::QueueByName(queues) => {
            let messages = queue_output_messages(value);
            let Some(name) = name.filter(|_| !messages.is_empty()) else {
                return Ok(0);
            };
            let queue = queues.write(&name, &messages).await?;
            watcher.written(&queue.address());
            Ok(messages.len())
        }
        Target::Queue(queue) => {
            let messages = queue_output_messages(value);
            if messages.is_empty() {
                return Ok(0);
            }
            queue
                .created
                .get_or_try_init(|| queue.queue.create_if_missing())
                .await?;
            for text in &messages {
                queue
                    .queue
                    .enqueue(&encode_body(text, queue.encoding))
                    .await?;
            }
            watcher.written(&queue.address);
            Ok(messages.len())
        }
        Target::ServiceBus(target) => {
            if service_bus.is_empty() {
                return Ok(0);
            }
            match name {
                Some(entity) => target.send_to(&entity, &service_bus).await?,
                None => target.send(&service_bus).await?,
            }
            Ok(service_bus.len())
        }
        Target::Kind(_, target) => Ok(target
            .write(name.as_deref(), value, invocation.trace)
            .await?),
        Target::Stream(target) => {
            let topic = name.as_deref().unwrap_or(&target.topic);
            Ok(target.send(topic, value, invocation.trace).await?)
        }
    }
}

/// `null`, and an array of nothing but `null`s, write nothing to any target.
fn writes_something(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Array(items) => items.iter().any(|v| !v.is_null()),
        _ => true,
    }
}

impl NamedQueues {
    /// Enqueues `messages` on `name`, creating the queue the first time this output writes to
    /// it (as Azure's queue output binding creates its queue).
    async fn write(&self, name: &str, messages: &[String]) -> Result<Queue, OutputWriteError> {
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
        for text in messages {
            queue.enqueue(&encode_body(text, self.encoding)).await?;
        }
        Ok(queue)
    }
}

impl StreamOutput {
    /// Produces the records `value` stands for to `topic` (the binding's, or what its name's
    /// expressions resolved to) and waits for every acknowledgement.
    async fn send(
        &self,
        topic: &str,
        value: &Value,
        trace: &TraceContext,
    ) -> Result<usize, OutputWriteError> {
        let mut records = stream_output_records(value, self.event_data_form);
        for record in &mut records {
            let headers = &record.headers;
            let added = trace.for_output(false, |name| headers.iter().any(|(k, _)| k == name));
            record.headers.extend(
                added
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v.into_bytes())),
            );
        }
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
                topic,
                OutgoingRecord {
                    key: record.key,
                    value: record.value,
                    headers: record.headers,
                    partition: None,
                },
            )
        }))
        .await
        .map_err(|e| format!("producing to {topic}: {e}"))?;
        Ok(count)
    }
}

impl ServiceBusOutput {
    /// The namespace connection, made on first use and kept for every sender.
    async fn namespace(&self) -> Result<&ServiceBusNamespace, OutputWriteError> {
        Ok(self
            .namespace
            .get_or_try_init(|| {
                ServiceBusNamespace::connect_for_app(&self.spec, &self.connector, &self.identities)
            })
            .await?)
    }

    async fn send(
        &self,
        messages: &[shoal_domain::service_bus_trigger::OutgoingMessage],
    ) -> Result<(), OutputWriteError> {
        let mut sender = self.sender.lock().await;
        if sender.is_none() {
            let namespace = self.namespace().await?;
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

    /// Sends to `entity`, what this invocation's expressions resolved the name to. Senders are
    /// kept per entity, up to [`SENDERS_KEPT`] (each is a connection of its own); past that the
    /// oldest is closed.
    async fn send_to(
        &self,
        entity: &str,
        messages: &[shoal_domain::service_bus_trigger::OutgoingMessage],
    ) -> Result<(), OutputWriteError> {
        let mut senders = self.named_senders.lock().await;
        let position = senders.iter().position(|(name, _)| name == entity);
        let (_, sender) = match position {
            Some(at) => &mut senders[at],
            None => {
                let namespace = self.namespace().await?;
                let opened = namespace.sender(entity).await?;
                if senders.len() >= SENDERS_KEPT {
                    let (oldest, sender) = senders.remove(0);
                    if let Err(e) = sender.close().await {
                        tracing::debug!(entity = oldest, error = %e, "closing a Service Bus sender failed");
                    }
                }
                senders.push((entity.to_owned(), opened));
                let last = senders.len() - 1;
                &mut senders[last]
            }
        };
        if let Err(e) = sender.send(messages).await {
            // A broken link is reopened by the next invocation that sends there.
            senders.retain(|(name, _)| name != entity);
            return Err(format!("sending to {entity}: {e}").into());
        }
        Ok(())
    }
}

/// The most Service Bus senders an output whose entity name has expressions keeps open.
const SENDERS_KEPT: usize = 8;
