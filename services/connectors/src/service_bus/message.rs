//! Service Bus messages between the client library's types and the domain's: a received
//! message becomes a `ReceivedMessage` (what the handler sees); an `OutgoingMessage` becomes a
//! `ServiceBusMessage`; JSON property values become AMQP values and back.

use azservicebus::prelude::{
    ServiceBusMessage, ServiceBusPeekedMessage, ServiceBusReceivedMessage,
};
use base64::Engine as _;
use chrono::{DateTime, Utc};
use fe2o3_amqp_types::messaging::{AmqpValue, ApplicationProperties, Body};
use fe2o3_amqp_types::primitives::{OrderedMap, SimpleValue};
use serde_json::{Map, Value as Json};
use shoal_domain::service_bus_trigger::{OutgoingMessage, ReceivedMessage};

/// A message received under a peek lock: what the handler sees, and the client library's
/// message the receiver settles and renews by.
#[derive(Debug)]
pub struct Received {
    pub message: ReceivedMessage,
    pub(crate) raw: ServiceBusReceivedMessage,
}

impl Received {
    pub(crate) fn new(raw: ServiceBusReceivedMessage) -> Received {
        Received {
            message: received(&raw),
            raw,
        }
    }

    /// When the message's lock ends (as of the last receive or renewal).
    pub fn locked_until(&self) -> Option<DateTime<Utc>> {
        self.raw.locked_until().map(chrono_time)
    }
}

fn chrono_time(t: time::OffsetDateTime) -> DateTime<Utc> {
    DateTime::from_timestamp(t.unix_timestamp(), t.nanosecond()).unwrap_or(
        if t.unix_timestamp() > 0 {
            DateTime::<Utc>::MAX_UTC
        } else {
            DateTime::<Utc>::MIN_UTC
        },
    )
}

fn offset_time(t: DateTime<Utc>) -> time::OffsetDateTime {
    time::OffsetDateTime::from_unix_timestamp(t.timestamp())
        .map(|base| base + time::Duration::nanoseconds(i64::from(t.timestamp_subsec_nanos())))
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH)
}

fn received(raw: &ServiceBusReceivedMessage) -> ReceivedMessage {
    let application_properties = raw
        .application_properties()
        .map(|ApplicationProperties(map)| {
            map.iter()
                .map(|(k, v)| (k.clone(), simple_to_json(v)))
                .collect()
        })
        .unwrap_or_default();
    ReceivedMessage {
        body: body(raw),
        message_id: raw.message_id().map(|m| m.into_owned()),
        // The broker's delivery tag is the lock token in .NET `Guid` byte order, as Azure's SDKs
        // read it (.NET `new Guid(bytes)`, Python `UUID(bytes_le=…)`).
        lock_token: uuid::Uuid::from_bytes_le(*raw.lock_token().as_inner()).to_string(),
        delivery_count: raw.delivery_count().unwrap_or(0),
        sequence_number: raw.sequence_number(),
        enqueued_time: chrono_time(raw.enqueued_time()),
        expires_at: chrono_time(raw.expires_at()),
        content_type: raw.content_type().map(str::to_owned),
        correlation_id: raw.correlation_id().map(|c| c.into_owned()),
        session_id: raw.session_id().map(str::to_owned),
        reply_to: raw.reply_to().map(str::to_owned),
        reply_to_session_id: raw.reply_to_session_id().map(str::to_owned),
        to: raw.to().map(str::to_owned),
        subject: raw.subject().map(str::to_owned),
        partition_key: raw.partition_key().map(str::to_owned),
        transaction_partition_key: raw.transaction_partition_key().map(str::to_owned),
        dead_letter_source: raw.dead_letter_source().map(str::to_owned),
        application_properties,
    }
}

/// A message seen without locking it (peeked), as a dead-letter queue's reader shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct PeekedServiceBusMessage {
    pub message_id: Option<String>,
    pub sequence_number: i64,
    pub enqueued_time: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub delivery_count: u32,
    pub dead_letter_reason: Option<String>,
    pub body: Vec<u8>,
}

pub(crate) fn peeked(raw: &ServiceBusPeekedMessage) -> PeekedServiceBusMessage {
    PeekedServiceBusMessage {
        message_id: raw.message_id().map(|m| m.into_owned()),
        sequence_number: raw.sequence_number(),
        enqueued_time: chrono_time(raw.enqueued_time()),
        expires_at: chrono_time(raw.expires_at()),
        delivery_count: raw.delivery_count().unwrap_or(0),
        dead_letter_reason: raw.dead_letter_reason().map(str::to_owned),
        body: raw.body().map(<[u8]>::to_vec).unwrap_or_default(),
    }
}

/// The body's bytes: the data sections (what every Service Bus SDK sends), or an AMQP value
/// body's string or binary; any other value as its JSON-like text rather than nothing.
fn body(raw: &ServiceBusReceivedMessage) -> Vec<u8> {
    if let Ok(bytes) = raw.body() {
        return bytes.to_vec();
    }
    match &raw.raw_amqp_message().body {
        Body::Value(AmqpValue(serde_amqp::Value::String(s))) => s.clone().into_bytes(),
        Body::Value(AmqpValue(serde_amqp::Value::Binary(b))) => b.to_vec(),
        Body::Data(batch) => batch.iter().flat_map(|d| d.0.to_vec()).collect(),
        other => format!("{other:?}").into_bytes(),
    }
}

fn simple_to_json(value: &SimpleValue) -> Json {
    match value {
        SimpleValue::Null => Json::Null,
        SimpleValue::Bool(b) => Json::Bool(*b),
        SimpleValue::Ubyte(n) => Json::from(*n),
        SimpleValue::Ushort(n) => Json::from(*n),
        SimpleValue::Uint(n) => Json::from(*n),
        SimpleValue::Ulong(n) => Json::from(*n),
        SimpleValue::Byte(n) => Json::from(*n),
        SimpleValue::Short(n) => Json::from(*n),
        SimpleValue::Int(n) => Json::from(*n),
        SimpleValue::Long(n) => Json::from(*n),
        SimpleValue::Float(n) => Json::from(f64::from(n.0)),
        SimpleValue::Double(n) => Json::from(n.0),
        SimpleValue::Char(c) => Json::String(c.to_string()),
        SimpleValue::Timestamp(t) => Json::String(
            DateTime::from_timestamp_millis(t.milliseconds())
                .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
                .unwrap_or_default(),
        ),
        SimpleValue::Uuid(u) => Json::String(uuid::Uuid::from_bytes(*u.as_inner()).to_string()),
        SimpleValue::Binary(b) => {
            Json::String(base64::engine::general_purpose::STANDARD.encode(b.as_slice()))
        }
        SimpleValue::String(s) => Json::String(s.clone()),
        SimpleValue::Symbol(s) => Json::String(s.0.clone()),
        other => Json::String(format!("{other:?}")),
    }
}

fn json_to_simple(value: &Json) -> SimpleValue {
    match value {
        Json::Bool(b) => SimpleValue::Bool(*b),
        Json::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => SimpleValue::Long(i),
            (None, Some(u), _) => SimpleValue::Ulong(u),
            (_, _, Some(f)) => SimpleValue::from(f),
            _ => SimpleValue::String(n.to_string()),
        },
        Json::String(s) => SimpleValue::String(s.clone()),
        Json::Null => SimpleValue::Null,
        other => SimpleValue::String(other.to_string()),
    }
}

/// `propertiesToModify` as the client library takes it.
pub(crate) fn properties_to_modify(
    properties: &Map<String, Json>,
) -> Option<OrderedMap<String, serde_amqp::Value>> {
    if properties.is_empty() {
        return None;
    }
    Some(
        properties
            .iter()
            .map(|(k, v)| (k.clone(), serde_amqp::Value::from(json_to_simple(v))))
            .collect(),
    )
}

/// The client library's message for an output binding's message.
pub(crate) fn outgoing(message: &OutgoingMessage) -> Result<ServiceBusMessage, String> {
    let mut out = ServiceBusMessage::new(message.body.clone());
    if let Some(id) = &message.message_id {
        out.set_message_id(id.clone())
            .map_err(|e| format!("MessageId: {e}"))?;
    }
    if let Some(session) = &message.session_id {
        out.set_session_id(session.clone())
            .map_err(|e| format!("SessionId: {e}"))?;
    }
    if let Some(session) = &message.reply_to_session_id {
        out.set_reply_to_session_id(Some(session.clone()))
            .map_err(|e| format!("ReplyToSessionId: {e}"))?;
    }
    if let Some(key) = &message.partition_key {
        out.set_partition_key(key.clone())
            .map_err(|e| format!("PartitionKey: {e}"))?;
    }
    if let Some(ttl) = message.time_to_live {
        out.set_time_to_live(ttl)
            .map_err(|e| format!("TimeToLive: {e}"))?;
    }
    out.set_correlation_id(message.correlation_id.clone());
    out.set_content_type(message.content_type.clone());
    out.set_subject(message.subject.clone());
    out.set_to(message.to.clone());
    out.set_reply_to(message.reply_to.clone());
    if let Some(at) = message.scheduled_enqueue_time {
        out.set_scheduled_enqueue_time(offset_time(at));
    }
    if !message.application_properties.is_empty() {
        let mut map = OrderedMap::default();
        for (k, v) in &message.application_properties {
            map.insert(k.clone(), json_to_simple(v));
        }
        *out.application_properties_mut() = Some(ApplicationProperties(map));
    }
    Ok(out)
}
