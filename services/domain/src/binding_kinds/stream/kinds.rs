//! The descriptors of `kafkaTrigger`, `kafka`, `eventHubTrigger` and `eventHub` in
//! `binding_kinds`.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::checks::{check_consumer_group, check_entity_name, check_kafka};
use super::source::{event_hubs_source, kafka_source};
use super::{
    DEFAULT_KAFKA_LAG_THRESHOLD, EVENT_HUB_OUTPUT_TYPE, EVENT_HUB_TRIGGER_TYPE,
    EventHubOutputBinding, EventHubTriggerBinding, HOST_SECTION, KAFKA_OUTPUT_TYPE,
    KAFKA_TRIGGER_TYPE, KafkaOutputBinding, KafkaTriggerBinding, client,
};
use crate::binding_kinds::{
    BindingKind, DataShape, Finding, HostSection, KindBinding, MetricKind, PropertiesSchema,
    Source, read_typed, reads_text, written_text,
};
use crate::names::BindingName;
use crate::validation::{Problems, join_path};

pub struct KafkaTrigger;
pub struct KafkaOutput;
pub struct EventHubTrigger;
pub struct EventHubOutput;

pub const KAFKA_TRIGGER: KafkaTrigger = KafkaTrigger;
pub const KAFKA_OUTPUT: KafkaOutput = KafkaOutput;
pub const EVENT_HUB_TRIGGER: EventHubTrigger = EventHubTrigger;
pub const EVENT_HUB_OUTPUT: EventHubOutput = EventHubOutput;

/// Read by `crate::host_config` into its typed `eventHubs` section (see [`HostSection`]).
static SECTION: HostSection = HostSection {
    name: HOST_SECTION,
    read: None,
};

/// Azure/azure-functions-kafka-extension, `KafkaTriggerBindingStrategy.cs` (`Key`,
/// `Partition`, `Topic`, `Timestamp`, `Offset`, `Headers`, …), plus `Value`, which the script
/// host takes from the `KafkaEventData` JSON a string-bound function receives (see
/// `crate::bindings`' trigger data).
const KAFKA_DATA: &[(&str, DataShape)] = &[
    ("Key", DataShape::Text),
    ("Partition", DataShape::Text),
    ("Topic", DataShape::Text),
    ("Timestamp", DataShape::DateTime),
    ("Offset", DataShape::Text),
    ("Headers", DataShape::Array),
    ("LeaderEpoch", DataShape::Text),
    ("IsPartitionEOF", DataShape::Text),
];

/// azure-sdk-for-net `Microsoft.Azure.WebJobs.Extensions.EventHubs`,
/// `src/Triggers/EventHubTriggerBindingStrategy.cs` (`GetBindingContract`).
const EVENT_HUB_DATA: &[(&str, DataShape)] = &[
    ("PartitionContext", DataShape::Object),
    ("TriggerPartitionContext", DataShape::Object),
    ("PartitionKey", DataShape::Text),
    ("Offset", DataShape::Text),
    ("OffsetString", DataShape::Text),
    ("SequenceNumber", DataShape::Text),
    ("EnqueuedTimeUtc", DataShape::DateTime),
    ("Properties", DataShape::Object),
    ("SystemProperties", DataShape::Object),
];

impl BindingKind for KafkaTrigger {
    fn type_name(&self) -> &'static str {
        KAFKA_TRIGGER_TYPE
    }

    fn is_trigger(&self) -> bool {
        true
    }

    fn properties(&self) -> PropertiesSchema {
        PropertiesSchema::of::<KafkaTriggerBinding>()
    }

    fn check(
        &self,
        properties: &Map<String, Value>,
        prefix: &str,
        problems: &mut Problems,
    ) -> Option<BindingName> {
        let b: KafkaTriggerBinding = read_typed(properties, prefix, problems)?;
        check_kafka(problems, prefix, &b.client(), false);
        if let Some(group) = &b.consumer_group {
            check_consumer_group(problems, &join_path(prefix, "consumerGroup"), group);
        }
        if b.lag_threshold == Some(0) {
            problems.push(join_path(prefix, "lagThreshold"), "must be at least 1");
        }
        Some(b.name)
    }

    fn binding_data(&self) -> &'static [(&'static str, DataShape)] {
        KAFKA_DATA
    }

    fn batched(&self, properties: &Map<String, Value>) -> bool {
        many(properties)
    }

    /// The value a string-bound Kafka function receives is the `KafkaEventData` JSON: its
    /// properties are the metadata and `Value`, never the event's own JSON.
    fn json_body(&self, _properties: &Map<String, Value>) -> bool {
        false
    }

    fn source(
        &self,
        binding: &KindBinding,
        settings: &BTreeMap<String, String>,
        _section: Option<&Value>,
    ) -> Option<Result<Source, String>> {
        let source = binding.typed::<KafkaTriggerBinding>();
        Some(source.and_then(|b| kafka_source(&b, settings).map(Source::Stream)))
    }

    fn metric(&self) -> MetricKind {
        MetricKind::ConsumerLag
    }

    /// `lagThreshold`, Azure's default 1000.
    fn per_instance(&self, binding: &KindBinding, _section: Option<&Value>) -> Option<u32> {
        let lag = binding
            .properties()
            .get("lagThreshold")
            .and_then(Value::as_u64)
            .map_or(DEFAULT_KAFKA_LAG_THRESHOLD, |t| {
                u32::try_from(t).unwrap_or(u32::MAX)
            });
        Some(lag)
    }

    fn uses_dead_letter(&self) -> bool {
        true
    }

    fn diagnose(
        &self,
        binding: &KindBinding,
        settings: &BTreeMap<String, String>,
        section: Option<&Value>,
        _now: DateTime<Utc>,
    ) -> Vec<(&'static str, Finding)> {
        reads(self.source(binding, settings, section))
    }
}

impl BindingKind for KafkaOutput {
    fn type_name(&self) -> &'static str {
        KAFKA_OUTPUT_TYPE
    }

    fn is_trigger(&self) -> bool {
        false
    }

    fn properties(&self) -> PropertiesSchema {
        PropertiesSchema::of::<KafkaOutputBinding>()
    }

    fn check(
        &self,
        properties: &Map<String, Value>,
        prefix: &str,
        problems: &mut Problems,
    ) -> Option<BindingName> {
        let b: KafkaOutputBinding = read_typed(properties, prefix, problems)?;
        check_kafka(problems, prefix, &b.client(), true);
        Some(b.name)
    }

    fn output_names<'a>(&self, properties: &'a Map<String, Value>) -> Vec<(&'static str, &'a str)> {
        written_text(properties, "topic").into_iter().collect()
    }

    fn diagnose(
        &self,
        binding: &KindBinding,
        settings: &BTreeMap<String, String>,
        _section: Option<&Value>,
        _now: DateTime<Utc>,
    ) -> Vec<(&'static str, Finding)> {
        writes(binding, settings)
    }
}

impl BindingKind for EventHubTrigger {
    fn type_name(&self) -> &'static str {
        EVENT_HUB_TRIGGER_TYPE
    }

    fn is_trigger(&self) -> bool {
        true
    }

    fn properties(&self) -> PropertiesSchema {
        PropertiesSchema::of::<EventHubTriggerBinding>()
    }

    fn check(
        &self,
        properties: &Map<String, Value>,
        prefix: &str,
        problems: &mut Problems,
    ) -> Option<BindingName> {
        let b: EventHubTriggerBinding = read_typed(properties, prefix, problems)?;
        if let Some(name) = &b.event_hub_name {
            check_entity_name(
                problems,
                &join_path(prefix, "eventHubName"),
                name,
                256,
                false,
            );
        }
        if let Some(group) = &b.consumer_group {
            check_consumer_group(problems, &join_path(prefix, "consumerGroup"), group);
        }
        Some(b.name)
    }

    fn connection<'a>(
        &self,
        properties: &'a Map<String, Value>,
    ) -> Option<(&'static str, &'a str)> {
        written_text(properties, "connection")
    }

    fn binding_data(&self) -> &'static [(&'static str, DataShape)] {
        EVENT_HUB_DATA
    }

    fn batched(&self, properties: &Map<String, Value>) -> bool {
        many(properties)
    }

    fn json_body(&self, properties: &Map<String, Value>) -> bool {
        reads_text(properties)
    }

    fn source(
        &self,
        binding: &KindBinding,
        settings: &BTreeMap<String, String>,
        section: Option<&Value>,
    ) -> Option<Result<Source, String>> {
        let source = binding.typed::<EventHubTriggerBinding>();
        Some(source.and_then(|b| event_hubs_source(&b, settings, section).map(Source::Stream)))
    }

    fn metric(&self) -> MetricKind {
        MetricKind::UnprocessedEvents
    }

    /// `targetUnprocessedEventThreshold` when it is set and positive, else
    /// `maxEventBatchSize`, as Azure's `EventHubsTargetScaler` does.
    fn per_instance(&self, _binding: &KindBinding, section: Option<&Value>) -> Option<u32> {
        let number = |field: &str| section?.get(field)?.as_u64().filter(|n| *n > 0);
        let per = number("targetUnprocessedEventThreshold")
            .or_else(|| number("maxEventBatchSize"))
            .unwrap_or(DEFAULT_MAX_EVENT_BATCH_SIZE);
        Some(u32::try_from(per).unwrap_or(u32::MAX))
    }

    fn uses_dead_letter(&self) -> bool {
        true
    }

    fn host_section(&self) -> Option<&'static HostSection> {
        Some(&SECTION)
    }

    fn diagnose(
        &self,
        binding: &KindBinding,
        settings: &BTreeMap<String, String>,
        section: Option<&Value>,
        _now: DateTime<Utc>,
    ) -> Vec<(&'static str, Finding)> {
        reads(self.source(binding, settings, section))
    }
}

impl BindingKind for EventHubOutput {
    fn type_name(&self) -> &'static str {
        EVENT_HUB_OUTPUT_TYPE
    }

    fn is_trigger(&self) -> bool {
        false
    }

    fn properties(&self) -> PropertiesSchema {
        PropertiesSchema::of::<EventHubOutputBinding>()
    }

    fn check(
        &self,
        properties: &Map<String, Value>,
        prefix: &str,
        problems: &mut Problems,
    ) -> Option<BindingName> {
        let b: EventHubOutputBinding = read_typed(properties, prefix, problems)?;
        if let Some(name) = &b.event_hub_name {
            let path = join_path(prefix, "eventHubName");
            if name.contains(['{', '}']) {
                // Azure binds `EventHubAttribute.EventHubName` as written: it is not
                // `[AutoResolve]` (azure-sdk-for-net `Microsoft.Azure.WebJobs.Extensions.EventHubs`,
                // `src/EventHubAttribute.cs`, `Config/EventHubExtensionConfigProvider.cs`).
                problems.push(
                    path,
                    "binding expressions are not resolved in an eventHub output's eventHubName (Azure Functions binds it as written); name the event hub, or use a %Setting% reference",
                );
            } else {
                check_entity_name(problems, &path, name, 256, false);
            }
        }
        Some(b.name)
    }

    fn connection<'a>(
        &self,
        properties: &'a Map<String, Value>,
    ) -> Option<(&'static str, &'a str)> {
        written_text(properties, "connection")
    }

    fn diagnose(
        &self,
        binding: &KindBinding,
        settings: &BTreeMap<String, String>,
        _section: Option<&Value>,
        _now: DateTime<Utc>,
    ) -> Vec<(&'static str, Finding)> {
        writes(binding, settings)
    }
}

/// `maxEventBatchSize`'s default, should a section come without it.
const DEFAULT_MAX_EVENT_BATCH_SIZE: u64 = 100;

fn many(properties: &Map<String, Value>) -> bool {
    properties.get("cardinality").and_then(Value::as_str) == Some("many")
}

/// A stream trigger resolves its brokers, topic and group (or says what is missing), exactly
/// as its listener will.
fn reads(source: Option<Result<Source, String>>) -> Vec<(&'static str, Finding)> {
    let described = match source {
        Some(Ok(Source::Stream(source))) => Ok(format!("reads {}", source.describe())),
        Some(Err(problem)) => Err(problem),
        _ => return Vec::new(),
    };
    vec![("stream", described.into())]
}

/// A stream output resolves its brokers and topic, exactly as its writer will.
fn writes(
    binding: &KindBinding,
    settings: &BTreeMap<String, String>,
) -> Vec<(&'static str, Finding)> {
    let Some(target) = client(binding, settings) else {
        return Vec::new();
    };
    let described = target.map(|target| {
        let servers = target
            .property("bootstrap.servers")
            .unwrap_or("(no brokers)");
        format!("writes to {} on {servers}", target.topic)
    });
    vec![("stream", described.into())]
}
