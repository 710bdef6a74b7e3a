//! The messages a `serviceBus` output binding's value stands for, like
//! [`crate::invocation::queue_output_messages`] for queues: a string is one message as is, an
//! array is one message per element, `null` writes nothing, any other JSON value is one
//! message with its JSON as body (content type `application/json` unless set).
//!
//! To set message properties a handler writes the **message form**: an object with a `Body`
//! and nothing but these keys, named as on Azure's `ServiceBusMessage`: `MessageId`,
//! `SessionId`, `ReplyToSessionId`, `PartitionKey`, `CorrelationId`, `ContentType`, `Subject`
//! (or its old name `Label`), `To`, `ReplyTo`, `TimeToLive` (a .NET TimeSpan such as
//! `"00:05:00"`), `ScheduledEnqueueTimeUtc` (ISO 8601) and `ApplicationProperties` (an object of
//! strings, numbers and booleans). An object with any other key is an ordinary JSON body, so a
//! payload that merely happens to have a `Body` field is still sent whole.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::timespan::TimeSpan;

/// One message to send.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OutgoingMessage {
    pub body: Vec<u8>,
    pub message_id: Option<String>,
    pub session_id: Option<String>,
    pub reply_to_session_id: Option<String>,
    pub partition_key: Option<String>,
    pub correlation_id: Option<String>,
    pub content_type: Option<String>,
    pub subject: Option<String>,
    pub to: Option<String>,
    pub reply_to: Option<String>,
    pub time_to_live: Option<Duration>,
    pub scheduled_enqueue_time: Option<DateTime<Utc>>,
    pub application_properties: Map<String, Value>,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{at}: {message}")]
pub struct OutputError {
    pub at: String,
    pub message: String,
}

const MESSAGE_KEYS: [&str; 14] = [
    "Body",
    "MessageId",
    "SessionId",
    "ReplyToSessionId",
    "PartitionKey",
    "CorrelationId",
    "ContentType",
    "Subject",
    "Label",
    "To",
    "ReplyTo",
    "TimeToLive",
    "ScheduledEnqueueTimeUtc",
    "ApplicationProperties",
];

/// The messages `value` (the output binding's value, named `binding`) stands for.
pub fn service_bus_output_messages(
    binding: &str,
    value: &Value,
) -> Result<Vec<OutgoingMessage>, OutputError> {
    match value {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .filter(|(_, v)| !v.is_null())
            .map(|(i, v)| message(&format!("Outputs.{binding}[{i}]"), v))
            .collect(),
        other => Ok(vec![message(&format!("Outputs.{binding}"), other)?]),
    }
}

fn message(at: &str, value: &Value) -> Result<OutgoingMessage, OutputError> {
    match value {
        Value::String(s) => Ok(OutgoingMessage {
            body: s.clone().into_bytes(),
            ..OutgoingMessage::default()
        }),
        Value::Object(map) if is_message_form(map) => message_form(at, map),
        other => Ok(OutgoingMessage {
            body: other.to_string().into_bytes(),
            content_type: Some("application/json".into()),
            ..OutgoingMessage::default()
        }),
    }
}

fn is_message_form(map: &Map<String, Value>) -> bool {
    map.contains_key("Body") && map.keys().all(|k| MESSAGE_KEYS.contains(&k.as_str()))
}

fn message_form(at: &str, map: &Map<String, Value>) -> Result<OutgoingMessage, OutputError> {
    let error = |key: &str, message: &str| OutputError {
        at: format!("{at}.{key}"),
        message: message.to_owned(),
    };
    let text = |key: &str| -> Result<Option<String>, OutputError> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(error(key, "must be a string")),
        }
    };
    let (body, json_body) = match map.get("Body") {
        Some(Value::String(s)) => (s.clone().into_bytes(), false),
        Some(Value::Null) | None => (Vec::new(), false),
        Some(other) => (other.to_string().into_bytes(), true),
    };
    let subject = match (text("Subject")?, text("Label")?) {
        (Some(s), Some(l)) if s != l => {
            return Err(error(
                "Label",
                "differs from Subject (Label is Subject's old name)",
            ));
        }
        (s, l) => s.or(l),
    };
    let time_to_live = text("TimeToLive")?
        .map(|t| TimeSpan::parse(&t).map(|t| t.as_duration()))
        .transpose()
        .map_err(|e| error("TimeToLive", &format!("is not a TimeSpan: {e}")))?;
    if time_to_live == Some(Duration::ZERO) {
        return Err(error("TimeToLive", "must be positive"));
    }
    let scheduled_enqueue_time = text("ScheduledEnqueueTimeUtc")?
        .map(|t| DateTime::parse_from_rfc3339(&t).map(|t| t.with_timezone(&Utc)))
        .transpose()
        .map_err(|_| {
            error(
                "ScheduledEnqueueTimeUtc",
                "is not an ISO 8601 time with offset",
            )
        })?;
    let application_properties = match map.get("ApplicationProperties") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(properties)) => {
            if let Some((name, _)) = properties
                .iter()
                .find(|(_, v)| !matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_)))
            {
                return Err(error(
                    &format!("ApplicationProperties.{name}"),
                    "must be a string, number or boolean",
                ));
            }
            properties.clone()
        }
        Some(_) => return Err(error("ApplicationProperties", "must be an object")),
    };
    let content_type =
        text("ContentType")?.or_else(|| json_body.then(|| "application/json".into()));
    Ok(OutgoingMessage {
        body,
        message_id: text("MessageId")?,
        session_id: text("SessionId")?,
        reply_to_session_id: text("ReplyToSessionId")?,
        partition_key: text("PartitionKey")?,
        correlation_id: text("CorrelationId")?,
        content_type,
        subject,
        to: text("To")?,
        reply_to: text("ReplyTo")?,
        time_to_live,
        scheduled_enqueue_time,
        application_properties,
    })
}

#[cfg(test)]
mod tests;
