//! A Service Bus message parked for a far-off retry (`crate::durable_retry`). Service Bus has
//! no way to make a locked message invisible for a while: abandon makes it visible at once
//! and counts a delivery, defer takes it out of the receive order, and a lock is renewed only
//! up to `maxAutoLockRenewalDuration`. So the message is re-sent as a *scheduled* message due
//! when the retry is, carrying where its retries stand in application properties, and the
//! original is completed. The copy is the same message to the handler: its `MessageId` (and so
//! its `webhook-id`), its properties without Shoal's, and its `DeliveryCount` as if the hop
//! had not happened.
//!
//! Only a queue's single messages outside sessions are parked: a copy sent to a topic would
//! reach every subscription, and a copy of a session's message would lose its place in the
//! session's order. Those retries wait under the lock as before.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::{OutgoingMessage, ReceivedMessage};
use crate::durable_retry::{FAILURE_LIMIT, RetryState};

/// The retries made so far (the next attempt's `RetryCount`).
pub const RETRY_COUNT: &str = "Shoal-Retry-Count";
/// The retry policy's back-off so far, in milliseconds.
pub const RETRY_BACKOFF_MS: &str = "Shoal-Retry-Backoff-Ms";
/// Why the attempt before the park failed.
pub const PREVIOUS_FAILURE: &str = "Shoal-Retry-Previous-Failure";
/// The original's `DeliveryCount` when it was parked.
pub const DELIVERY_COUNT: &str = "Shoal-Delivery-Count";
/// The original's `MessageId` (the copy has one of its own, or duplicate detection would drop
/// it).
pub const MESSAGE_ID: &str = "Shoal-Message-Id";

const PROPERTIES: [&str; 5] = [
    RETRY_COUNT,
    RETRY_BACKOFF_MS,
    PREVIOUS_FAILURE,
    DELIVERY_COUNT,
    MESSAGE_ID,
];

/// The longest time-to-live a message can carry over AMQP (`ttl` is milliseconds in a
/// `uint`: about 49.7 days). A copy of a message with longer left gets none of its own, and so
/// the queue's default: Azure's default is unbounded.
const LONGEST_TTL: Duration = Duration::from_millis(u32::MAX as u64);

/// Service Bus's longest `MessageId`.
const MESSAGE_ID_LIMIT: usize = 128;

/// The scheduled copy of `message` that carries `state`, due at `due`. None when the message
/// expires before its retry is due (it would never be delivered: the retry then waits under
/// the lock as before).
pub fn parked_copy(
    message: &ReceivedMessage,
    state: &RetryState,
    due: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Option<OutgoingMessage> {
    let time_to_live = (message.expires_at - now).to_std().ok()?;
    if message.expires_at <= due {
        return None;
    }
    let original_id = original_message_id(message);
    let mut properties = message.application_properties.clone();
    for name in PROPERTIES {
        properties.remove(name);
    }
    properties.insert(RETRY_COUNT.into(), json!(state.retries));
    properties.insert(
        RETRY_BACKOFF_MS.into(),
        json!(u64::try_from(state.backoff.as_millis()).unwrap_or(u64::MAX)),
    );
    if let Some(failure) = &state.previous_failure {
        let cut: String = failure.chars().take(FAILURE_LIMIT).collect();
        properties.insert(PREVIOUS_FAILURE.into(), json!(cut));
    }
    properties.insert(DELIVERY_COUNT.into(), json!(message.delivery_count.max(1)));
    let copy_id = original_id.as_ref().map(|id| {
        let suffix = format!(":retry-{}", state.retries);
        let keep = MESSAGE_ID_LIMIT.saturating_sub(suffix.len());
        let mut head: String = id.chars().take(keep).collect();
        while head.len() > keep {
            head.pop();
        }
        head + &suffix
    });
    if let Some(id) = &original_id {
        properties.insert(MESSAGE_ID.into(), json!(id));
    }
    Some(OutgoingMessage {
        body: message.body.clone(),
        message_id: copy_id,
        session_id: message.session_id.clone(),
        reply_to_session_id: message.reply_to_session_id.clone(),
        partition_key: message.partition_key.clone(),
        correlation_id: message.correlation_id.clone(),
        content_type: message.content_type.clone(),
        subject: message.subject.clone(),
        to: message.to.clone(),
        reply_to: message.reply_to.clone(),
        time_to_live: (time_to_live <= LONGEST_TTL).then_some(time_to_live),
        scheduled_enqueue_time: Some(due),
        application_properties: properties,
    })
}

/// Where the retries of a parked copy stand, and the copy made to look like its original again:
/// Shoal's properties taken out, its `MessageId` the original's, its `DeliveryCount` that of
/// the original when parked plus the copy's own deliveries after the first (the delivery that
/// resumes the retries is the one the park interrupted). None for a message never parked.
pub fn resume(message: &mut ReceivedMessage) -> Option<RetryState> {
    let props = &message.application_properties;
    let retries = props.get(RETRY_COUNT).and_then(Value::as_u64)?;
    let backoff = props
        .get(RETRY_BACKOFF_MS)
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let previous_failure = props
        .get(PREVIOUS_FAILURE)
        .and_then(Value::as_str)
        .map(str::to_owned);
    let carried = props
        .get(DELIVERY_COUNT)
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(1);
    let original_id = props
        .get(MESSAGE_ID)
        .and_then(Value::as_str)
        .map(str::to_owned);
    for name in PROPERTIES {
        message.application_properties.remove(name);
    }
    if original_id.is_some() {
        message.message_id = original_id;
    }
    message.delivery_count = carried.saturating_add(message.delivery_count.saturating_sub(1));
    Some(RetryState {
        retries: u32::try_from(retries).unwrap_or(u32::MAX),
        previous_failure,
        backoff: Duration::from_millis(backoff),
    })
}

fn original_message_id(message: &ReceivedMessage) -> Option<String> {
    message.message_id.clone().filter(|id| !id.is_empty())
}

#[cfg(test)]
mod tests {
    use serde_json::Map;

    use super::*;

    fn received(id: &str, delivery_count: u32) -> ReceivedMessage {
        let at = DateTime::parse_from_rfc3339("2026-11-29T10:00:00Z")
            .unwrap()
            .to_utc();
        let mut properties = Map::new();
        properties.insert("tenant".into(), json!("contoso"));
        ReceivedMessage {
            body: b"order 1".to_vec(),
            message_id: Some(id.into()),
            lock_token: "token".into(),
            delivery_count,
            sequence_number: 7,
            enqueued_time: at,
            expires_at: at + chrono::Duration::days(14),
            content_type: Some("application/json".into()),
            correlation_id: Some("c-1".into()),
            session_id: None,
            reply_to: None,
            reply_to_session_id: None,
            to: None,
            subject: Some("orders".into()),
            partition_key: None,
            transaction_partition_key: None,
            dead_letter_source: None,
            application_properties: properties,
        }
    }

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-29T10:01:00Z")
            .unwrap()
            .to_utc()
    }

    /// What the broker hands back for `copy`, delivered `deliveries` times.
    fn delivered(copy: &OutgoingMessage, deliveries: u32) -> ReceivedMessage {
        let mut message = received("ignored", deliveries);
        message.message_id = copy.message_id.clone();
        message.application_properties = copy.application_properties.clone();
        message.body = copy.body.clone();
        message
    }

    #[test]
    fn a_parked_copy_comes_back_as_its_original_with_its_retries() {
        let original = received("order-1", 2);
        let state = RetryState {
            retries: 3,
            previous_failure: Some("the handler answered 500".into()),
            backoff: Duration::from_secs(600),
        };
        let due = now() + chrono::Duration::minutes(10);
        let copy = parked_copy(&original, &state, due, now()).unwrap();
        assert_eq!(copy.message_id.as_deref(), Some("order-1:retry-3"));
        assert_eq!(copy.scheduled_enqueue_time, Some(due));
        assert_eq!(copy.body, original.body);
        assert_eq!(copy.correlation_id, original.correlation_id);
        assert_eq!(copy.subject, original.subject);
        assert_eq!(copy.application_properties["tenant"], "contoso");
        assert_eq!(
            copy.time_to_live,
            Some(Duration::from_secs(14 * 86_400 - 60)),
            "what the original had left"
        );

        let mut back = delivered(&copy, 1);
        assert_eq!(resume(&mut back), Some(state.clone()));
        assert_eq!(back.message_id.as_deref(), Some("order-1"));
        assert_eq!(back.delivery_count, 2, "the hop counts no delivery");
        assert_eq!(
            back.application_properties.keys().collect::<Vec<_>>(),
            ["tenant"]
        );

        // Abandoned twice more after it came back: those deliveries count.
        let mut again = delivered(&copy, 3);
        resume(&mut again);
        assert_eq!(again.delivery_count, 4);

        // Parked a second time: still one original id, one set of Shoal's properties.
        let next = RetryState {
            retries: 4,
            ..state
        };
        let second = parked_copy(&back, &next, due, now()).unwrap();
        assert_eq!(second.message_id.as_deref(), Some("order-1:retry-4"));
        let mut last = delivered(&second, 1);
        assert_eq!(resume(&mut last).map(|s| s.retries), Some(4));
        assert_eq!(last.message_id.as_deref(), Some("order-1"));
        assert_eq!(last.delivery_count, 2);
    }

    #[test]
    fn a_message_that_lives_longer_than_amqp_can_say_takes_the_queues_default() {
        // Azure's default time-to-live is unbounded (`TimeSpan.MaxValue`).
        let mut forever = received("order-1", 1);
        forever.expires_at = DateTime::<Utc>::MAX_UTC;
        let copy = parked_copy(&forever, &RetryState::default(), now(), now()).unwrap();
        assert_eq!(copy.time_to_live, None);
    }

    #[test]
    fn a_message_never_parked_is_left_alone() {
        let mut message = received("order-1", 1);
        let before = message.clone();
        assert_eq!(resume(&mut message), None);
        assert_eq!(message, before);
    }

    #[test]
    fn a_message_that_expires_before_its_retry_is_not_parked() {
        let original = received("order-1", 1);
        let late = original.expires_at + chrono::Duration::seconds(1);
        assert_eq!(
            parked_copy(&original, &RetryState::default(), late, now()),
            None
        );
    }

    #[test]
    fn the_copys_message_id_stays_within_service_bus_limits() {
        let long = "x".repeat(128);
        let state = RetryState {
            retries: 12,
            ..RetryState::default()
        };
        let copy = parked_copy(&received(&long, 1), &state, now(), now()).unwrap();
        let id = copy.message_id.unwrap();
        assert!(id.len() <= 128 && id.ends_with(":retry-12"), "{id}");
        assert_eq!(copy.application_properties[MESSAGE_ID], json!(long));
    }
}
