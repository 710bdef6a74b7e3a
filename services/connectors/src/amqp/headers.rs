//! Reading the headers Shoal's RabbitMQ rules depend on (`shoal_domain::binding_kinds::rabbitmq`)
//! out of a message's AMQP properties, whatever field type the publisher used: the worker's
//! listener and the API's poison routes read them alike.

use lapin::BasicProperties;
use lapin::types::AMQPValue;
use shoal_domain::binding_kinds::rabbitmq::{REQUEUE_COUNT_HEADER, WEBHOOK_ID_HEADER};

/// The failures counted in [`REQUEUE_COUNT_HEADER`], whatever integer type (or decimal text)
/// the publisher wrote it as; 0 without it, negative counts as 0.
pub fn requeue_count(properties: &BasicProperties) -> u32 {
    let count: Option<i128> = match header(properties, REQUEUE_COUNT_HEADER) {
        Some(AMQPValue::ShortShortInt(v)) => Some((*v).into()),
        Some(AMQPValue::ShortShortUInt(v)) => Some((*v).into()),
        Some(AMQPValue::ShortInt(v)) => Some((*v).into()),
        Some(AMQPValue::ShortUInt(v)) => Some((*v).into()),
        Some(AMQPValue::LongInt(v)) => Some((*v).into()),
        Some(AMQPValue::LongUInt(v)) => Some((*v).into()),
        Some(AMQPValue::LongLongInt(v)) => Some((*v).into()),
        Some(AMQPValue::LongString(s)) => std::str::from_utf8(s.as_bytes())
            .ok()
            .and_then(|s| s.trim().parse().ok()),
        _ => None,
    };
    count.map_or(0, |c| u32::try_from(c.max(0)).unwrap_or(u32::MAX))
}

/// The idempotency key a requeued copy carries in [`WEBHOOK_ID_HEADER`]: text of 1 to 128
/// bytes, else none.
pub fn carried_webhook_id(properties: &BasicProperties) -> Option<&str> {
    match header(properties, WEBHOOK_ID_HEADER)? {
        AMQPValue::LongString(s) => std::str::from_utf8(s.as_bytes()).ok(),
        AMQPValue::ShortString(s) => Some(s.as_str()),
        _ => None,
    }
    .filter(|id| !id.is_empty() && id.len() <= 128)
}

fn header<'p>(properties: &'p BasicProperties, name: &str) -> Option<&'p AMQPValue> {
    properties
        .headers()
        .as_ref()
        .and_then(|h| h.inner().get(name))
}

#[cfg(test)]
mod tests {
    use lapin::types::{FieldTable, LongString};

    use super::*;

    fn with(name: &str, value: AMQPValue) -> BasicProperties {
        let mut headers = FieldTable::default();
        headers.insert(name.into(), value);
        BasicProperties::default().with_headers(headers)
    }

    #[test]
    fn a_requeue_count_of_any_integer_type_or_text_is_read() {
        for (value, count) in [
            (AMQPValue::ShortShortInt(3), 3),
            (AMQPValue::LongInt(4), 4),
            (AMQPValue::LongLongInt(-2), 0),
            (AMQPValue::LongUInt(7), 7),
            (
                AMQPValue::LongString(LongString::from(" 2 ".as_bytes().to_vec())),
                2,
            ),
            (AMQPValue::Boolean(true), 0),
        ] {
            assert_eq!(
                requeue_count(&with(REQUEUE_COUNT_HEADER, value.clone())),
                count,
                "{value:?}"
            );
        }
        assert_eq!(requeue_count(&BasicProperties::default()), 0);
    }

    #[test]
    fn a_carried_key_is_short_text() {
        let text = |s: &str| AMQPValue::LongString(LongString::from(s.as_bytes().to_vec()));
        assert_eq!(
            carried_webhook_id(&with(WEBHOOK_ID_HEADER, text("k-1"))),
            Some("k-1")
        );
        assert_eq!(carried_webhook_id(&with(WEBHOOK_ID_HEADER, text(""))), None);
        let long = "x".repeat(129);
        assert_eq!(
            carried_webhook_id(&with(WEBHOOK_ID_HEADER, text(&long))),
            None
        );
        assert_eq!(
            carried_webhook_id(&with(WEBHOOK_ID_HEADER, AMQPValue::LongInt(1))),
            None
        );
    }
}
