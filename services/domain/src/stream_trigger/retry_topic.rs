//! A stream event parked for a far-off retry (`crate::durable_retry`). A partition is a queue
//! in order: an event cannot be made invisible for a while, and a retry waited for in memory
//! holds back every event behind it in the partition and is lost with the worker (the batch is
//! read again from the last checkpoint and its `RetryCount` starts over at 0). So an event whose
//! next retry is [`crate::durable_retry::PARK_FROM`] or more away is written to the trigger's
//! retry topic (`<topic>-retry`, on the trigger's own brokers) with its due time and where its
//! retries stand in headers, and the partition's checkpoint moves on. The retry topic is read by
//! a consumer group of its own (`<consumerGroup>-retry`), which waits for each record's due time
//! before it resumes the record's retries.
//!
//! The record is the same event to the handler: its key, value and headers (without Shoal's),
//! and its original topic, partition, offset and timestamp, so its payload and `webhook-id` are
//! those of the attempt before. The events of one parked batch (`cardinality: many`) are written
//! one record each, side by side in one partition of the retry topic, under one [`BATCH`] id, so
//! they are tried again together.
//!
//! Two things change for a parked event, and the docs say so: it leaves its partition's order
//! (events behind it are processed while it waits), and a retry-topic partition is read in order,
//! so a record is never tried before its due time but may wait behind one due later (by at most
//! the difference between the policy's longest and shortest parked waits).

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::StreamEvent;
use crate::durable_retry::{FAILURE_LIMIT, RetryState};

/// When the retry is due, in Unix milliseconds.
pub const DUE: &str = "shoal-retry-due";
/// The retries made so far (the next attempt's `RetryCount`).
pub const RETRY_COUNT: &str = "shoal-retry-count";
/// The retry policy's back-off so far, in milliseconds.
pub const BACKOFF_MS: &str = "shoal-retry-backoff-ms";
/// Why the attempt before the park failed.
pub const PREVIOUS_FAILURE: &str = "shoal-retry-previous-failure";
/// The event's own topic, partition, offset and timestamp (Unix milliseconds).
pub const TOPIC: &str = "shoal-retry-topic";
pub const PARTITION: &str = "shoal-retry-partition";
pub const OFFSET: &str = "shoal-retry-offset";
pub const TIMESTAMP: &str = "shoal-retry-timestamp";
/// The parked invocation the record belongs to: records with the same id are tried together.
pub const BATCH: &str = "shoal-retry-batch";

const HEADERS: [&str; 9] = [
    DUE,
    RETRY_COUNT,
    BACKOFF_MS,
    PREVIOUS_FAILURE,
    TOPIC,
    PARTITION,
    OFFSET,
    TIMESTAMP,
    BATCH,
];

/// The retry topic of a trigger reading `topic`.
pub fn retry_topic(topic: &str) -> String {
    format!("{topic}-retry")
}

/// The consumer group that reads the retry topic of a trigger in `consumer_group`: a group of
/// its own, so the retry records' members never join (and rebalance) the trigger's group.
pub fn retry_group(consumer_group: &str) -> String {
    format!("{consumer_group}-retry")
}

/// The headers of `event`'s retry record: its own (without Shoal's retry headers), then where
/// its retries stand and when the next is due. `batch` names the parked invocation.
pub fn retry_headers(
    event: &StreamEvent,
    state: &RetryState,
    due: DateTime<Utc>,
    batch: &str,
) -> Vec<(String, Vec<u8>)> {
    let mut headers: Vec<(String, Vec<u8>)> = event
        .headers
        .iter()
        .filter(|(k, _)| !HEADERS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone().unwrap_or_default()))
        .collect();
    let mut add = |name: &str, value: String| headers.push((name.to_owned(), value.into_bytes()));
    add(DUE, due.timestamp_millis().to_string());
    add(RETRY_COUNT, state.retries.to_string());
    add(
        BACKOFF_MS,
        u64::try_from(state.backoff.as_millis())
            .unwrap_or(u64::MAX)
            .to_string(),
    );
    if let Some(failure) = &state.previous_failure {
        add(
            PREVIOUS_FAILURE,
            failure.chars().take(FAILURE_LIMIT).collect(),
        );
    }
    add(TOPIC, event.topic.clone());
    add(PARTITION, event.partition.to_string());
    add(OFFSET, event.offset.to_string());
    if let Some(at) = event.timestamp {
        add(TIMESTAMP, at.timestamp_millis().to_string());
    }
    add(BATCH, batch.to_owned());
    headers
}

/// A record read back from the retry topic.
#[derive(Clone, Debug, PartialEq)]
pub struct ParkedEvent {
    /// The event as it was first read: its own topic, partition, offset, timestamp and headers.
    pub event: StreamEvent,
    pub state: RetryState,
    pub due: DateTime<Utc>,
    /// The parked invocation it belongs to.
    pub batch: String,
    /// Where the record itself is: `(partition, offset)` of the retry topic.
    pub record: (i32, i64),
}

/// Reads `record` (from the retry topic) back into the event it parks; `Err` says which header
/// is missing or unreadable (a record Shoal did not write).
pub fn parked_event(record: &StreamEvent) -> Result<ParkedEvent, String> {
    let header = |name: &str| -> Result<Option<String>, String> {
        match record.headers.iter().rev().find(|(k, _)| k == name) {
            None => Ok(None),
            Some((_, value)) => String::from_utf8(value.clone().unwrap_or_default())
                .map(Some)
                .map_err(|_| format!("header {name} is not UTF-8")),
        }
    };
    let required = |name: &str| -> Result<String, String> {
        header(name)?.ok_or_else(|| format!("header {name} is missing"))
    };
    fn number<T: std::str::FromStr>(name: &str, text: &str) -> Result<T, String> {
        text.parse()
            .map_err(|_| format!("header {name} is not a number: {text:?}"))
    }
    let millis = |name: &str, text: &str| -> Result<DateTime<Utc>, String> {
        DateTime::from_timestamp_millis(number(name, text)?)
            .ok_or_else(|| format!("header {name} is out of range: {text}"))
    };
    let due = millis(DUE, &required(DUE)?)?;
    let timestamp = match header(TIMESTAMP)? {
        Some(text) => Some(millis(TIMESTAMP, &text)?),
        None => None,
    };
    let state = RetryState {
        retries: number(RETRY_COUNT, &required(RETRY_COUNT)?)?,
        previous_failure: header(PREVIOUS_FAILURE)?,
        backoff: Duration::from_millis(number(BACKOFF_MS, &required(BACKOFF_MS)?)?),
    };
    let event = StreamEvent {
        topic: required(TOPIC)?,
        partition: number(PARTITION, &required(PARTITION)?)?,
        offset: number(OFFSET, &required(OFFSET)?)?,
        key: record.key.clone(),
        value: record.value.clone(),
        timestamp,
        headers: record
            .headers
            .iter()
            .filter(|(k, _)| !HEADERS.contains(&k.as_str()))
            .cloned()
            .collect(),
        leader_epoch: None,
    };
    Ok(ParkedEvent {
        event,
        state,
        due,
        batch: required(BATCH)?,
        record: (record.partition, record.offset),
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn event() -> StreamEvent {
        StreamEvent {
            key: Some(b"customer-7".to_vec()),
            value: Some(b"{\"total\":12}".to_vec()),
            timestamp: DateTime::from_timestamp_millis(1_790_000_000_123),
            headers: vec![("trace".into(), Some(b"t-1".to_vec()))],
            ..StreamEvent::at("orders", 3, 41)
        }
    }

    /// `event`'s retry record as the retry topic returns it, at `(partition, offset)`.
    fn record(headers: Vec<(String, Vec<u8>)>, at: (i32, i64)) -> StreamEvent {
        StreamEvent {
            key: Some(b"customer-7".to_vec()),
            value: Some(b"{\"total\":12}".to_vec()),
            headers: headers.into_iter().map(|(k, v)| (k, Some(v))).collect(),
            ..StreamEvent::at("orders-retry", at.0, at.1)
        }
    }

    #[test]
    fn a_parked_event_reads_back_as_the_event_it_was_with_its_retries() {
        let state = RetryState {
            retries: 2,
            previous_failure: Some("the handler answered 500".into()),
            backoff: Duration::from_secs(60),
        };
        let due = DateTime::from_timestamp_millis(1_790_000_600_000).unwrap();
        let headers = retry_headers(&event(), &state, due, "orders-3-41");
        let parked = parked_event(&record(headers, (3, 7))).unwrap();
        assert_eq!(
            parked,
            ParkedEvent {
                event: event(),
                state,
                due,
                batch: "orders-3-41".into(),
                record: (3, 7),
            }
        );
    }

    #[test]
    fn parking_again_replaces_the_retry_headers() {
        let due = DateTime::from_timestamp_millis(1_000).unwrap();
        let first = RetryState::default().failed("one", Duration::from_secs(30));
        let parked = parked_event(&record(retry_headers(&event(), &first, due, "b"), (0, 0)));
        let again = parked.unwrap();
        let second = again.state.failed("two", Duration::from_secs(60));
        let headers = retry_headers(&again.event, &second, due, "b");
        assert_eq!(headers.iter().filter(|(k, _)| k == RETRY_COUNT).count(), 1);
        let back = parked_event(&record(headers, (0, 1))).unwrap();
        assert_eq!(back.state, second);
        assert_eq!(back.event, event());
    }

    #[test]
    fn a_record_shoal_did_not_write_is_refused_with_the_header_at_fault() {
        let due = DateTime::from_timestamp_millis(1_000).unwrap();
        let good = retry_headers(&event(), &RetryState::default(), due, "b");
        let without = |name: &str| -> Vec<(String, Vec<u8>)> {
            good.iter().filter(|(k, _)| k != name).cloned().collect()
        };
        let with = |name: &str, value: &[u8]| -> Vec<(String, Vec<u8>)> {
            let mut h = without(name);
            h.push((name.to_owned(), value.to_vec()));
            h
        };
        let cases = [
            (without(DUE), "header shoal-retry-due is missing"),
            (without(BATCH), "header shoal-retry-batch is missing"),
            (
                with(RETRY_COUNT, b"-1"),
                "header shoal-retry-count is not a number: \"-1\"",
            ),
            (
                with(OFFSET, b"\xff"),
                "header shoal-retry-offset is not UTF-8",
            ),
            (
                with(DUE, b"99999999999999999"),
                "header shoal-retry-due is out of range: 99999999999999999",
            ),
        ];
        for (headers, expected) in cases {
            assert_eq!(
                parked_event(&record(headers, (0, 0))).unwrap_err(),
                expected
            );
        }
    }

    #[test]
    fn names() {
        assert_eq!(retry_topic("orders"), "orders-retry");
        assert_eq!(retry_group("billing"), "billing-retry");
    }

    proptest! {
        #[test]
        fn any_event_and_state_survive_the_retry_topic(
            partition in 0i32..1000, offset in 0i64..i64::MAX, retries in 0u32..u32::MAX,
            backoff_ms in 0u64..1_000_000_000, failure in proptest::option::of(".{0,40}"),
            due_ms in 0i64..8_000_000_000_000, stamp in proptest::option::of(0i64..8_000_000_000_000),
            value in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            let event = StreamEvent {
                value: Some(value),
                timestamp: stamp.and_then(DateTime::from_timestamp_millis),
                ..StreamEvent::at("t", partition, offset)
            };
            let state = RetryState {
                retries,
                previous_failure: failure,
                backoff: Duration::from_millis(backoff_ms),
            };
            let due = DateTime::from_timestamp_millis(due_ms).unwrap();
            let headers = retry_headers(&event, &state, due, "id");
            let record = StreamEvent {
                value: event.value.clone(),
                headers: headers.into_iter().map(|(k, v)| (k, Some(v))).collect(),
                ..StreamEvent::at("t-retry", 0, 5)
            };
            let back = parked_event(&record).unwrap();
            prop_assert_eq!(back.event, event);
            prop_assert_eq!(back.state, state);
            prop_assert_eq!(back.due, due);
        }
    }
}
