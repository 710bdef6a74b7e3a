//! The descriptors of `serviceBusTrigger` and `serviceBus` in `binding_kinds`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{
    HOST_SECTION, OUTPUT_TYPE, ServiceBusOutputBinding, ServiceBusTriggerBinding, TRIGGER_TYPE,
    batched, trigger_entity,
};
use crate::binding_expressions::output_name;
use crate::binding_kinds::{
    BindingKind, Cardinality, DataShape, HostSection, KindBinding, MetricKind, PropertiesSchema,
    Source, read_typed, reads_text, written_text,
};
use crate::connection::{ConnectionKind, resolve as resolve_connection};
use crate::names::BindingName;
use crate::service_bus_entity::path::check_binding_entity;
use crate::service_bus_entity::settings::{self, EntityContext};
use crate::validation::{Problems, join_path};

pub struct Trigger;
pub struct Output;

pub const TRIGGER: Trigger = Trigger;
pub const OUTPUT: Output = Output;

/// Read by `crate::host_config` into its typed `serviceBus` section (see [`HostSection`]).
static SECTION: HostSection = HostSection {
    name: HOST_SECTION,
    read: None,
};

/// The defaults of `maxMessageBatchSize`, `maxConcurrentSessions` and `maxConcurrentCalls`,
/// should a section come without them.
const DEFAULT_MAX_MESSAGE_BATCH_SIZE: u64 = 1000;
const DEFAULT_MAX_CONCURRENT_SESSIONS: u64 = 8;
const DEFAULT_MAX_CONCURRENT_CALLS: u64 = 16;

/// The binding data contract of azure-sdk-for-net `Microsoft.Azure.WebJobs.Extensions.ServiceBus`,
/// `src/Triggers/ServiceBusTriggerBindingStrategy.cs` (`GetBindingContract`).
const BINDING_DATA: &[(&str, DataShape)] = &[
    ("DeliveryCount", DataShape::Text),
    ("DeadLetterSource", DataShape::Text),
    ("LockToken", DataShape::Text),
    ("ExpiresAtUtc", DataShape::DateTime),
    ("EnqueuedTimeUtc", DataShape::DateTime),
    ("MessageId", DataShape::Text),
    ("ContentType", DataShape::Text),
    ("ReplyTo", DataShape::Text),
    ("SequenceNumber", DataShape::Text),
    ("To", DataShape::Text),
    ("Label", DataShape::Text),
    ("Subject", DataShape::Text),
    ("CorrelationId", DataShape::Text),
    ("ApplicationProperties", DataShape::Object),
    ("UserProperties", DataShape::Object),
    ("SessionId", DataShape::Text),
    ("ReplyToSessionId", DataShape::Text),
    ("PartitionKey", DataShape::Text),
    ("TransactionPartitionKey", DataShape::Text),
];

impl BindingKind for Trigger {
    fn type_name(&self) -> &'static str {
        TRIGGER_TYPE
    }

    fn is_trigger(&self) -> bool {
        true
    }

    fn properties(&self) -> PropertiesSchema {
        PropertiesSchema::of::<ServiceBusTriggerBinding>()
    }

    fn check(
        &self,
        properties: &Map<String, Value>,
        prefix: &str,
        problems: &mut Problems,
    ) -> Option<BindingName> {
        let b: ServiceBusTriggerBinding = read_typed(properties, prefix, problems)?;
        check_entity(
            problems,
            prefix,
            &b.queue_name,
            &b.topic_name,
            Some(&b.subscription_name),
        );
        check_entity_settings(problems, prefix, &b);
        if let Some(c) = b.cardinality
            && properties.contains_key("isBatched")
            && (c == Cardinality::Many) != b.is_batched
        {
            problems.push(join_path(prefix, "cardinality"), "contradicts isBatched");
        }
        Some(b.name)
    }

    fn connection<'a>(
        &self,
        properties: &'a Map<String, Value>,
    ) -> Option<(&'static str, &'a str)> {
        written_text(properties, "connection")
    }

    fn azure_connection(&self) -> Option<ConnectionKind> {
        Some(ConnectionKind::ServiceBus)
    }

    fn binding_data(&self) -> &'static [(&'static str, DataShape)] {
        BINDING_DATA
    }

    fn batched(&self, properties: &Map<String, Value>) -> bool {
        batched(properties)
    }

    fn json_body(&self, properties: &Map<String, Value>) -> bool {
        reads_text(properties)
    }

    fn source(
        &self,
        binding: &KindBinding,
        settings: &BTreeMap<String, String>,
        _section: Option<&Value>,
    ) -> Option<Result<Source, String>> {
        Some(
            binding
                .typed::<ServiceBusTriggerBinding>()
                .and_then(|b| trigger_source(&b, settings)),
        )
    }

    /// Also for session-enabled triggers: the entity reports messages, not sessions, as
    /// Azure's `ServiceBusTargetScaler` reads it.
    fn metric(&self) -> MetricKind {
        MetricKind::ActiveMessages
    }

    /// As Azure's `ServiceBusTargetScaler`: batched (`isBatched` or `cardinality: many`) uses
    /// `maxMessageBatchSize` even when sessions are on, then sessions use
    /// `maxConcurrentSessions`, otherwise `maxConcurrentCalls`.
    fn per_instance(&self, binding: &KindBinding, section: Option<&Value>) -> Option<u32> {
        let number = |field: &str, default: u64| {
            section
                .and_then(|s| s.get(field))
                .and_then(Value::as_u64)
                .unwrap_or(default)
        };
        let properties = binding.properties();
        let per = if batched(properties) {
            number("maxMessageBatchSize", DEFAULT_MAX_MESSAGE_BATCH_SIZE)
        } else if properties.get("isSessionsEnabled") == Some(&Value::Bool(true)) {
            number("maxConcurrentSessions", DEFAULT_MAX_CONCURRENT_SESSIONS)
        } else {
            number("maxConcurrentCalls", DEFAULT_MAX_CONCURRENT_CALLS)
        };
        Some(u32::try_from(per).unwrap_or(u32::MAX))
    }

    fn failed_messages(&self) -> &'static str {
        "the entity's dead-letter queue"
    }

    fn host_section(&self) -> Option<&'static HostSection> {
        Some(&SECTION)
    }
}

impl BindingKind for Output {
    fn type_name(&self) -> &'static str {
        OUTPUT_TYPE
    }

    fn is_trigger(&self) -> bool {
        false
    }

    fn properties(&self) -> PropertiesSchema {
        PropertiesSchema::of::<ServiceBusOutputBinding>()
    }

    fn check(
        &self,
        properties: &Map<String, Value>,
        prefix: &str,
        problems: &mut Problems,
    ) -> Option<BindingName> {
        let b: ServiceBusOutputBinding = read_typed(properties, prefix, problems)?;
        // Names with expressions are checked as templates here and as names once resolved.
        let mut literal = |field: &str, name: &Option<String>| match name.as_deref() {
            Some(written) => match output_name(
                written,
                service_bus_char,
                "a Service Bus queue or topic name",
            ) {
                Ok(Some(_)) => Some("templated".to_owned()),
                Ok(None) => Some(written.to_owned()),
                Err(message) => {
                    problems.push(join_path(prefix, field), message);
                    Some("refused".to_owned())
                }
            },
            None => None,
        };
        let queue = literal("queueName", &b.queue_name);
        let topic = literal("topicName", &b.topic_name);
        check_entity(problems, prefix, &queue, &topic, None);
        Some(b.name)
    }

    fn connection<'a>(
        &self,
        properties: &'a Map<String, Value>,
    ) -> Option<(&'static str, &'a str)> {
        written_text(properties, "connection")
    }

    fn azure_connection(&self) -> Option<ConnectionKind> {
        Some(ConnectionKind::ServiceBus)
    }

    fn output_names<'a>(&self, properties: &'a Map<String, Value>) -> Vec<(&'static str, &'a str)> {
        ["queueName", "topicName"]
            .into_iter()
            .filter_map(|field| written_text(properties, field))
            .collect()
    }

    fn host_section(&self) -> Option<&'static HostSection> {
        Some(&SECTION)
    }
}

/// The queue or subscription a trigger listens to, on the namespace its connection names.
pub fn trigger_source(
    binding: &ServiceBusTriggerBinding,
    settings: &BTreeMap<String, String>,
) -> Result<Source, String> {
    let connection = resolve_connection(
        ConnectionKind::ServiceBus,
        binding.connection.as_deref(),
        settings,
    )
    .map_err(|e| e.to_string())?;
    Ok(Source::ServiceBus {
        connection,
        entity: trigger_entity(binding, settings)?,
    })
}

/// What Service Bus queue and topic paths are made of (see `service_bus_entity::path`).
fn service_bus_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '/')
}

/// Exactly one of `queueName` or `topicName` (+ `subscriptionName` for triggers), each named as
/// the service allows (see [`check_binding_entity`]).
fn check_entity(
    problems: &mut Problems,
    prefix: &str,
    queue: &Option<String>,
    topic: &Option<String>,
    subscription: Option<&Option<String>>,
) {
    let trigger = subscription.is_some();
    let subscription = subscription.and_then(Option::as_deref);
    if let Err(found) =
        check_binding_entity(queue.as_deref(), topic.as_deref(), subscription, trigger)
    {
        for (field, message) in found {
            problems.push(join_path(prefix, field), message);
        }
    }
}

/// The trigger's `entity` settings, under `<prefix>.entity`.
fn check_entity_settings(
    problems: &mut Problems,
    prefix: &str,
    binding: &ServiceBusTriggerBinding,
) {
    let Some(entity) = &binding.entity else {
        return;
    };
    let context = EntityContext {
        topic: binding.topic_name.is_some(),
        sessions: binding.is_sessions_enabled,
    };
    let entity_path = join_path(prefix, "entity");
    for (field, message) in settings::check(entity, context) {
        problems.push(join_path(&entity_path, field), message);
    }
}
