//! A message as the stand-in keeps it, and how it goes out on the wire: the message as sent
//! plus the broker's annotations (`x-opt-enqueued-time`, `x-opt-sequence-number`,
//! `x-opt-locked-until`, header `delivery-count` — the names `azure-sdk-for-python`
//! `servicebus/_common/constants.py` reads).

use chrono::{DateTime, Utc};
use fe2o3_amqp::types::messaging::{
    Body, Header, Message, MessageAnnotations, Properties, message::__private::Serializable,
};
use fe2o3_amqp::types::primitives::{SimpleValue, Timestamp, Value};
use uuid::Uuid;

/// Where a message stands in its entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageState {
    Active,
    /// Not yet enqueued: waiting for its scheduled enqueue time.
    Scheduled,
    /// Set aside by its receiver; only receive-by-sequence-number reaches it.
    Deferred,
}

/// A peek-lock held on a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lock {
    pub token: Uuid,
    pub until: DateTime<Utc>,
}

#[derive(Clone, Debug)]
pub struct StoredMessage {
    pub sequence_number: i64,
    pub message: Message<Body<Value>>,
    pub enqueued_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub state: MessageState,
    /// Deliveries that ended without settlement (abandon, lock expiry): the AMQP header's
    /// `delivery-count`, 0 on the first delivery (the Python SDK's `test_queues.py` expects 0
    /// before and 1 after one abandon).
    pub delivery_count: u32,
    pub lock: Option<Lock>,
    pub session_id: Option<String>,
    /// Set on messages in a dead-letter queue: where they came from.
    pub dead_letter_source: Option<String>,
}

impl StoredMessage {
    pub fn is_locked(&self, now: DateTime<Utc>) -> bool {
        self.lock.is_some_and(|lock| lock.until > now)
    }

    /// The message as it goes out: the sent message with the broker's header and annotations.
    pub fn to_wire(&self, ttl: Option<std::time::Duration>) -> Message<Body<Value>> {
        let mut message = self.message.clone();
        let mut header = message.header.take().unwrap_or_else(|| Header {
            durable: false,
            priority: Default::default(),
            ttl: None,
            first_acquirer: false,
            delivery_count: 0,
        });
        header.delivery_count = self.delivery_count;
        header.first_acquirer = self.delivery_count == 0;
        // The effective TTL (the entity's default or cap) so `expires_at_utc` reads right;
        // AMQP's `ttl` is milliseconds in a u32 (about 49 days), longer TTLs stay unsaid.
        header.ttl = ttl.and_then(|ttl| u32::try_from(ttl.as_millis()).ok());
        message.header = Some(header);
        // Service Bus stamps `absolute-expiry-time` with the expiry it applies (enqueued time
        // plus the effective TTL), whatever the sender put there; .NET's `ExpiresAt` and Go's
        // azservicebus read it (the Python SDK derives it from `ttl`). A message that never
        // expires carries none.
        let properties = message.properties.get_or_insert_with(Properties::default);
        properties.absolute_expiry_time = self.expires_at.map(timestamp);
        let mut annotations = message.message_annotations.take().unwrap_or_default();
        annotations.insert(
            "x-opt-enqueued-time".into(),
            Value::Timestamp(timestamp(self.enqueued_at)),
        );
        annotations.insert(
            "x-opt-sequence-number".into(),
            Value::Long(self.sequence_number),
        );
        annotations.insert(
            "x-opt-enqueue-sequence-number".into(),
            Value::Long(self.sequence_number),
        );
        if let Some(lock) = self.lock {
            annotations.insert(
                "x-opt-locked-until".into(),
                Value::Timestamp(timestamp(lock.until)),
            );
        }
        if let Some(source) = &self.dead_letter_source {
            annotations.insert(
                "x-opt-deadletter-source".into(),
                Value::String(source.clone()),
            );
        }
        if self.state == MessageState::Deferred {
            // ServiceBusMessageState.DEFERRED (`_common/constants.py`).
            annotations.insert("x-opt-message-state".into(), Value::Int(1));
        } else if self.state == MessageState::Scheduled {
            annotations.insert("x-opt-message-state".into(), Value::Int(2));
        }
        message.message_annotations = Some(annotations);
        message
    }

    /// Writes an application property (dead-letter reason and description live there, as
    /// `DeadLetterReason` / `DeadLetterErrorDescription`).
    pub fn set_application_property(&mut self, key: &str, value: SimpleValue) {
        let properties = self
            .message
            .application_properties
            .get_or_insert_with(Default::default);
        properties.0.insert(key.to_owned(), value);
    }
}

pub fn timestamp(at: DateTime<Utc>) -> Timestamp {
    Timestamp::from_milliseconds(at.timestamp_millis())
}

pub fn from_timestamp(ts: &Timestamp) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_millis(ts.milliseconds())
}

/// Encodes a message for a transfer.
pub fn encode(message: &Message<Body<Value>>) -> Result<Vec<u8>, serde_amqp::Error> {
    serde_amqp::to_vec(&Serializable(message))
}

/// Decodes a transfer's payload.
pub fn decode(bytes: &[u8]) -> Result<Message<Body<Value>>, serde_amqp::Error> {
    let decoded: fe2o3_amqp::types::messaging::message::__private::Deserializable<
        Message<Body<Value>>,
    > = serde_amqp::from_slice(bytes)?;
    Ok(decoded.0)
}

/// The annotations map type, so callers need not spell its path.
pub type Annotations = MessageAnnotations;

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    /// A message whose sender said it expires at `sent_expiry`, stored as enqueued at
    /// `enqueued_at` and expiring at `expires_at` under the entity's rules.
    fn stored(
        sent_expiry: DateTime<Utc>,
        enqueued_at: DateTime<Utc>,
        expires_at: Option<DateTime<Utc>>,
    ) -> StoredMessage {
        let message = Message::builder()
            .properties(Properties {
                absolute_expiry_time: Some(timestamp(sent_expiry)),
                ..Properties::default()
            })
            .body(Body::Value(fe2o3_amqp::types::messaging::AmqpValue(
                Value::String("hello".into()),
            )))
            .build();
        StoredMessage {
            sequence_number: 1,
            message,
            enqueued_at,
            expires_at,
            state: MessageState::Active,
            delivery_count: 0,
            lock: None,
            session_id: None,
            dead_letter_source: None,
        }
    }

    fn wire_expiry(message: &StoredMessage) -> Option<DateTime<Utc>> {
        let wire = message.to_wire(None);
        let expiry = wire.properties.and_then(|p| p.absolute_expiry_time)?;
        from_timestamp(&expiry)
    }

    #[test]
    fn the_expiry_on_the_wire_is_the_one_the_entity_applies() {
        let sent = Utc.with_ymd_and_hms(2026, 1, 1, 10, 0, 0).unwrap();
        let minutes = |m| chrono::Duration::minutes(m);
        // A 2 h TTL capped by a 10 min default: expires 10 min after enqueueing.
        let capped = stored(sent + minutes(120), sent, Some(sent + minutes(10)));
        assert_eq!(wire_expiry(&capped), Some(sent + minutes(10)));
        // Scheduled an hour on with a 10 min TTL: expires after it is enqueued, not before.
        let scheduled = stored(
            sent + minutes(10),
            sent + minutes(60),
            Some(sent + minutes(70)),
        );
        assert_eq!(wire_expiry(&scheduled), Some(sent + minutes(70)));
        // Never expires: no expiry on the wire, whatever the sender wrote.
        let forever = stored(sent + minutes(10), sent, None);
        assert_eq!(wire_expiry(&forever), None);
    }
}
