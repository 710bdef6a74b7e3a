//! Kafka, and Event Hubs through its Kafka endpoint, with librdkafka (the `rdkafka` crate,
//! built from its bundled source): the thin I/O layer under the stream triggers. See
//! `docs/triggers.md`, "Kafka: the client layer".
//!
//! * [`StreamConsumer`]: a member of a consumer group on one topic; fetches batches of
//!   [`StreamEvent`]s and commits the next offsets only when told to.
//! * [`StreamProducer`]: writes records, acknowledged by all in-sync replicas.
//! * [`consumer_lag`]: a group's lag per partition, read from outside the group (for scaling).
//! * [`read_from_position`] and [`commit_position`]: a topic read from a group's committed
//!   position, and the position moved, without joining the group (dead-letter replay).
//! * [`create_topic`] (idempotent), and [`create_topic_like`]: a missing topic created with
//!   another's partition count.
//! * [`check_cluster`]: the bootstrap and advertised brokers under the egress policy, before a
//!   client dials them.
//!
//! Connections are described by [`KafkaProperties`], librdkafka's own property names, as the
//! domain resolves them from a binding and the app's settings. Errors are [`KafkaError`]s whose
//! messages never contain a secret property's value.

mod admin;
mod consumer;
mod egress;
mod error;
mod lag;
mod position;
mod producer;
mod properties;

pub use admin::{TopicCreation, create_topic, create_topic_like, partition_count};
pub use consumer::{StartFrom, StreamConsumer, StreamEvent};
pub use egress::check_cluster;
pub use error::KafkaError;
pub use lag::{PartitionLag, TopicLag, consumer_lag};
pub use position::{PositionedRead, ReadLimits, commit_position, read_from_position};
pub use producer::{OutgoingRecord, StreamProducer};
pub use properties::KafkaProperties;

use rdkafka::config::RDKafkaLogLevel;

/// Topic, group and client names: not empty, no longer than Kafka allows (249), and printable
/// ASCII, so that a name that cannot work fails here with a clear message rather than as a
/// broker error code. (Kafka's topics allow `[a-zA-Z0-9._-]`; the broker says so for others.)
fn check_name(what: &str, name: &str) -> Result<(), KafkaError> {
    if name.is_empty() {
        return Err(KafkaError::InvalidRequest(format!("the {what} is empty")));
    }
    if name.len() > 249 {
        return Err(KafkaError::InvalidRequest(format!(
            "the {what} is {} characters long; at most 249 are allowed",
            name.len()
        )));
    }
    if name.chars().any(|c| !c.is_ascii_graphic()) {
        return Err(KafkaError::InvalidRequest(format!(
            "the {what} {name:?} may contain only printable ASCII characters without spaces"
        )));
    }
    Ok(())
}

/// librdkafka's own log lines, at the matching tracing level.
fn client_log(level: RDKafkaLogLevel, facility: &str, message: &str) {
    match level {
        RDKafkaLogLevel::Emerg
        | RDKafkaLogLevel::Alert
        | RDKafkaLogLevel::Critical
        | RDKafkaLogLevel::Error => tracing::error!(target: "librdkafka", facility, "{message}"),
        RDKafkaLogLevel::Warning => tracing::warn!(target: "librdkafka", facility, "{message}"),
        RDKafkaLogLevel::Notice | RDKafkaLogLevel::Info => {
            tracing::info!(target: "librdkafka", facility, "{message}")
        }
        RDKafkaLogLevel::Debug => tracing::debug!(target: "librdkafka", facility, "{message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_cannot_work_are_refused_with_the_reason() {
        let long = "t".repeat(250);
        let cases = [
            ("", "is empty"),
            (long.as_str(), "at most 249"),
            ("my topic", "printable ASCII"),
            ("tópico", "printable ASCII"),
        ];
        for (name, reason) in cases {
            let err = check_name("topic", name).unwrap_err().to_string();
            assert!(err.contains(reason), "{name:?}: {err}");
        }
        for name in [
            "orders",
            "orders.v2-dlq_1",
            "$Default",
            "t".repeat(249).as_str(),
        ] {
            assert!(check_name("topic", name).is_ok(), "{name}");
        }
    }
}
