//! The request body of a Service Bus-triggered invocation: the message in `Data.<binding>` (its
//! body as text, or base64 when it is not UTF-8 or the binding's `dataType` is `binary`, as the
//! queue trigger does) and the binding data Azure Functions passes in `Metadata`.
//!
//! The metadata names and types follow the Service Bus extension's binding contract,
//! azure-sdk-for-net
//! `sdk/servicebus/Microsoft.Azure.WebJobs.Extensions.ServiceBus/src/Triggers/ServiceBusTriggerBindingStrategy.cs`
//! (`GetBindingContract`, `AddBindingData`): `DeliveryCount`, `DeadLetterSource`, `LockToken`,
//! `ExpiresAtUtc`, `EnqueuedTimeUtc`, `MessageId`, `ContentType`, `ReplyTo`, `SequenceNumber`,
//! `To`, `Label` and `Subject` (the same value: v5 renamed `Label` to `Subject` and keeps
//! both), `CorrelationId`, `ApplicationProperties` and `UserProperties` (the same value, again
//! old and new name), `SessionId`, `ReplyToSessionId`, `PartitionKey`,
//! `TransactionPartitionKey`. A batch gets each as `<Name>Array`, one element per message in
//! order. The client objects the extension also binds (`MessageReceiver`, `MessageActions`,
//! `SessionActions`, `Client`) have no JSON form; a custom handler asks for settlement in its
//! response instead (see [`super::settlement`]). Times are ISO 8601 in UTC.

use base64::Engine as _;
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value, json};

use crate::bindings::DataType;

/// A received message as the trigger hands it on: the client library's message reduced to what
/// the handler sees.
#[derive(Clone, Debug, PartialEq)]
pub struct ReceivedMessage {
    pub body: Vec<u8>,
    pub message_id: Option<String>,
    pub lock_token: String,
    pub delivery_count: u32,
    pub sequence_number: i64,
    pub enqueued_time: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub content_type: Option<String>,
    pub correlation_id: Option<String>,
    pub session_id: Option<String>,
    pub reply_to: Option<String>,
    pub reply_to_session_id: Option<String>,
    pub to: Option<String>,
    pub subject: Option<String>,
    pub partition_key: Option<String>,
    pub transaction_partition_key: Option<String>,
    pub dead_letter_source: Option<String>,
    /// Application properties as JSON values (strings, numbers, booleans; times as strings).
    pub application_properties: Map<String, Value>,
}

/// The body as the handler receives it.
pub fn trigger_value(body: &[u8], data_type: Option<DataType>) -> String {
    let as_text = matches!(data_type, None | Some(DataType::String));
    match std::str::from_utf8(body) {
        Ok(text) if as_text => text.to_owned(),
        _ => base64::engine::general_purpose::STANDARD.encode(body),
    }
}

/// Who the invocation is for, beside the message(s).
#[derive(Clone, Copy, Debug)]
pub struct InvocationContext<'a> {
    /// The trigger binding's name (`Data.<name>`).
    pub binding: &'a str,
    pub function: &'a str,
    pub data_type: Option<DataType>,
    pub now: DateTime<Utc>,
    /// `sys.RandGuid`, supplied by the caller to keep this pure.
    pub rand_guid: &'a str,
}

/// The metadata fields of one message, by name, in contract order.
fn fields(message: &ReceivedMessage) -> Vec<(&'static str, Value)> {
    let text = |v: &Option<String>| v.clone().map_or(Value::Null, Value::String);
    let properties = Value::Object(message.application_properties.clone());
    vec![
        ("DeliveryCount", json!(message.delivery_count)),
        ("DeadLetterSource", text(&message.dead_letter_source)),
        ("LockToken", json!(message.lock_token)),
        ("ExpiresAtUtc", json!(utc(message.expires_at))),
        ("EnqueuedTimeUtc", json!(utc(message.enqueued_time))),
        ("MessageId", text(&message.message_id)),
        ("ContentType", text(&message.content_type)),
        ("ReplyTo", text(&message.reply_to)),
        ("SequenceNumber", json!(message.sequence_number)),
        ("To", text(&message.to)),
        ("Label", text(&message.subject)),
        ("Subject", text(&message.subject)),
        ("CorrelationId", text(&message.correlation_id)),
        ("ApplicationProperties", properties.clone()),
        ("UserProperties", properties),
        ("SessionId", text(&message.session_id)),
        ("ReplyToSessionId", text(&message.reply_to_session_id)),
        ("PartitionKey", text(&message.partition_key)),
        (
            "TransactionPartitionKey",
            text(&message.transaction_partition_key),
        ),
    ]
}

fn sys(context: &InvocationContext<'_>) -> Value {
    json!({
        "MethodName": context.function,
        "UtcNow": context.now.to_rfc3339_opts(SecondsFormat::AutoSi, true),
        "RandGuid": context.rand_guid,
    })
}

/// The request body for one message (single dispatch, sessions).
pub fn single_payload(context: &InvocationContext<'_>, message: &ReceivedMessage) -> Value {
    let mut data = Map::new();
    data.insert(
        context.binding.to_owned(),
        Value::String(trigger_value(&message.body, context.data_type)),
    );
    let mut metadata: Map<String, Value> = fields(message)
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    metadata.insert("sys".into(), sys(context));
    json!({ "Data": data, "Metadata": metadata })
}

/// The request body for a batch: `Data.<binding>` is an array of bodies and every metadata
/// field is an `…Array` with one element per message, in order.
pub fn batch_payload(context: &InvocationContext<'_>, messages: &[ReceivedMessage]) -> Value {
    let mut data = Map::new();
    data.insert(
        context.binding.to_owned(),
        Value::Array(
            messages
                .iter()
                .map(|m| Value::String(trigger_value(&m.body, context.data_type)))
                .collect(),
        ),
    );
    let mut metadata = Map::new();
    for message in messages {
        for (name, value) in fields(message) {
            let entry = metadata
                .entry(format!("{name}Array"))
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(values) = entry {
                values.push(value);
            }
        }
    }
    metadata.insert("sys".into(), sys(context));
    json!({ "Data": data, "Metadata": metadata })
}

/// `2026-11-24T02:30:00.123Z`: ISO 8601 in UTC, as .NET serializes a UTC `DateTime`.
fn utc(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

#[cfg(test)]
mod tests;
