//! Replaying a stream function's dead letters: a record of its dead-letter topic written back
//! to the trigger's topic (`POST …/poison/replay`).
//!
//! Only records this function dead-lettered are replayed (its name in
//! `shoal-dead-letter-function`): a `deadLetter.topic` may be shared by several functions, and
//! a record without the header was not written by Shoal. The replayed record keeps the key,
//! the value and the event's own headers; the `shoal-dead-letter-*` headers are dropped and two
//! are added (replacing earlier ones): `shoal-replayed-from`, the dead letter's
//! `<topic>/<partition>/<offset>`, and `shoal-replay-count`, how often the event has been
//! replayed (1, then one more each time it fails and is replayed again). It goes to the
//! partition it came from when it came from this topic, so its key's order holds there.

use crate::stream_trigger::payload::StreamEvent;

/// Added to a replayed record: where its dead letter was.
pub const REPLAYED_FROM: &str = "shoal-replayed-from";
/// Added to a replayed record: how often the event has been replayed.
pub const REPLAY_COUNT: &str = "shoal-replay-count";
/// What [`crate::stream_trigger::dead_letter_headers`] adds start with this.
pub const DEAD_LETTER_PREFIX: &str = "shoal-dead-letter-";

/// A dead letter as written back to the trigger's topic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayRecord {
    pub key: Option<Vec<u8>>,
    pub value: Vec<u8>,
    pub headers: Vec<(String, Vec<u8>)>,
    /// The partition it came from, when that was `source_topic`'s; else the key decides.
    pub partition: Option<i32>,
}

/// A header's value as text.
pub fn header<'a>(record: &'a StreamEvent, name: &str) -> Option<&'a str> {
    record
        .headers
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .and_then(|(_, v)| v.as_deref())
        .and_then(|v| std::str::from_utf8(v).ok())
}

/// Whether `function` dead-lettered this record.
pub fn dead_lettered_by(record: &StreamEvent, function: &str) -> bool {
    header(record, "shoal-dead-letter-function") == Some(function)
}

/// The record to write back to `source_topic` for the dead letter `record` (read from its
/// dead-letter topic).
pub fn replay_record(record: &StreamEvent, source_topic: &str) -> ReplayRecord {
    let count = header(record, REPLAY_COUNT)
        .and_then(|c| c.trim().parse::<u32>().ok())
        .unwrap_or(0)
        .saturating_add(1);
    let partition = match (
        header(record, "shoal-dead-letter-topic"),
        header(record, "shoal-dead-letter-partition").and_then(|p| p.parse::<i32>().ok()),
    ) {
        (Some(topic), Some(partition)) if topic == source_topic && partition >= 0 => {
            Some(partition)
        }
        _ => None,
    };
    let mut headers: Vec<(String, Vec<u8>)> = record
        .headers
        .iter()
        .filter(|(k, _)| {
            !k.starts_with(DEAD_LETTER_PREFIX) && k != REPLAYED_FROM && k != REPLAY_COUNT
        })
        .map(|(k, v)| (k.clone(), v.clone().unwrap_or_default()))
        .collect();
    headers.push((
        REPLAYED_FROM.to_owned(),
        format!("{}/{}/{}", record.topic, record.partition, record.offset).into_bytes(),
    ));
    headers.push((REPLAY_COUNT.to_owned(), count.to_string().into_bytes()));
    ReplayRecord {
        key: record.key.clone(),
        value: record.value.clone().unwrap_or_default(),
        headers,
        partition,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dead_letter(headers: &[(&str, &str)]) -> StreamEvent {
        StreamEvent {
            topic: "orders-poison".into(),
            partition: 0,
            offset: 12,
            key: Some(b"customer-7".to_vec()),
            value: Some(b"order 1".to_vec()),
            timestamp: None,
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), Some(v.as_bytes().to_vec())))
                .collect(),
            leader_epoch: None,
        }
    }

    fn text(headers: &[(String, Vec<u8>)]) -> Vec<(String, String)> {
        headers
            .iter()
            .map(|(k, v)| (k.clone(), String::from_utf8(v.clone()).unwrap()))
            .collect()
    }

    const WRITTEN: &[(&str, &str)] = &[
        ("trace", "t-1"),
        ("shoal-dead-letter-topic", "orders"),
        ("shoal-dead-letter-partition", "2"),
        ("shoal-dead-letter-offset", "40"),
        ("shoal-dead-letter-function", "bill"),
        ("shoal-dead-letter-reason", "HTTP 500"),
        ("shoal-dead-letter-time", "2026-11-28T10:00:00Z"),
    ];

    #[test]
    fn a_replayed_record_keeps_key_value_and_headers_and_is_marked() {
        let replayed = replay_record(&dead_letter(WRITTEN), "orders");
        assert_eq!(replayed.key.as_deref(), Some(&b"customer-7"[..]));
        assert_eq!(replayed.value, b"order 1");
        assert_eq!(replayed.partition, Some(2));
        assert_eq!(
            text(&replayed.headers),
            [
                ("trace".to_owned(), "t-1".to_owned()),
                (REPLAYED_FROM.to_owned(), "orders-poison/0/12".to_owned()),
                (REPLAY_COUNT.to_owned(), "1".to_owned()),
            ]
        );
    }

    #[test]
    fn the_replay_count_grows_and_the_partition_is_kept_only_for_the_same_topic() {
        // (dead letter's headers, trigger topic, replay count written, partition written)
        type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str, Option<i32>);
        let cases: [Case; 5] = [
            (WRITTEN, "orders", "1", Some(2)),
            (WRITTEN, "orders-v2", "1", None),
            (
                &[
                    ("shoal-replay-count", "2"),
                    ("shoal-dead-letter-topic", "orders"),
                    ("shoal-dead-letter-partition", "0"),
                ],
                "orders",
                "3",
                Some(0),
            ),
            (&[("shoal-replay-count", "many")], "orders", "1", None),
            (
                &[
                    ("shoal-dead-letter-topic", "orders"),
                    ("shoal-dead-letter-partition", "-1"),
                ],
                "orders",
                "1",
                None,
            ),
        ];
        for (headers, source, count, partition) in cases {
            let replayed = replay_record(&dead_letter(headers), source);
            let written = text(&replayed.headers);
            assert_eq!(
                written.iter().filter(|(k, _)| k == REPLAY_COUNT).count(),
                1,
                "{headers:?}"
            );
            assert!(
                written.contains(&(REPLAY_COUNT.to_owned(), count.to_owned())),
                "{headers:?}: {written:?}"
            );
            assert_eq!(replayed.partition, partition, "{headers:?}");
        }
    }

    #[test]
    fn only_the_function_that_dead_lettered_a_record_replays_it() {
        assert!(dead_lettered_by(&dead_letter(WRITTEN), "bill"));
        assert!(!dead_lettered_by(&dead_letter(WRITTEN), "ship"));
        assert!(!dead_lettered_by(&dead_letter(&[("trace", "t")]), "bill"));
    }
}
