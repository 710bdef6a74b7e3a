//! Where a stream trigger reads: the topic, the consumer group, and the librdkafka client
//! properties, from the binding and the app's settings, the way Azure's Kafka extension builds
//! its consumer (`Listeners/KafkaListener.cs`, `GetConsumerConfiguration`, in
//! Azure/azure-functions-kafka-extension):
//!
//! * Every string property is resolved like `ResolveSecureSetting`
//!   (`Extensions/ConfigurationExtensions.cs`): `%Name%` references are replaced by their
//!   settings' values, and a result that is itself the name of an app setting becomes that
//!   setting's value.
//! * An empty consumer group is `$Default`, as the listener's `consumerGroup` is.
//! * `eventHubTrigger` reads the event hub as a topic of the namespace's Kafka endpoint, as the
//!   extension's Event Hubs mode does: `<namespace>:9093`, SASL_SSL with the PLAIN mechanism,
//!   user name `$ConnectionString` and the connection string as the password. A connection
//!   string with `UseDevelopmentEmulator=true` reaches a local endpoint over SASL_PLAINTEXT
//!   instead (port 9092 unless the endpoint names one), as the Event Hubs emulator's Kafka
//!   endpoint is reached.
//!
//! Batching: `kafkaTrigger` takes up to the extension's `MaxBatchSize` (64,
//! `Config/KafkaOptions.cs`) per fetch; `eventHubTrigger` up to `maxEventBatchSize`, waiting up
//! to `maxWaitTime` for `minEventBatchSize`, with `prefetchCount` as librdkafka's local queue
//! (`queued.min.messages`). Either invokes per event (`cardinality: one`, the default) or per
//! batch (`many`).

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::{EventHubTriggerBinding, KafkaClientSettings, KafkaTriggerBinding};
use crate::binding_expressions::has_expressions;
use crate::binding_kinds::Cardinality;
use crate::connection::{self, ConnectionKind, ConnectionSpec, ServiceBusConnectionString};
use crate::names::setting_value;
use crate::timespan::TimeSpan;

mod tls;

/// The Kafka extension's default `MaxBatchSize`.
pub const DEFAULT_KAFKA_MAX_BATCH_SIZE: u32 = 64;
/// The consumer group of a trigger that names none.
pub const DEFAULT_CONSUMER_GROUP: &str = "$Default";
/// The port of Event Hubs' Kafka endpoint (TLS).
pub const EVENT_HUBS_KAFKA_PORT: u16 = 9093;
/// The port of the Event Hubs emulator's Kafka endpoint (no TLS).
pub const EMULATOR_KAFKA_PORT: u16 = 9092;
/// The SASL user name Event Hubs' Kafka endpoint expects with a connection string.
pub const EVENT_HUBS_SASL_USERNAME: &str = "$ConnectionString";
/// The connection an `eventHubTrigger` without `connection` uses (`AzureWebJobsEventHub`,
/// then `EventHub`).
pub const DEFAULT_EVENT_HUBS_CONNECTION: &str = "EventHub";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamKind {
    Kafka,
    EventHubs,
}

/// Where a partition without a committed offset starts (librdkafka's `auto.offset.reset`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartFrom {
    Earliest,
    Latest,
}

/// A stream trigger, resolved and ready to connect.
#[derive(Clone, PartialEq)]
pub struct StreamSource {
    pub kind: StreamKind,
    pub topic: String,
    pub consumer_group: String,
    /// librdkafka client properties. Values may be secrets (`sasl.password`): `Debug` masks
    /// them, and nothing else may print them.
    pub properties: Vec<(String, String)>,
    pub cardinality: Cardinality,
    /// Most events one fetch (and so one batch) takes.
    pub max_batch_size: u32,
    /// Fewest events a batch waits for, up to `max_wait`; 1 means "what has arrived".
    pub min_batch_size: u32,
    pub max_wait: Duration,
    pub start_from: StartFrom,
    /// Batches between checkpoints (Event Hubs' `batchCheckpointFrequency`; 1 for Kafka).
    pub checkpoint_every: u32,
}

impl StreamSource {
    /// One line for statistics, diagnostics and logs: no secret, no connection string.
    pub fn describe(&self) -> String {
        let servers = self.property("bootstrap.servers").unwrap_or("(no brokers)");
        format!(
            "{} on {servers} (consumer group {})",
            self.topic, self.consumer_group
        )
    }

    pub fn property(&self, key: &str) -> Option<&str> {
        self.properties
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

impl fmt::Debug for StreamSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let properties = masked(&self.properties);
        f.debug_struct("StreamSource")
            .field("kind", &self.kind)
            .field("topic", &self.topic)
            .field("consumer_group", &self.consumer_group)
            .field("properties", &properties)
            .field("cardinality", &self.cardinality)
            .field("max_batch_size", &self.max_batch_size)
            .field("min_batch_size", &self.min_batch_size)
            .field("max_wait", &self.max_wait)
            .field("start_from", &self.start_from)
            .field("checkpoint_every", &self.checkpoint_every)
            .finish()
    }
}

/// librdkafka properties whose values are secrets.
pub fn is_secret_property(key: &str) -> bool {
    key == "sasl.password"
        || key.starts_with("ssl.key.")
        || key.ends_with(".secret")
        || key.ends_with(".password")
}

/// The stream a `kafkaTrigger` reads; errors name settings and properties, never values.
pub fn kafka_source(
    b: &KafkaTriggerBinding,
    settings: &BTreeMap<String, String>,
) -> Result<StreamSource, String> {
    let (topic, properties) = kafka_client(&b.client(), settings)?;
    let consumer_group = consumer_group(b.consumer_group.as_deref(), settings)?;
    Ok(StreamSource {
        kind: StreamKind::Kafka,
        topic,
        consumer_group,
        properties,
        cardinality: b.cardinality.unwrap_or(Cardinality::One),
        max_batch_size: DEFAULT_KAFKA_MAX_BATCH_SIZE,
        min_batch_size: 1,
        max_wait: Duration::ZERO,
        // The extension's `AutoOffsetReset` default (`Config/KafkaOptions.cs`).
        start_from: StartFrom::Earliest,
        checkpoint_every: 1,
    })
}

/// The topic and the client properties of a Kafka binding, settings resolved.
pub fn kafka_client(
    client: &KafkaClientSettings<'_>,
    settings: &BTreeMap<String, String>,
) -> Result<(String, Vec<(String, String)>), String> {
    {
        let brokers =
            resolve_secure(client.broker_list, settings).map_err(|e| format!("brokerList: {e}"))?;
        if brokers.trim().is_empty() {
            return Err("brokerList resolves to an empty value".into());
        }
        // An output's topic with binding expressions is resolved per invocation by its writer.
        let topic = if has_expressions(client.topic) {
            client.topic.to_owned()
        } else {
            let topic =
                resolve_secure(client.topic, settings).map_err(|e| format!("topic: {e}"))?;
            check_topic(&topic).map_err(|e| format!("topic: {e}"))?;
            topic
        };
        let mut properties = vec![("bootstrap.servers".to_owned(), brokers.trim().to_owned())];
        if let Some(protocol) = client.protocol {
            properties.push((
                "security.protocol".into(),
                security_protocol(protocol)?.into(),
            ));
        }
        if let Some(mode) = client.authentication_mode {
            properties.push(("sasl.mechanisms".into(), sasl_mechanism(mode)?.into()));
        }
        if let Some(username) = client.username {
            let username =
                resolve_secure(username, settings).map_err(|e| format!("username: {e}"))?;
            properties.push(("sasl.username".into(), username));
        }
        if let Some(password) = client.password {
            let password =
                resolve_secure(password, settings).map_err(|e| format!("password: {e}"))?;
            properties.push(("sasl.password".into(), password));
        }
        properties.extend(tls::ssl_properties(client.ssl, settings)?);
        Ok((topic, properties))
    }
}

/// The stream an `eventHubTrigger` reads through the event hub's Kafka endpoint, batched by
/// `extensions.eventHubs` (`section`, defaults filled in); errors name settings and
/// properties, never values.
pub fn event_hubs_source(
    b: &EventHubTriggerBinding,
    settings: &BTreeMap<String, String>,
    section: Option<&Value>,
) -> Result<StreamSource, String> {
    let (topic, mut properties) = event_hub_client(
        b.connection.as_deref(),
        b.event_hub_name.as_deref(),
        settings,
    )?;
    let consumer_group = consumer_group(b.consumer_group.as_deref(), settings)?;
    let options: EventHubsBatching = section
        .ok_or("hostConfig.extensions.eventHubs is missing")
        .and_then(|section| serde_json::from_value(section.clone()).map_err(|_| ""))
        .map_err(|_| "hostConfig.extensions.eventHubs could not be read".to_owned())?;
    let start_from = match options.initial_offset_options.offset_type.as_str() {
        "fromStart" => StartFrom::Earliest,
        "fromEnd" => StartFrom::Latest,
        "fromEnqueuedTime" => {
            return Err("hostConfig.extensions.eventHubs.initialOffsetOptions.type fromEnqueuedTime is not supported through the Kafka endpoint yet; use fromStart or fromEnd".into());
        }
        other => {
            return Err(format!(
                "hostConfig.extensions.eventHubs.initialOffsetOptions.type {other:?} is not one of fromStart, fromEnd, fromEnqueuedTime"
            ));
        }
    };
    properties.push((
        "queued.min.messages".into(),
        options.prefetch_count.max(1).to_string(),
    ));
    Ok(StreamSource {
        kind: StreamKind::EventHubs,
        topic,
        consumer_group,
        properties,
        cardinality: b.cardinality.unwrap_or(Cardinality::One),
        max_batch_size: options.max_event_batch_size.max(1),
        min_batch_size: options
            .min_event_batch_size
            .clamp(1, options.max_event_batch_size.max(1)),
        max_wait: options.max_wait_time.as_duration(),
        start_from,
        checkpoint_every: options.batch_checkpoint_frequency.max(1),
    })
}

/// What an `eventHubTrigger` reads of `extensions.eventHubs` (`crate::host_config` reads and
/// checks the section; its defaults are filled in).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EventHubsBatching {
    max_event_batch_size: u32,
    min_event_batch_size: u32,
    max_wait_time: TimeSpan,
    batch_checkpoint_frequency: u32,
    prefetch_count: u32,
    initial_offset_options: InitialOffset,
}

#[derive(Deserialize)]
struct InitialOffset {
    #[serde(rename = "type")]
    offset_type: String,
}

/// The connection string an event hub binding's `connection` (or the default one) names.
pub fn event_hubs_connection(
    connection: Option<&str>,
    settings: &BTreeMap<String, String>,
) -> Result<ServiceBusConnectionString, String> {
    let name = connection
        .filter(|c| !c.trim().is_empty())
        .unwrap_or(DEFAULT_EVENT_HUBS_CONNECTION);
    match connection::resolve(ConnectionKind::ServiceBus, Some(name), settings)
        .map_err(|e| e.to_string())?
    {
        ConnectionSpec::ServiceBusConnectionString(c) => Ok(c),
        ConnectionSpec::Identity(_) => Err(format!(
            "connection {name} is identity-based; reading an event hub through its Kafka endpoint needs a connection string for now (OAUTHBEARER with an Entra token is not supported yet)"
        )),
        ConnectionSpec::StorageConnectionString(_) => Err(format!(
            "connection {name} is not an Event Hubs connection string"
        )),
    }
}

/// The event hub (as a topic) and the client properties for a binding's `connection` and
/// `eventHubName`.
pub fn event_hub_client(
    connection: Option<&str>,
    event_hub_name: Option<&str>,
    settings: &BTreeMap<String, String>,
) -> Result<(String, Vec<(String, String)>), String> {
    let connection = event_hubs_connection(connection, settings)?;
    let raw = setting_value(settings, &connection.setting)?.to_owned();
    let written = event_hub_name
        .map(|n| resolve_secure(n, settings).map_err(|e| format!("eventHubName: {e}")))
        .transpose()?;
    let topic = match (written, &connection.entity_path) {
        (Some(name), Some(path)) if !name.eq_ignore_ascii_case(path) => {
            return Err(format!(
                "eventHubName {name:?} differs from the EntityPath of connection {}",
                connection.setting
            ));
        }
        (Some(name), _) => name,
        (None, Some(path)) => path.clone(),
        (None, None) => {
            return Err(format!(
                "no event hub named: set eventHubName or EntityPath in connection {}",
                connection.setting
            ));
        }
    };
    check_topic(&topic).map_err(|e| format!("eventHubName: {e}"))?;
    let (protocol, port) = if connection.development_emulator {
        ("SASL_PLAINTEXT", EMULATOR_KAFKA_PORT)
    } else {
        ("SASL_SSL", EVENT_HUBS_KAFKA_PORT)
    };
    let host_name = connection.fully_qualified_namespace.as_str();
    let servers = if has_port(host_name) {
        host_name.to_owned()
    } else {
        format!("{host_name}:{port}")
    };
    Ok((
        topic,
        vec![
            ("bootstrap.servers".into(), servers),
            ("security.protocol".into(), protocol.into()),
            ("sasl.mechanisms".into(), "PLAIN".into()),
            ("sasl.username".into(), EVENT_HUBS_SASL_USERNAME.into()),
            ("sasl.password".into(), raw),
        ],
    ))
}

/// Where a `kafka` or `eventHub` output binding writes.
#[derive(Clone, PartialEq)]
pub struct StreamTarget {
    pub topic: String,
    /// The producer's client properties; `Debug` masks secrets.
    pub properties: Vec<(String, String)>,
}

impl StreamTarget {
    pub fn property(&self, key: &str) -> Option<&str> {
        self.properties
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

impl fmt::Debug for StreamTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamTarget")
            .field("topic", &self.topic)
            .field("properties", &masked(&self.properties))
            .finish()
    }
}

fn masked(properties: &[(String, String)]) -> Vec<(&str, &str)> {
    properties
        .iter()
        .map(|(k, v)| {
            let shown = if is_secret_property(k) { "***" } else { v };
            (k.as_str(), shown)
        })
        .collect()
}

fn consumer_group(
    written: Option<&str>,
    settings: &BTreeMap<String, String>,
) -> Result<String, String> {
    let group = match written {
        Some(g) => resolve_secure(g, settings).map_err(|e| format!("consumerGroup: {e}"))?,
        None => String::new(),
    };
    let group = group.trim();
    Ok(if group.is_empty() {
        DEFAULT_CONSUMER_GROUP.to_owned()
    } else {
        group.to_owned()
    })
}

/// The client properties that say where the brokers are and how to sign in
/// (`bootstrap.servers`, `security.protocol`, `sasl.*`, and the TLS material `ssl.*`), none of
/// a consumer's: what a producer or a reader other than the trigger's member takes from the
/// trigger's properties.
pub fn connection_properties(properties: &[(String, String)]) -> Vec<(String, String)> {
    properties
        .iter()
        .filter(|(key, _)| {
            matches!(key.as_str(), "bootstrap.servers" | "security.protocol")
                || key.starts_with("sasl.")
                || key.starts_with("ssl.")
        })
        .cloned()
        .collect()
}

/// `%Name%` references replaced by their settings' values, then, if the result names an app
/// setting, that setting's value (Azure's `ResolveSecureSetting`). Errors name the setting.
pub fn resolve_secure(value: &str, settings: &BTreeMap<String, String>) -> Result<String, String> {
    let resolved = resolve_references(value, settings)?;
    if resolved.is_empty() || resolved.contains([':', '/', ' ', ',']) {
        return Ok(resolved);
    }
    Ok(setting_value(settings, &resolved)
        .map(str::to_owned)
        .unwrap_or(resolved))
}

/// Every `%Name%` in `value` replaced by the setting's value (`ResolveWholeString`); a lone `%`
/// stays as written.
fn resolve_references(value: &str, settings: &BTreeMap<String, String>) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find('%') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('%') else { break };
        let name = &after[..end];
        if name.is_empty() {
            out.push_str(&rest[..start + 2]);
            rest = &after[end + 1..];
            continue;
        }
        out.push_str(&rest[..start]);
        out.push_str(setting_value(settings, name)?);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A topic (or event hub) name as Kafka allows it; also checks what an output's binding
/// expressions resolved to.
pub fn check_topic(topic: &str) -> Result<(), String> {
    let ok = !topic.is_empty()
        && topic.len() <= 249
        && topic
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err("must resolve to 1 to 249 letters, digits, '.', '_' and '-'".into())
    }
}

fn has_port(host: &str) -> bool {
    host.rsplit_once(':')
        .is_some_and(|(_, port)| !port.is_empty() && port.chars().all(|c| c.is_ascii_digit()))
}

/// The binding's `protocol` (validated on write, any case) as librdkafka spells it.
fn security_protocol(written: &str) -> Result<&'static str, String> {
    Ok(match normalized(written).as_str() {
        "plaintext" => "PLAINTEXT",
        "ssl" => "SSL",
        "saslplaintext" => "SASL_PLAINTEXT",
        "saslssl" => "SASL_SSL",
        _ => {
            return Err(format!(
                "protocol {written:?} is not one of plaintext, ssl, saslPlaintext, saslSsl"
            ));
        }
    })
}

/// The binding's `authenticationMode` as librdkafka spells it. GSSAPI needs Kerberos, which
/// Shoal's librdkafka is built without; OAUTHBEARER needs the token settings the binding does
/// not have yet.
fn sasl_mechanism(written: &str) -> Result<&'static str, String> {
    Ok(match normalized(written).as_str() {
        "plain" => "PLAIN",
        "scramsha256" => "SCRAM-SHA-256",
        "scramsha512" => "SCRAM-SHA-512",
        "gssapi" => {
            return Err(
                "authenticationMode gssapi (Kerberos) is not supported by Shoal's Kafka client"
                    .into(),
            );
        }
        "oauthbearer" => {
            return Err(
                "authenticationMode oauthBearer is not supported yet; use plain or scramSha256/512"
                    .into(),
            );
        }
        _ => {
            return Err(format!(
                "authenticationMode {written:?} is not one of plain, scramSha256, scramSha512"
            ));
        }
    })
}

fn normalized(value: &str) -> String {
    value.replace(['_', '-'], "").to_ascii_lowercase()
}
