//! The request body of a stream-triggered invocation.
//!
//! **kafkaTrigger** follows Azure's Kafka extension (Azure/azure-functions-kafka-extension):
//! an out-of-process function bound to a string receives each event as the JSON of its
//! `KafkaEventData` (`Trigger/KafkaEventDataConvertManager.cs`, `ConvertToString`:
//! `JsonConvert.SerializeObject`), so `Data.<binding>` is that JSON text — `Offset`,
//! `Partition`, `Topic`, `Timestamp`, `Value`, `LeaderEpoch`, `IsPartitionEOF`, `Key` and
//! `Headers` (each `{Key, Value}` with the value in base64, as Json.NET writes a `byte[]`);
//! with `dataType: binary` it is the value's bytes in base64 (`ConvertToByteArray`). The
//! binding data in `Metadata` is the extension's contract (`Trigger/KafkaTriggerBindingStrategy.cs`):
//! `Key`, `Partition`, `Topic`, `Timestamp`, `Offset`, `Headers`, `LeaderEpoch`,
//! `IsPartitionEOF`, each as `<Name>Array` for a batch.
//!
//! **eventHubTrigger** follows the Event Hubs extension's contract, azure-sdk-for-net
//! `sdk/eventhub/Microsoft.Azure.WebJobs.Extensions.EventHubs/src/Triggers/EventHubTriggerBindingStrategy.cs`:
//! `Data.<binding>` is the event body (text, or base64 when it is not UTF-8 or `dataType` is
//! `binary`); `Metadata` has `PartitionContext` and `TriggerPartitionContext` (the event hub,
//! consumer group, namespace and partition), and `PartitionKey`, `Offset`, `OffsetString`,
//! `SequenceNumber`, `EnqueuedTimeUtc`, `Properties` and `SystemProperties` (as `…Array` for a
//! batch). Through the Kafka endpoint an event's sequence number is its Kafka offset, its
//! enqueued time the record's timestamp, its partition key the record's key and its properties
//! the record's headers; Event Hubs' byte offset is not exposed there, so `Offset` and
//! `OffsetString` carry the sequence number as text.
//!
//! Both kinds add Shoal's `ItemIdentifier` (`ItemIdentifierArray`), `<partition>-<offset>`:
//! what a handler names failed events by in `batchItemFailures`.

use base64::Engine as _;
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value, json};

use crate::bindings::DataType;
use crate::service_bus_trigger::metadata::trigger_value;
use crate::stream_trigger::source::StreamKind;

/// One event as the trigger hands it on.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamEvent {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub timestamp: Option<DateTime<Utc>>,
    pub headers: Vec<(String, Option<Vec<u8>>)>,
    pub leader_epoch: Option<i32>,
}

impl StreamEvent {
    /// An event at `topic`/`partition`/`offset` with no key, value, timestamp or headers: what
    /// the position and bookkeeping logic looks at, and the tests' plain event.
    pub fn at(topic: &str, partition: i32, offset: i64) -> StreamEvent {
        StreamEvent {
            topic: topic.to_owned(),
            partition,
            offset,
            key: None,
            value: None,
            timestamp: None,
            headers: Vec::new(),
            leader_epoch: None,
        }
    }
}

/// Who the invocation is for, beside the event(s).
#[derive(Clone, Copy, Debug)]
pub struct StreamInvocation<'a> {
    pub kind: StreamKind,
    /// The trigger binding's name (`Data.<name>`).
    pub binding: &'a str,
    pub function: &'a str,
    pub data_type: Option<DataType>,
    pub consumer_group: &'a str,
    /// `host[:port]` of the brokers, for Event Hubs' `FullyQualifiedNamespace`.
    pub namespace: &'a str,
    pub now: DateTime<Utc>,
    /// `sys.RandGuid`, supplied by the caller to keep this pure.
    pub rand_guid: &'a str,
}

/// The request body for one event.
pub fn single_payload(context: &StreamInvocation<'_>, event: &StreamEvent) -> Value {
    let mut data = Map::new();
    data.insert(context.binding.to_owned(), trigger_data(context, event));
    let mut metadata: Map<String, Value> = fields(context, event)
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    if context.kind == StreamKind::EventHubs {
        add_partition_context(&mut metadata, context, event);
    }
    metadata.insert("sys".into(), sys(context));
    json!({ "Data": data, "Metadata": metadata })
}

/// The request body for a batch: `Data.<binding>` is an array and every metadata field an
/// `…Array`, one element per event in order. An Event Hubs batch holds one partition's events
/// (the extension invokes per partition), so its `PartitionContext` is the first event's.
pub fn batch_payload(context: &StreamInvocation<'_>, events: &[&StreamEvent]) -> Value {
    let mut data = Map::new();
    data.insert(
        context.binding.to_owned(),
        Value::Array(events.iter().map(|e| trigger_data(context, e)).collect()),
    );
    // One array per field, filled event by event: `fields` names the same fields in the same
    // order for every event of a kind, so each array's key is made once per batch.
    let mut arrays: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for event in events {
        for (i, (name, value)) in fields(context, event).into_iter().enumerate() {
            match arrays.get_mut(i) {
                Some((known, values)) if *known == name => values.push(value),
                _ => match arrays.iter_mut().find(|(known, _)| *known == name) {
                    Some((_, values)) => values.push(value),
                    None => {
                        let mut values = Vec::with_capacity(events.len());
                        values.push(value);
                        arrays.push((name, values));
                    }
                },
            }
        }
    }
    let mut metadata: Map<String, Value> = arrays
        .into_iter()
        .map(|(name, values)| (format!("{name}Array"), Value::Array(values)))
        .collect();
    if context.kind == StreamKind::EventHubs
        && let Some(first) = events.first()
    {
        add_partition_context(&mut metadata, context, first);
    }
    metadata.insert("sys".into(), sys(context));
    json!({ "Data": data, "Metadata": metadata })
}

fn trigger_data(context: &StreamInvocation<'_>, event: &StreamEvent) -> Value {
    let value = event.value.as_deref().unwrap_or_default();
    match context.kind {
        StreamKind::EventHubs => Value::String(trigger_value(value, context.data_type)),
        StreamKind::Kafka if context.data_type == Some(DataType::Binary) => {
            Value::String(base64(value))
        }
        StreamKind::Kafka => Value::String(kafka_event_json(event).to_string()),
    }
}

/// `KafkaEventData` as Json.NET serializes it, in the class's property order.
fn kafka_event_json(event: &StreamEvent) -> Value {
    json!({
        "Offset": event.offset,
        "Partition": event.partition,
        "Topic": event.topic,
        "Timestamp": timestamp(event),
        "Value": event.value.as_deref().map(text),
        "LeaderEpoch": event.leader_epoch,
        "IsPartitionEOF": false,
        "Key": event.key.as_deref().map(text),
        "Headers": kafka_headers(event),
    })
}

fn kafka_headers(event: &StreamEvent) -> Value {
    Value::Array(
        event
            .headers
            .iter()
            .map(|(key, value)| json!({"Key": key, "Value": value.as_deref().map(base64)}))
            .collect(),
    )
}

/// The identifier a handler names an event by in `batchItemFailures`: `<partition>-<offset>`.
pub fn item_identifier(event: &StreamEvent) -> String {
    format!("{}-{}", event.partition, event.offset)
}

/// The metadata fields of one event, by name, in contract order, then Shoal's
/// `ItemIdentifier` (what a batch handler's `batchItemFailures` names the event by, see
/// `batch_outcome`).
fn fields(context: &StreamInvocation<'_>, event: &StreamEvent) -> Vec<(&'static str, Value)> {
    let mut fields = contract_fields(context, event);
    fields.push(("ItemIdentifier", json!(item_identifier(event))));
    fields
}

fn contract_fields(
    context: &StreamInvocation<'_>,
    event: &StreamEvent,
) -> Vec<(&'static str, Value)> {
    match context.kind {
        StreamKind::Kafka => vec![
            ("Key", json!(event.key.as_deref().map(text))),
            ("Partition", json!(event.partition)),
            ("Topic", json!(event.topic)),
            ("Timestamp", json!(timestamp(event))),
            ("Offset", json!(event.offset)),
            ("Headers", kafka_headers(event)),
            ("LeaderEpoch", json!(event.leader_epoch)),
            ("IsPartitionEOF", json!(false)),
        ],
        StreamKind::EventHubs => {
            let partition_key = event.key.as_deref().map(text);
            let enqueued = timestamp(event);
            let properties: Map<String, Value> = event
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), json!(v.as_deref().map(text))))
                .collect();
            let system = json!({
                "x-opt-sequence-number": event.offset,
                "x-opt-offset": event.offset.to_string(),
                "x-opt-enqueued-time": enqueued,
                "x-opt-partition-key": partition_key,
            });
            vec![
                ("PartitionKey", json!(partition_key)),
                ("Offset", json!(event.offset.to_string())),
                ("OffsetString", json!(event.offset.to_string())),
                ("SequenceNumber", json!(event.offset)),
                ("EnqueuedTimeUtc", json!(enqueued)),
                ("Properties", Value::Object(properties)),
                ("SystemProperties", system),
            ]
        }
    }
}

fn add_partition_context(
    metadata: &mut Map<String, Value>,
    context: &StreamInvocation<'_>,
    event: &StreamEvent,
) {
    let partition = json!({
        "EventHubName": event.topic,
        "ConsumerGroup": context.consumer_group,
        "FullyQualifiedNamespace": context.namespace,
        "PartitionId": event.partition.to_string(),
    });
    metadata.insert("TriggerPartitionContext".into(), partition.clone());
    metadata.insert("PartitionContext".into(), partition);
}

fn sys(context: &StreamInvocation<'_>) -> Value {
    json!({
        "MethodName": context.function,
        "UtcNow": utc(context.now),
        "RandGuid": context.rand_guid,
    })
}

fn timestamp(event: &StreamEvent) -> Option<String> {
    event.timestamp.map(utc)
}

/// Text as the string deserializer gives it; bytes that are not UTF-8 in base64, so nothing
/// is lost on the way to the handler.
fn text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => base64(bytes),
    }
}

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn utc(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

#[cfg(test)]
mod tests;
