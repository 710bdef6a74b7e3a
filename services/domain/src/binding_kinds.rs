//! Binding kinds described by one descriptor each, in one table.
//!
//! A kind added this way is a module implementing [`BindingKind`] and a line in [`KINDS`]:
//! everything the domain knows of it — its `type` names, how its properties are read and
//! checked, the binding data its trigger supplies, where it reads from, what it scales on,
//! where its failed messages go, its `host.json` section and what diagnostics say of it — is
//! asked of its descriptor, and the other layers (the worker's listeners and outputs, the
//! scheduler's metric reads, the API) find their part of the kind by its `type` name in
//! their own one-line registries. `docs/triggers.md`, "Adding a trigger kind", lists them.
//!
//! The table sits below `bindings`, `host_config`, `scale` and `trigger_source`, which ask it:
//! a kind sees its own `host.json` section (a JSON value, its defaults filled in), not the
//! whole host configuration, and answers in the plain types defined here.
//!
//! Every binding type is a kind here (Storage queues, Service Bus, Event Hubs, Kafka, HTTP,
//! `cosmosDBTrigger`, `timerTrigger`, RabbitMQ), and a binding (`crate::bindings::Binding`)
//! is a [`KindBinding`]: its kind's descriptor, its name and its properties kept as written
//! (checked by the kind when read), read into the kind's own types where they are used (each
//! kind's module has an accessor, such as `service_bus::trigger`).

use std::collections::BTreeMap;
use std::fmt;

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;
use utoipa::openapi::{RefOr, Schema};

use crate::connection::{ConnectionKind, ConnectionSpec};
use crate::names::{BindingName, SettingName};
use crate::validation::{Problems, from_json, from_json_object};

/// Declares a binding's property struct: camelCase, unknown properties rejected, `None`
/// omitted on output, and the `dataType` every binding may carry.
macro_rules! binding_struct {
    ($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $field:ident : $ty:ty),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
        #[serde(deny_unknown_fields, rename_all = "camelCase")]
        pub struct $name {
            pub name: crate::names::BindingName,
            $($(#[$fdoc])* pub $field: $ty,)*
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub data_type: Option<crate::binding_kinds::DataType>,
        }
    };
}

pub mod cosmos_db;
pub mod http;
pub mod rabbitmq;
pub mod service_bus;
pub mod storage_queue;
pub mod stream;
pub mod timer;

/// Every binding kind Shoal knows, in the order error messages and the catalog list them.
const KINDS: &[&dyn BindingKind] = &[
    &storage_queue::TRIGGER,
    &storage_queue::OUTPUT,
    &service_bus::TRIGGER,
    &service_bus::OUTPUT,
    &stream::EVENT_HUB_TRIGGER,
    &stream::EVENT_HUB_OUTPUT,
    &stream::KAFKA_TRIGGER,
    &stream::KAFKA_OUTPUT,
    &http::TRIGGER,
    &http::OUTPUT,
    &cosmos_db::TRIGGER,
    &timer::TRIGGER,
    &rabbitmq::TRIGGER,
    &rabbitmq::OUTPUT,
];

/// The descriptor of one binding `type`.
pub trait BindingKind: Send + Sync + 'static {
    /// The `function.json` type (`rabbitMQTrigger`).
    fn type_name(&self) -> &'static str;

    /// Whether it is a trigger (direction `in`) rather than an output (`out`).
    fn is_trigger(&self) -> bool;

    /// Whether something in Shoal runs this trigger. A trigger that does not is accepted and
    /// stored as written so the projects that have one import whole, but gets no listener and
    /// no instances (a backlog nobody reads is no reason to hold one), and diagnostics say so;
    /// its listener, when it comes, turns this on.
    fn runs(&self) -> bool {
        true
    }

    /// The JSON Schema of its properties, generated from the type [`BindingKind::check`] reads
    /// them into (`PropertiesSchema::of::<TriggerBinding>()`), for clients that build a binding
    /// field by field (`bindings::catalog`).
    fn properties(&self) -> PropertiesSchema;

    /// Reads the binding's properties (all but `type` and `direction`) under `prefix`, pushing
    /// every problem; the binding's `name` when they are usable.
    fn check(
        &self,
        properties: &Map<String, Value>,
        prefix: &str,
        problems: &mut Problems,
    ) -> Option<BindingName>;

    /// The property naming its connection's app setting and its value as written (for the
    /// checks every connection setting name gets).
    fn connection<'a>(
        &self,
        _properties: &'a Map<String, Value>,
    ) -> Option<(&'static str, &'a str)> {
        None
    }

    /// A trigger's binding data (the names its output bindings' expressions may use), as the
    /// Azure extension's binding data contract has them.
    fn binding_data(&self) -> &'static [(&'static str, DataShape)] {
        &[]
    }

    /// Whether a trigger written as `properties` runs on batches: its binding data are then
    /// arrays, which cannot be part of an output's name.
    fn batched(&self, _properties: &Map<String, Value>) -> bool {
        false
    }

    /// Whether a trigger's value can be a JSON object whose properties are binding data too.
    fn json_body(&self, _properties: &Map<String, Value>) -> bool {
        false
    }

    /// An output's target names that may hold binding expressions, by property.
    fn output_names<'a>(
        &self,
        _properties: &'a Map<String, Value>,
    ) -> Vec<(&'static str, &'a str)> {
        Vec::new()
    }

    /// Where a trigger reads from, given its `host.json` section; None for an output.
    fn source(
        &self,
        _binding: &KindBinding,
        _settings: &BTreeMap<String, String>,
        _section: Option<&Value>,
    ) -> Option<Result<Source, String>> {
        None
    }

    /// The kind of Azure connection its connection setting names, for a kind that signs in
    /// as Azure's SDKs do (a connection string, or an identity-based connection's settings
    /// under the prefix): diagnostics resolve it and say how it signs in.
    fn azure_connection(&self) -> Option<ConnectionKind> {
        None
    }

    /// The backlog a trigger scales on, read from its source by the scheduler.
    fn metric(&self) -> MetricKind {
        MetricKind::QueueLength
    }

    /// How much of its [`BindingKind::metric`] one instance is meant to take, given its
    /// `host.json` section; None for an output or a trigger that does not scale on a backlog.
    fn per_instance(&self, _binding: &KindBinding, _section: Option<&Value>) -> Option<u32> {
        None
    }

    /// For a trigger whose [`BindingKind::per_instance`] is what one listener holds
    /// unacknowledged at once and which a worker lowers to what its own limit lets a listener
    /// hold (RabbitMQ's `prefetchCount`, its `basic.qos`): the setting's name and what one
    /// instance takes of `per_instance` on a worker whose listeners hold at most `hold_limit`
    /// messages — the figure the worker's listener uses. None (the default) for a kind whose
    /// target no worker lowers (a Storage queue's `batchSize`, Service Bus's
    /// `maxConcurrentCalls`: their listeners take them as written).
    fn held_per_instance(
        &self,
        _per_instance: u32,
        _hold_limit: u16,
    ) -> Option<(&'static str, u32)> {
        None
    }

    /// Whether a trigger is called by a client that waits for the handler's answer
    /// (`httpTrigger`): the caller sees a failure and decides what to do, so a retry policy, a
    /// circuit breaker and a concurrency cap have nothing to act on, and no listener runs it.
    fn answers_its_caller(&self) -> bool {
        false
    }

    /// Whether a running app needs an instance for this trigger whatever its backlog: a
    /// trigger whose listener starts the work itself (a timer, whose occurrences come whether
    /// or not anything is queued) keeps its app at one instance at least.
    fn needs_an_instance(&self) -> bool {
        false
    }

    /// Whether a trigger's finally failed messages go to its function's `deadLetter` target (a
    /// stream's events, whose checkpoint moves past them), rather than somewhere of its own.
    fn uses_dead_letter(&self) -> bool {
        false
    }

    /// Where a trigger's finally failed messages go, in the words of the error that refuses a
    /// `deadLetter` setting on its function.
    fn failed_messages(&self) -> &'static str {
        "nowhere: the output fails its invocation"
    }

    /// Its `host.json` section under `extensions`, if it has one.
    fn host_section(&self) -> Option<&'static HostSection> {
        None
    }

    /// What diagnostics say of the binding beyond its connection, as of `now`: a finding per
    /// subject.
    fn diagnose(
        &self,
        _binding: &KindBinding,
        _settings: &BTreeMap<String, String>,
        _section: Option<&Value>,
        _now: DateTime<Utc>,
    ) -> Vec<(&'static str, Finding)> {
        Vec::new()
    }
}

/// What diagnostics say of one subject of a binding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    Ok(String),
    /// Works, but not as the tenant most likely intends.
    Warning(String),
    Error(String),
}

impl From<Result<String, String>> for Finding {
    fn from(outcome: Result<String, String>) -> Finding {
        match outcome {
            Ok(detail) => Finding::Ok(detail),
            Err(problem) => Finding::Error(problem),
        }
    }
}

/// How the payload is handed to the handler: Azure's `dataType` values, shared by every kind
/// that reads one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DataType {
    String,
    Binary,
    Stream,
}

impl DataType {
    /// As written in `function.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            DataType::String => "string",
            DataType::Binary => "binary",
            DataType::Stream => "stream",
        }
    }
}

/// Whether a trigger delivers one message per invocation or a batch (Azure's `cardinality`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Cardinality {
    One,
    Many,
}

/// The backlog a trigger's scaler reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum MetricKind {
    /// Approximate message count of a storage queue, or the messages ready in a broker's queue.
    QueueLength,
    /// Active message count of a Service Bus queue or subscription — also for session-enabled
    /// triggers, as Azure's `ServiceBusTargetScaler` does (the entity reports messages, not
    /// sessions).
    ActiveMessages,
    /// Active sessions of a Service Bus entity, for a source that can count them. The scale
    /// targets do not produce it (see [`MetricKind::ActiveMessages`]).
    ActiveSessions,
    /// Unprocessed events summed over an event hub's partitions.
    UnprocessedEvents,
    /// Total consumer-group lag of a Kafka topic.
    ConsumerLag,
    /// Changes not yet read from a Cosmos DB change feed.
    PendingChanges,
}

impl MetricKind {
    /// The camelCase name used in JSON and in decision reasons.
    pub fn as_str(self) -> &'static str {
        match self {
            MetricKind::QueueLength => "queueLength",
            MetricKind::ActiveMessages => "activeMessages",
            MetricKind::ActiveSessions => "activeSessions",
            MetricKind::UnprocessedEvents => "unprocessedEvents",
            MetricKind::ConsumerLag => "consumerLag",
            MetricKind::PendingChanges => "pendingChanges",
        }
    }
}

/// Pushes a problem at `path` unless `setting` is empty or a valid app setting name: what every
/// property naming a connection's setting is checked against.
pub fn check_setting_name(problems: &mut Problems, path: &str, setting: &str) {
    if setting.is_empty() {
        return;
    }
    if let Err(message) = SettingName::parse(setting) {
        problems.push(path, format!("must name an app setting: {message}"));
    }
}

/// A kind's properties schema and the schemas it refers to.
pub struct PropertiesSchema {
    pub schema: RefOr<Schema>,
    pub components: Vec<(String, RefOr<Schema>)>,
}

impl PropertiesSchema {
    /// The schema of `T`, the type a binding's properties are read into.
    pub fn of<T: ToSchema>() -> PropertiesSchema {
        let mut components = Vec::new();
        T::schemas(&mut components);
        PropertiesSchema {
            schema: T::schema(),
            components,
        }
    }
}

/// What a binding data name holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataShape {
    Text,
    DateTime,
    /// An object: dotted paths reach its properties (`ApplicationProperties.region`).
    Object,
    Array,
}

/// Where a trigger reads from (`crate::trigger_source::TriggerSource`, as the other layers
/// name it).
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// A queue of a storage account, reached through an Azure connection.
    StorageQueue {
        connection: ConnectionSpec,
        queue: String,
    },
    /// A queue, or a topic's subscription, of a Service Bus namespace.
    ServiceBus {
        connection: ConnectionSpec,
        entity: service_bus::EntityPath,
    },
    /// A consumer group on a topic (`kafkaTrigger`, or `eventHubTrigger` through the event
    /// hub's Kafka endpoint).
    Stream(stream::source::StreamSource),
    /// An entity on a broker reached by URI.
    Broker(BrokerSource),
}

/// What a trigger of a kind here reads: an entity on a broker reached by a URI kept in an app
/// setting (`trigger_source::TriggerSource::Broker`).
#[derive(Clone, PartialEq, Eq)]
pub struct BrokerSource {
    /// The trigger's `type` (`rabbitMQTrigger`): each layer's part of the kind is found by it.
    pub kind: &'static str,
    /// The app setting the URI comes from.
    pub setting: String,
    /// The URI, credentials included: a secret, never shown (see [`BrokerSource::address`]).
    pub uri: String,
    /// What the entity is called on this broker (`queue`).
    pub entity_kind: &'static str,
    /// The entity read (a queue's name).
    pub entity: String,
}

impl BrokerSource {
    /// The URI without its credentials: `amqp://broker.example:5672/orders`.
    pub fn address(&self) -> String {
        without_credentials(&self.uri)
    }
}

impl fmt::Debug for BrokerSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BrokerSource")
            .field("kind", &self.kind)
            .field("setting", &self.setting)
            .field("address", &self.address())
            .field("entity", &self.entity)
            .finish()
    }
}

/// `uri` without user, password or query (which may carry credentials), for logs and
/// messages; a URI that does not parse is not shown at all.
pub fn without_credentials(uri: &str) -> String {
    match url::Url::parse(uri) {
        Ok(mut url) => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.set_query(None);
            url.to_string()
        }
        Err(_) => "(a URI that does not parse)".to_owned(),
    }
}

/// A kind's section of `host.json`'s `extensions`: `read` checks what was written (pushing
/// problems under `path`) and returns it with every default filled in, which is what is kept
/// in [`crate::host_config::Extensions::kinds`]. A section without `read` is one
/// `crate::host_config` reads into a typed section of its own (`queues`, whose defaults depend
/// on where the worker runs); the kind is handed it as JSON all the same
/// (`crate::host_config::Extensions::section_of`).
pub struct HostSection {
    pub name: &'static str,
    pub read: Option<SectionReader>,
}

/// The kind whose `type` is `type_name`.
pub fn find(type_name: &str) -> Option<&'static dyn BindingKind> {
    KINDS.iter().copied().find(|k| k.type_name() == type_name)
}

/// Every kind in the table, in its order.
pub fn all() -> impl Iterator<Item = &'static dyn BindingKind> {
    KINDS.iter().copied()
}

/// Every kind's `host.json` section read here, once (a trigger and its output share one), with
/// its reader.
pub fn host_sections() -> impl Iterator<Item = (&'static str, SectionReader)> {
    let mut seen = Vec::new();
    all()
        .filter_map(|k| k.host_section())
        .filter_map(|section| Some((section.name, section.read?)))
        .filter(move |(name, _)| {
            let first = !seen.contains(name);
            seen.push(*name);
            first
        })
}

/// Reads a kind's `host.json` section (see [`HostSection`]).
pub type SectionReader = fn(Option<&Value>, &str, &mut Problems) -> Value;

/// A binding of a kind in the table: its descriptor, its name and its properties as written
/// (checked by the kind when it was read).
#[derive(Clone)]
pub struct KindBinding {
    kind: &'static dyn BindingKind,
    name: BindingName,
    properties: Map<String, Value>,
}

impl KindBinding {
    /// Reads `properties` as a binding of `kind`; None with the problems pushed.
    pub(crate) fn read(
        kind: &'static dyn BindingKind,
        properties: Map<String, Value>,
        prefix: &str,
        problems: &mut Problems,
    ) -> Option<KindBinding> {
        let name = kind.check(&properties, prefix, problems)?;
        Some(KindBinding {
            kind,
            name,
            properties,
        })
    }

    pub fn kind(&self) -> &'static dyn BindingKind {
        self.kind
    }

    pub fn name(&self) -> &BindingName {
        &self.name
    }

    /// The properties as written, `name` among them.
    pub fn properties(&self) -> &Map<String, Value> {
        &self.properties
    }

    /// The properties read into the kind's own type. They were checked when the binding was
    /// read, so this fails only if that type changed since; the error says so.
    pub fn typed<T: DeserializeOwned>(&self) -> Result<T, String> {
        from_json_object(&self.properties, "")
            .map_err(|e| format!("{} binding {}: {e}", self.kind.type_name(), self.name))
    }
}

impl PartialEq for KindBinding {
    fn eq(&self, other: &Self) -> bool {
        self.kind.type_name() == other.kind.type_name()
            && self.name == other.name
            && self.properties == other.properties
    }
}

impl fmt::Debug for KindBinding {
    /// The properties are settings' names and entity names, never a secret's value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KindBinding")
            .field("type", &self.kind.type_name())
            .field("properties", &self.properties)
            .finish()
    }
}

/// `binding`'s properties read into `T` when it is of type `type_name`; None for another type.
pub fn typed_if<T: DeserializeOwned>(
    binding: &KindBinding,
    type_name: &str,
) -> Option<Result<T, String>> {
    (binding.kind().type_name() == type_name).then(|| binding.typed())
}

/// `field` and its text, when the binding wrote it as text: a connection's setting, or an
/// output's one target name.
pub fn written_text<'a>(
    properties: &'a Map<String, Value>,
    field: &'static str,
) -> Option<(&'static str, &'a str)> {
    Some((field, properties.get(field)?.as_str()?))
}

/// Whether a trigger hands its handler text (`dataType` `string` or absent), which a JSON body
/// may be, rather than bytes (`binary`, `stream`).
pub fn reads_text(properties: &Map<String, Value>) -> bool {
    matches!(
        properties.get("dataType").and_then(Value::as_str),
        None | Some("string")
    )
}

/// Reads `properties` into the kind's type `T`, pushing the first problem serde finds.
pub fn read_typed<T: DeserializeOwned>(
    properties: &Map<String, Value>,
    prefix: &str,
    problems: &mut Problems,
) -> Option<T> {
    from_json_object(properties, prefix)
        .map_err(|err| problems.absorb(err))
        .ok()
}

/// A section read as written into `T` (its defaults filled in), written back as JSON; the
/// defaults when it cannot be read (the problem is pushed).
pub fn read_section<T: DeserializeOwned + serde::Serialize + Default>(
    written: Option<&Value>,
    path: &str,
    problems: &mut Problems,
) -> Value {
    let section: T = match written {
        None | Some(Value::Null) => T::default(),
        Some(value @ Value::Object(_)) => from_json(value.clone(), path)
            .map_err(|err| problems.absorb(err))
            .unwrap_or_default(),
        Some(_) => {
            problems.push(path, "expected an object");
            T::default()
        }
    };
    serde_json::to_value(section).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_own_type_name() {
        let mut names: Vec<&str> = all().map(|k| k.type_name()).collect();
        let count = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), count, "a type name appears twice");
    }

    #[test]
    fn host_sections_have_distinct_names() {
        let mut names: Vec<&str> = host_sections().map(|(name, _)| name).collect();
        let count = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), count);
    }
}
