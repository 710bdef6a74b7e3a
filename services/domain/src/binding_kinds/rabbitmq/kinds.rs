//! The descriptors of `rabbitMQTrigger` and `rabbitMQ` in `binding_kinds`.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::{
    DataType, HOST_SECTION, OUTPUT_TYPE, Options, OutputBinding, TRIGGER_TYPE, TriggerBinding,
    check_queue_name, connection_uri, held_at_once, resolve_queue_name,
};
use crate::binding_expressions::output_name;
use crate::binding_kinds::{
    BindingKind, BrokerSource, DataShape, Finding, HostSection, KindBinding, PropertiesSchema,
    Source, read_section, read_typed, without_credentials,
};
use crate::names::BindingName;
use crate::validation::{Problems, join_path};

pub struct Trigger;
pub struct Output;

pub const TRIGGER: Trigger = Trigger;
pub const OUTPUT: Output = Output;

static SECTION: HostSection = HostSection {
    name: HOST_SECTION,
    read: Some(read_options),
};

/// The binding data contract of `RabbitMQTriggerBinding.CreateBindingDataContract`.
const BINDING_DATA: &[(&str, DataShape)] = &[
    ("ConsumerTag", DataShape::Text),
    ("DeliveryTag", DataShape::Text),
    ("Redelivered", DataShape::Text),
    ("Exchange", DataShape::Text),
    ("RoutingKey", DataShape::Text),
    ("BasicProperties", DataShape::Object),
    ("Body", DataShape::Text),
];

/// Properties of the extension's first versions, read no more (its 2.x reads the URI only).
const DEPRECATED: [&str; 4] = ["hostName", "userName", "password", "port"];

impl BindingKind for Trigger {
    fn type_name(&self) -> &'static str {
        TRIGGER_TYPE
    }

    fn is_trigger(&self) -> bool {
        true
    }

    fn properties(&self) -> PropertiesSchema {
        PropertiesSchema::of::<TriggerBinding>()
    }

    fn check(
        &self,
        properties: &Map<String, Value>,
        prefix: &str,
        problems: &mut Problems,
    ) -> Option<BindingName> {
        deprecated(properties, prefix, problems)?;
        let b: TriggerBinding = read_typed(properties, prefix, problems)?;
        let path = |field: &str| join_path(prefix, field);
        // `%Setting%` references are checked once resolved; a literal name now.
        if !b.queue_name.contains('%')
            && let Err(message) = check_queue_name(&b.queue_name)
        {
            problems.push(path("queueName"), message);
        }
        if let Some(dead) = &b.dead_letter_queue_name
            && !dead.contains('%')
        {
            if let Err(message) = check_queue_name(dead) {
                problems.push(path("deadLetterQueueName"), message);
            } else if *dead == b.queue_name {
                problems.push(
                    path("deadLetterQueueName"),
                    "must not be the trigger's own queue",
                );
            }
        }
        common(
            problems,
            prefix,
            &b.connection_string_setting,
            b.disable_certificate_validation,
        );
        Some(b.name)
    }

    fn connection<'a>(
        &self,
        properties: &'a Map<String, Value>,
    ) -> Option<(&'static str, &'a str)> {
        connection_property(properties)
    }

    fn binding_data(&self) -> &'static [(&'static str, DataShape)] {
        BINDING_DATA
    }

    fn json_body(&self, properties: &Map<String, Value>) -> bool {
        !matches!(
            properties.get("dataType").and_then(Value::as_str),
            Some("binary" | "stream")
        )
    }

    fn source(
        &self,
        binding: &KindBinding,
        settings: &BTreeMap<String, String>,
        _section: Option<&Value>,
    ) -> Option<Result<Source, String>> {
        Some(trigger_source(binding, settings).map(Source::Broker))
    }

    fn per_instance(&self, _binding: &KindBinding, section: Option<&Value>) -> Option<u32> {
        Some(u32::from(Options::of(section).prefetch_count))
    }

    fn held_per_instance(&self, per_instance: u32, hold_limit: u16) -> Option<(&'static str, u32)> {
        // `per_instance` is `prefetchCount`, a u16.
        let prefetch = u16::try_from(per_instance).unwrap_or(u16::MAX);
        Some((
            "prefetchCount",
            u32::from(held_at_once(prefetch, hold_limit)),
        ))
    }

    fn failed_messages(&self) -> &'static str {
        "the queue's dead-letter exchange, after the extension's five requeues"
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
        let source = trigger_source(binding, settings);
        let prefetch = Options::of(section).prefetch_count;
        vec![
            (
                "connection",
                source
                    .as_ref()
                    .map(|s| format!("{} (app setting {})", s.address(), s.setting))
                    .map_err(Clone::clone)
                    .into(),
            ),
            (
                "queueName",
                source
                    .map(|s| {
                        format!(
                            "consumes queue {} holding up to {prefetch} messages unacknowledged; a \
                         message failing five times is rejected to the queue's dead-letter \
                         exchange, or dropped if the queue has none",
                            s.entity
                        )
                    })
                    .into(),
            ),
        ]
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
        PropertiesSchema::of::<OutputBinding>()
    }

    fn check(
        &self,
        properties: &Map<String, Value>,
        prefix: &str,
        problems: &mut Problems,
    ) -> Option<BindingName> {
        deprecated(properties, prefix, problems)?;
        let b: OutputBinding = read_typed(properties, prefix, problems)?;
        let path = join_path(prefix, "queueName");
        match output_name(&b.queue_name, |c| !c.is_control(), "a RabbitMQ queue name") {
            Ok(Some(_)) => {}
            Ok(None) if b.queue_name.contains('%') => {}
            Ok(None) => {
                if let Err(message) = check_queue_name(&b.queue_name) {
                    problems.push(path, message);
                }
            }
            Err(message) => problems.push(path, message),
        }
        common(
            problems,
            prefix,
            &b.connection_string_setting,
            b.disable_certificate_validation,
        );
        if b.data_type == Some(DataType::Stream) {
            problems.push(join_path(prefix, "dataType"), "must be string or binary");
        }
        Some(b.name)
    }

    fn connection<'a>(
        &self,
        properties: &'a Map<String, Value>,
    ) -> Option<(&'static str, &'a str)> {
        connection_property(properties)
    }

    fn output_names<'a>(&self, properties: &'a Map<String, Value>) -> Vec<(&'static str, &'a str)> {
        properties
            .get("queueName")
            .and_then(Value::as_str)
            .map(|name| vec![("queueName", name)])
            .unwrap_or_default()
    }

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
        let outcome = binding.typed::<OutputBinding>().and_then(|b| {
            let uri = connection_uri(b.connection_string_setting.as_deref(), settings)?;
            Ok(format!(
                "publishes to {} through the default exchange",
                without_credentials(&uri)
            ))
        });
        vec![("connection", outcome.into())]
    }
}

/// The queue a trigger's failed messages are read from (`deadLetterQueueName`, resolved), on
/// the broker its app setting names; `Ok(None)` when the binding names none.
pub fn dead_letter_source(
    binding: &KindBinding,
    settings: &BTreeMap<String, String>,
) -> Result<Option<BrokerSource>, String> {
    let b: TriggerBinding = binding.typed()?;
    let Some(dead) = &b.dead_letter_queue_name else {
        return Ok(None);
    };
    let mut source = trigger_source(binding, settings)?;
    source.entity = resolve_queue_name(dead, settings)?;
    Ok(Some(source))
}

/// The queue a trigger consumes, on the broker its app setting names.
pub fn trigger_source(
    binding: &KindBinding,
    settings: &BTreeMap<String, String>,
) -> Result<BrokerSource, String> {
    let b: TriggerBinding = binding.typed()?;
    let setting = b.connection_string_setting.clone().unwrap_or_default();
    let uri = connection_uri(b.connection_string_setting.as_deref(), settings)?;
    let queue = resolve_queue_name(&b.queue_name, settings)?;
    Ok(BrokerSource {
        kind: TRIGGER_TYPE,
        setting,
        uri,
        entity_kind: "queue",
        entity: queue,
    })
}

fn connection_property(properties: &Map<String, Value>) -> Option<(&'static str, &str)> {
    properties
        .get("connectionStringSetting")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(|s| ("connectionStringSetting", s))
}

/// The checks both bindings share: where the URI comes from, and that certificates are checked.
fn common(
    problems: &mut Problems,
    prefix: &str,
    connection: &Option<String>,
    disable_certificate_validation: bool,
) {
    if connection.as_deref().is_none_or(str::is_empty) {
        problems.push(
            join_path(prefix, "connectionStringSetting"),
            "is required: name the app setting holding the AMQP URI (Shoal does not read a URI \
             from host.json, which is not masked)",
        );
    }
    if disable_certificate_validation {
        problems.push(
            join_path(prefix, "disableCertificateValidation"),
            "Shoal always validates the broker's certificate; use a certificate the broker's \
             name validates against, or amqp:// on a private network",
        );
    }
}

/// Refuses the first versions' properties by name; None when any was written.
fn deprecated(
    properties: &Map<String, Value>,
    prefix: &str,
    problems: &mut Problems,
) -> Option<()> {
    let written: Vec<&str> = DEPRECATED
        .into_iter()
        .filter(|p| properties.contains_key(*p))
        .collect();
    for property in &written {
        problems.push(
            join_path(prefix, property),
            "is not read: put the broker in an AMQP URI (amqp://user:password@host:5672/vhost) \
             in an app setting and name it in connectionStringSetting",
        );
    }
    written.is_empty().then_some(())
}

/// `extensions.rabbitMQ`, refusing what would have no effect or keep a secret in `host.json`.
fn read_options(written: Option<&Value>, path: &str, problems: &mut Problems) -> Value {
    let value = read_section::<Options>(written, path, problems);
    let options: Options = serde_json::from_value(value.clone()).unwrap_or_default();
    let written = written.and_then(Value::as_object);
    let has = |key: &str| written.is_some_and(|w| w.get(key).is_some_and(|v| !v.is_null()));
    if has("connectionString") {
        problems.push(
            join_path(path, "connectionString"),
            "is not read: host.json is not masked; put the AMQP URI in an app setting and name it \
             in each binding's connectionStringSetting",
        );
    }
    if has("queueName") {
        problems.push(
            join_path(path, "queueName"),
            "is not read: set queueName on each binding",
        );
    }
    if written
        .and_then(|w| w.get("disableCertificateValidation"))
        .and_then(Value::as_bool)
        == Some(true)
    {
        problems.push(
            join_path(path, "disableCertificateValidation"),
            "Shoal always validates the broker's certificate",
        );
    }
    if options.prefetch_count == 0 {
        problems.push(
            join_path(path, "prefetchCount"),
            "must be at least 1 (0 would let one listener hold every message of its queue)",
        );
    }
    value
}
