//! The descriptors of `queueTrigger` and `queue` in `binding_kinds`.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::{
    HOST_SECTION, NoPoisonQueue, OUTPUT_TYPE, QueueOutputBinding, QueueTriggerBinding,
    TRIGGER_TYPE, poison_queue_name, trigger_queue_name, trigger_source,
};
use crate::binding_kinds::{
    BindingKind, DataShape, Finding, HostSection, KindBinding, PropertiesSchema, Source,
    read_typed, reads_text, written_text,
};
use crate::connection::ConnectionKind;
use crate::names::{BindingName, QueueName};
use crate::validation::Problems;

pub struct Trigger;
pub struct Output;

pub const TRIGGER: Trigger = Trigger;
pub const OUTPUT: Output = Output;

/// Read by `crate::host_config` into its typed `queues` section (see [`HostSection`]).
static SECTION: HostSection = HostSection {
    name: HOST_SECTION,
    read: None,
};

/// `batchSize`'s default, should a section come without it.
const DEFAULT_BATCH_SIZE: u64 = 16;
/// `maxDequeueCount`'s default, likewise.
const DEFAULT_MAX_DEQUEUE_COUNT: u64 = 5;

/// The binding data contract of azure-sdk-for-net
/// `Microsoft.Azure.WebJobs.Extensions.Storage.Queues`, `src/Triggers/QueueTriggerBinding.cs`
/// (`CreateBindingDataContract`, `CreateBindingData`).
const BINDING_DATA: &[(&str, DataShape)] = &[
    ("QueueTrigger", DataShape::Text),
    ("DequeueCount", DataShape::Text),
    ("ExpirationTime", DataShape::DateTime),
    ("Id", DataShape::Text),
    ("InsertionTime", DataShape::DateTime),
    ("NextVisibleTime", DataShape::DateTime),
    ("PopReceipt", DataShape::Text),
];

impl BindingKind for Trigger {
    fn type_name(&self) -> &'static str {
        TRIGGER_TYPE
    }

    fn is_trigger(&self) -> bool {
        true
    }

    fn properties(&self) -> PropertiesSchema {
        PropertiesSchema::of::<QueueTriggerBinding>()
    }

    fn check(
        &self,
        properties: &Map<String, Value>,
        prefix: &str,
        problems: &mut Problems,
    ) -> Option<BindingName> {
        // The queue name's rules are `QueueName`'s, checked as it is read.
        read_typed::<QueueTriggerBinding>(properties, prefix, problems).map(|b| b.name)
    }

    fn connection<'a>(
        &self,
        properties: &'a Map<String, Value>,
    ) -> Option<(&'static str, &'a str)> {
        written_text(properties, "connection")
    }

    fn azure_connection(&self) -> Option<ConnectionKind> {
        Some(ConnectionKind::StorageQueue)
    }

    fn binding_data(&self) -> &'static [(&'static str, DataShape)] {
        BINDING_DATA
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
                .typed::<QueueTriggerBinding>()
                .and_then(|b| trigger_source(&b, settings)),
        )
    }

    /// `batchSize`, as Azure's `QueueTargetScaler` divides the queue's length by it.
    fn per_instance(&self, _binding: &KindBinding, section: Option<&Value>) -> Option<u32> {
        let batch_size = section_number(section, "batchSize").unwrap_or(DEFAULT_BATCH_SIZE);
        Some(u32::try_from(batch_size).unwrap_or(u32::MAX))
    }

    fn failed_messages(&self) -> &'static str {
        "the poison queue <queue>-poison"
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
        let Ok(trigger) = binding.typed::<QueueTriggerBinding>() else {
            return Vec::new();
        };
        let mut findings: Vec<_> = queue_name_finding(&trigger.queue_name, settings)
            .into_iter()
            .collect();
        // Where its finally failed messages go, or that they stay on the queue.
        if let Ok(queue) = trigger_queue_name(&trigger.queue_name, settings) {
            let attempts =
                section_number(section, "maxDequeueCount").unwrap_or(DEFAULT_MAX_DEQUEUE_COUNT);
            findings.push((
                "poisonQueue",
                poison_queue_finding(queue.as_str(), attempts),
            ));
        }
        findings
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
        PropertiesSchema::of::<QueueOutputBinding>()
    }

    fn check(
        &self,
        properties: &Map<String, Value>,
        prefix: &str,
        problems: &mut Problems,
    ) -> Option<BindingName> {
        // The name's rules, expressions included, are `OutputQueueName`'s.
        read_typed::<QueueOutputBinding>(properties, prefix, problems).map(|b| b.name)
    }

    fn connection<'a>(
        &self,
        properties: &'a Map<String, Value>,
    ) -> Option<(&'static str, &'a str)> {
        written_text(properties, "connection")
    }

    fn azure_connection(&self) -> Option<ConnectionKind> {
        Some(ConnectionKind::StorageQueue)
    }

    fn output_names<'a>(&self, properties: &'a Map<String, Value>) -> Vec<(&'static str, &'a str)> {
        written_text(properties, "queueName").into_iter().collect()
    }

    /// The output writes bodies in the section's `messageEncoding`.
    fn host_section(&self) -> Option<&'static HostSection> {
        Some(&SECTION)
    }

    fn diagnose(
        &self,
        binding: &KindBinding,
        settings: &BTreeMap<String, String>,
        _section: Option<&Value>,
        _now: DateTime<Utc>,
    ) -> Vec<(&'static str, Finding)> {
        let Ok(output) = binding.typed::<QueueOutputBinding>() else {
            return Vec::new();
        };
        let mut findings = Vec::new();
        // A name with binding expressions: its settings resolve now, the rest per message.
        if let Ok(template) = output.queue_name.template()
            && template.has_expressions()
        {
            findings.push((
                "queueName",
                template
                    .bind_settings(settings)
                    .map(|_| {
                        format!(
                            "{} is resolved for each message from the trigger's binding data",
                            output.queue_name
                        )
                    })
                    .into(),
            ));
        }
        if let Some(literal) = output.queue_name.literal() {
            findings.extend(queue_name_finding(&literal, settings));
        }
        findings
    }
}

/// A name written in another case, or with `%Setting%` references, says what it stands for.
fn queue_name_finding(
    name: &QueueName,
    settings: &BTreeMap<String, String>,
) -> Option<(&'static str, Finding)> {
    let says_more =
        name.has_setting_references() || name.as_str().bytes().any(|b| b.is_ascii_uppercase());
    says_more.then(|| {
        let resolved =
            trigger_queue_name(name, settings).map(|value| format!("{name} resolves to {value}"));
        ("queueName", resolved.into())
    })
}

/// Where `queue`'s failed messages go after `attempts` deliveries. A queue without a poison
/// queue is a warning when that is because of its name's length (a surprise: its failures are
/// retried for ever), not when it is itself a poison queue (a function draining one is the
/// usual reason to trigger on it).
fn poison_queue_finding(queue: &str, attempts: u64) -> Finding {
    match poison_queue_name(queue) {
        Ok(poison) => Finding::Ok(format!(
            "messages that fail {attempts} attempts go to {poison}"
        )),
        Err(reason) => {
            let detail = format!(
                "no poison queue: {reason}; a failed message stays on {queue}, invisible until its invisibility lapses, and is tried again up to {attempts} attempts, then left there"
            );
            match reason {
                NoPoisonQueue::IsPoisonQueue(_) => Finding::Ok(detail),
                NoPoisonQueue::NameTooLong(_) => Finding::Warning(detail),
            }
        }
    }
}

fn section_number(section: Option<&Value>, field: &str) -> Option<u64> {
    section?.get(field)?.as_u64()
}
