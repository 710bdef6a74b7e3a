//! `deadLetter`, a Shoal extension of `function.json` for stream triggers: where events whose
//! final attempt failed are written before the checkpoint moves past them.
//!
//! Azure's Kafka and Event Hubs extensions have no such target: a failed batch's checkpoint
//! moves on and the events are gone unless the function kept them (the Kafka extension's
//! `Trigger/SingleItemFunctionExecutor.cs` logs "Consider implementing dead-letter handling in
//! your function code"). The reference document on reliable event processing asks for exactly
//! that handling, so Shoal does it for the function:
//!
//! * `{"topic": "orders-failed"}` — a topic on the trigger's own brokers (a `%Setting%`
//!   reference is resolved); the record keeps the event's key, value and headers and adds
//!   `shoal-dead-letter-*` headers saying where it came from and why it failed;
//! * `{"queueName": "failed", "connection": "MyStorage"}` — a Storage queue (the connection
//!   resolved like a queue binding's; absent means `AzureWebJobsStorage`); the message is a
//!   JSON document with the same facts and the value and key in base64;
//! * absent — the topic `<topic>-poison` on the trigger's brokers, named like the Storage
//!   Queue trigger's `<queue>-poison`.
//!
//! A target topic or queue that does not exist is created by the worker before its first write
//! (a topic with the source topic's partition count). The checkpoint moves only once the write
//! succeeded; while the target cannot be written the partition's progress stops and the
//! listener says why, so no event is dropped.

use base64::Engine as _;
use chrono::{DateTime, SecondsFormat, Utc};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::names::QueueName;
use crate::stream_trigger::payload::StreamEvent;
use crate::validation::{Problems, ValidationError, join_path, object_from_json};

/// Most characters of the failure reason kept in a dead-letter record.
pub const REASON_LIMIT: usize = 1024;

/// Where failed events go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeadLetterTarget {
    Topic(String),
    StorageQueue {
        queue_name: QueueName,
        connection: Option<String>,
    },
}

/// `deadLetter` as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeadLetter(pub DeadLetterTarget);

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Written {
    topic: Option<String>,
    queue_name: Option<String>,
    connection: Option<String>,
}

impl DeadLetter {
    pub fn parse(value: &Value, path: &str) -> Result<DeadLetter, ValidationError> {
        let written: Written = object_from_json(value.clone(), path)?;
        let mut problems = Problems::new();
        let target = match (written.topic, written.queue_name) {
            (Some(topic), None) => {
                if written.connection.is_some() {
                    problems.push(
                        join_path(path, "connection"),
                        "applies to queueName; a dead-letter topic is on the trigger's own brokers",
                    );
                }
                if !is_topic_or_reference(&topic) {
                    problems.push(
                        join_path(path, "topic"),
                        "must be 1 to 249 letters, digits, '.', '_' and '-' (or an app setting reference like %DeadLetterTopic%)",
                    );
                }
                Some(DeadLetterTarget::Topic(topic))
            }
            (None, Some(queue)) => match QueueName::parse(&queue) {
                Ok(queue_name) => Some(DeadLetterTarget::StorageQueue {
                    queue_name,
                    connection: written.connection.filter(|c| !c.trim().is_empty()),
                }),
                Err(message) => {
                    problems.push(join_path(path, "queueName"), message);
                    None
                }
            },
            (Some(_), Some(_)) => {
                problems.push(path, "set either topic or queueName, not both");
                None
            }
            (None, None) => {
                problems.push(
                    path,
                    "needs topic (a topic on the trigger's brokers) or queueName (a Storage queue)",
                );
                None
            }
        };
        problems.finish()?;
        // Every branch without a target recorded a problem, so `finish` returned above.
        target
            .map(DeadLetter)
            .ok_or_else(|| ValidationError::single(path, "is not a dead-letter target"))
    }
}

/// The target of a function without `deadLetter`: `<topic>-poison`.
pub fn default_target(topic: &str) -> DeadLetterTarget {
    DeadLetterTarget::Topic(format!("{topic}-poison"))
}

fn is_topic_or_reference(topic: &str) -> bool {
    let reference = topic
        .strip_prefix('%')
        .and_then(|r| r.strip_suffix('%'))
        .is_some_and(|name| !name.is_empty() && !name.contains('%'));
    reference
        || (!topic.is_empty()
            && topic.len() <= 249
            && topic
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
}

/// Why and when an event was given up, for its dead-letter record.
#[derive(Clone, Copy, Debug)]
pub struct Failure<'a> {
    pub function: &'a str,
    pub reason: &'a str,
    pub at: DateTime<Utc>,
}

/// The headers of an event's dead-letter record on a topic: the event's own, then where it
/// came from and why it was given up.
pub fn dead_letter_headers(event: &StreamEvent, failure: &Failure<'_>) -> Vec<(String, Vec<u8>)> {
    let mut headers: Vec<(String, Vec<u8>)> = event
        .headers
        .iter()
        .map(|(k, v)| (k.clone(), v.clone().unwrap_or_default()))
        .collect();
    for (name, value) in [
        ("shoal-dead-letter-topic", event.topic.clone()),
        ("shoal-dead-letter-partition", event.partition.to_string()),
        ("shoal-dead-letter-offset", event.offset.to_string()),
        ("shoal-dead-letter-function", failure.function.to_owned()),
        ("shoal-dead-letter-reason", truncated(failure.reason)),
        ("shoal-dead-letter-time", utc(failure.at)),
    ] {
        headers.push((name.to_owned(), value.into_bytes()));
    }
    headers
}

/// The Storage queue message for an event given up: a JSON document.
pub fn dead_letter_message(event: &StreamEvent, failure: &Failure<'_>) -> Value {
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    json!({
        "topic": event.topic,
        "partition": event.partition,
        "offset": event.offset,
        "timestamp": event.timestamp.map(utc),
        "key": event.key.as_deref().map(b64),
        "value": event.value.as_deref().map(b64),
        "headers": event.headers.iter()
            .map(|(k, v)| json!({"key": k, "value": v.as_deref().map(b64)}))
            .collect::<Vec<_>>(),
        "function": failure.function,
        "reason": truncated(failure.reason),
        "failedAt": utc(failure.at),
    })
}

fn truncated(reason: &str) -> String {
    reason.chars().take(REASON_LIMIT).collect()
}

fn utc(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn targets_parse_from_their_written_forms() {
        let topic = DeadLetter::parse(&json!({"topic": "orders-failed"}), "deadLetter").unwrap();
        assert_eq!(topic.0, DeadLetterTarget::Topic("orders-failed".into()));
        let reference = DeadLetter::parse(&json!({"topic": "%Failed%"}), "deadLetter").unwrap();
        assert_eq!(reference.0, DeadLetterTarget::Topic("%Failed%".into()));
        let queue = DeadLetter::parse(
            &json!({"queueName": "failed", "connection": "MyStorage"}),
            "deadLetter",
        )
        .unwrap();
        assert_eq!(
            queue.0,
            DeadLetterTarget::StorageQueue {
                queue_name: QueueName::parse("failed").unwrap(),
                connection: Some("MyStorage".into()),
            }
        );
        assert_eq!(
            default_target("orders"),
            DeadLetterTarget::Topic("orders-poison".into())
        );
    }

    #[test]
    fn bad_targets_name_their_field() {
        let cases = [
            (json!({}), "deadLetter", "needs topic"),
            (
                json!({"topic": "a", "queueName": "b"}),
                "deadLetter",
                "set either",
            ),
            (
                json!({"topic": "bad topic"}),
                "deadLetter.topic",
                "must be 1 to 249",
            ),
            (
                json!({"topic": "a", "connection": "S"}),
                "deadLetter.connection",
                "applies to queueName",
            ),
            (
                json!({"queueName": "Bad_Queue"}),
                "deadLetter.queueName",
                "",
            ),
            (json!({"queue": "x"}), "deadLetter.queue", "unknown field"),
            (json!("orders"), "deadLetter", "expected an object"),
        ];
        for (value, path, message) in cases {
            let err = DeadLetter::parse(&value, "deadLetter").unwrap_err();
            assert_eq!(err.errors[0].path, path, "{value}: {err}");
            assert!(err.errors[0].message.starts_with(message), "{value}: {err}");
        }
    }

    #[test]
    fn a_dead_letter_record_says_where_the_event_came_from_and_why() {
        let event = StreamEvent {
            topic: "orders".into(),
            partition: 2,
            offset: 41,
            key: Some(b"k".to_vec()),
            value: Some(vec![0xff, 0x00]),
            timestamp: None,
            headers: vec![
                ("trace".into(), Some(b"t1".to_vec())),
                ("empty".into(), None),
            ],
            leader_epoch: None,
        };
        let at = DateTime::parse_from_rfc3339("2026-11-27T01:02:03Z")
            .unwrap()
            .to_utc();
        let long = "x".repeat(REASON_LIMIT + 10);
        let failure = Failure {
            function: "Process",
            reason: &long,
            at,
        };
        let headers = dead_letter_headers(&event, &failure);
        let get = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| String::from_utf8(v.clone()).unwrap())
        };
        assert_eq!(get("trace").as_deref(), Some("t1"));
        assert_eq!(get("empty").as_deref(), Some(""));
        assert_eq!(get("shoal-dead-letter-topic").as_deref(), Some("orders"));
        assert_eq!(get("shoal-dead-letter-partition").as_deref(), Some("2"));
        assert_eq!(get("shoal-dead-letter-offset").as_deref(), Some("41"));
        assert_eq!(
            get("shoal-dead-letter-function").as_deref(),
            Some("Process")
        );
        assert_eq!(
            get("shoal-dead-letter-reason").map(|r| r.len()),
            Some(REASON_LIMIT)
        );
        assert_eq!(
            get("shoal-dead-letter-time").as_deref(),
            Some("2026-11-27T01:02:03Z")
        );

        let message = dead_letter_message(&event, &failure);
        assert_eq!(message["value"], "/wA=");
        assert_eq!(message["key"], "aw==");
        assert_eq!(message["offset"], 41);
        assert_eq!(
            message["headers"][0],
            json!({"key": "trace", "value": "dDE="})
        );
    }
}
