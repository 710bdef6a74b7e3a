//! A stream function's (`kafkaTrigger`, `eventHubTrigger`) dead-letter topic, as the poison
//! endpoints show and replay it: `<topic>-poison`, or the function's `deadLetter.topic`, on
//! the trigger's own brokers (Event Hubs through its Kafka endpoint, signed in with the
//! trigger's connection string, as the worker does).
//!
//! Replay reads the topic from a position of the function's own — the committed offsets of the
//! consumer group `shoal-replay.<tenant>.<app>.<function>` on the dead-letter topic, which no
//! member ever joins — writes each dead letter this function wrote back to the trigger's topic
//! (the domain's `stream_trigger::replay`: key, value and headers kept, marked with
//! `shoal-replayed-from` and `shoal-replay-count`), then commits the position past what it
//! read. A second replay starts there, so no dead letter is replayed twice; a record of
//! another function (a shared `deadLetter.topic`) is passed over. The position lives with the
//! brokers, next to the records it points into: it survives the topic's retention and needs
//! no table of Shoal's, and the group's lag is what is left to replay. If the commit fails
//! after the writes, the next replay writes those records again: replayed twice, never lost.
//!
//! The brokers are the tenant's choice: each request checks them (bootstrap and advertised)
//! against the tenant's egress policy first, and every read is bounded in events, bytes and
//! time.

use std::time::Duration;

use chrono::{DateTime, Utc};
use futures::future::try_join_all;
use shoal_connectors::kafka::{
    KafkaProperties, OutgoingRecord, ReadLimits, StreamProducer, check_cluster, commit_position,
    read_from_position,
};
use shoal_domain::stream_trigger::StreamEvent;
use shoal_domain::stream_trigger::replay::{REPLAY_COUNT, dead_lettered_by, header, replay_record};
use shoal_egress::Egress;

use crate::routes::kinds::{FailedMessage, Replayed, Wanted, body_text};

/// Most bytes one read of the dead-letter topic takes (keys, values and headers).
const MAX_READ_BYTES: usize = 16 * 1024 * 1024;
/// Most records one listing reads to find the function's own.
const MAX_PEEK_READ: usize = 256;
/// How long one request may spend reading the topic (the request as a whole is bounded too).
const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one replay may take before it stops and commits what it did.
const REPLAY_TIME: Duration = Duration::from_secs(20);
/// The setting refusals name, as the worker's do.
const BROKER_SETTING: &str = "brokerList";

pub(super) struct DeadLetterTopic {
    /// The trigger's topic (event hub), where replays go.
    pub source_topic: String,
    pub topic: String,
    function: String,
    /// The function's replay position on `topic`.
    group: String,
    properties: KafkaProperties,
    egress: Egress,
}

impl DeadLetterTopic {
    pub fn new(
        source_topic: String,
        topic: String,
        connection: Vec<(String, String)>,
        (tenant, app, function): (&str, &str, &str),
        egress: Egress,
    ) -> DeadLetterTopic {
        let mut properties = KafkaProperties::new();
        for (key, value) in connection {
            properties.set(key, value);
        }
        DeadLetterTopic {
            source_topic,
            topic,
            function: function.to_owned(),
            group: format!("shoal-replay.{tenant}.{app}.{function}"),
            properties,
            egress,
        }
    }

    /// What is left to replay (every record after the position: a topic shared with other
    /// functions counts theirs too) and the first `top` of this function's.
    pub async fn peek(
        &self,
        top: u8,
        with_bodies: bool,
    ) -> Result<(u64, Vec<FailedMessage>), String> {
        self.check_brokers().await?;
        let limits = ReadLimits {
            max_events: MAX_PEEK_READ,
            max_bytes: MAX_READ_BYTES,
            timeout: READ_TIMEOUT,
        };
        let read = read_from_position(&self.properties, &self.group, &self.topic, limits)
            .await
            .map_err(|e| e.to_string())?;
        let messages = read
            .events
            .iter()
            .filter(|record| dead_lettered_by(record, &self.function))
            .take(usize::from(top))
            .map(|record| poison_message(record, with_bodies))
            .collect();
        Ok((read.pending, messages))
    }

    /// Writes up to `limit` of this function's dead letters back to the trigger's topic, in
    /// order per partition, and moves the position past them (see the module doc).
    pub async fn replay(&self, ids: Option<&[String]>, limit: u32) -> Result<Replayed, String> {
        if ids.is_some() {
            // Checked when the request is parsed; kept here so no caller can bypass it.
            return Err(NO_SELECTION.into());
        }
        self.check_brokers().await?;
        let producer = StreamProducer::new(&self.properties).map_err(|e| e.to_string())?;
        let started = tokio::time::Instant::now();
        let mut replayed = Vec::new();
        while (replayed.len() as u32) < limit && started.elapsed() < REPLAY_TIME {
            let limits = ReadLimits {
                max_events: (limit as usize - replayed.len()).max(1),
                max_bytes: MAX_READ_BYTES,
                timeout: READ_TIMEOUT,
            };
            let read = read_from_position(&self.properties, &self.group, &self.topic, limits)
                .await
                .map_err(|e| e.to_string())?;
            if read.events.is_empty() {
                break;
            }
            let mine: Vec<&StreamEvent> = read
                .events
                .iter()
                .filter(|record| dead_lettered_by(record, &self.function))
                .collect();
            try_join_all(mine.iter().map(|record| {
                let replay = replay_record(record, &self.source_topic);
                producer.send(
                    &self.source_topic,
                    OutgoingRecord {
                        key: replay.key,
                        value: replay.value,
                        headers: replay.headers,
                        partition: replay.partition,
                    },
                )
            }))
            .await
            .map_err(|e| format!("writing to {} failed: {e}", self.source_topic))?;
            commit_position(
                &self.properties,
                &self.group,
                &self.topic,
                &next_offsets(&read.events),
            )
            .await
            .map_err(|e| {
                format!(
                    "{} records were written back to {}, but the replay position could not be saved, so the next replay writes them again: {e}",
                    mine.len(),
                    self.source_topic
                )
            })?;
            replayed.extend(mine.iter().map(|record| dead_letter_id(record)));
            if read.complete {
                break;
            }
        }
        Ok(Replayed::new(replayed, Wanted::new(None)))
    }

    async fn check_brokers(&self) -> Result<(), String> {
        check_cluster(&self.properties, &self.topic, BROKER_SETTING, &self.egress)
            .await
            .map_err(|e| e.to_string())
    }
}

/// Why `messageIds` is refused for a stream function.
pub(super) const NO_SELECTION: &str = "a stream function's dead letters are replayed in order from its replay position (so a second replay never repeats one); name how many with count instead";

/// Per partition, the offset after the last record read: the position once they are handled.
fn next_offsets(records: &[StreamEvent]) -> Vec<(i32, i64)> {
    let mut next: Vec<(i32, i64)> = Vec::new();
    for record in records {
        match next.iter_mut().find(|(p, _)| *p == record.partition) {
            Some((_, offset)) => *offset = (*offset).max(record.offset + 1),
            None => next.push((record.partition, record.offset + 1)),
        }
    }
    next
}

/// A dead letter's id in the listing and the replay result: `<partition>-<offset>` on the
/// dead-letter topic.
fn dead_letter_id(record: &StreamEvent) -> String {
    format!("{}-{}", record.partition, record.offset)
}

fn poison_message(record: &StreamEvent, with_bodies: bool) -> FailedMessage {
    let failed_at = header(record, "shoal-dead-letter-time")
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.with_timezone(&Utc));
    FailedMessage {
        message_id: dead_letter_id(record),
        failed_at: record.timestamp.or(failed_at).unwrap_or_default(),
        expires_at: None,
        failures: header(record, REPLAY_COUNT)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0),
        reason: header(record, "shoal-dead-letter-reason").map(str::to_owned),
        body: with_bodies.then(|| body_text(record.value.as_deref().unwrap_or_default())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(partition: i32, offset: i64) -> StreamEvent {
        StreamEvent::at("orders-poison", partition, offset)
    }

    #[test]
    fn the_position_moves_past_the_last_record_read_in_each_partition() {
        // (partition, offset) of the records read → the position per partition
        type Offsets = Vec<(i32, i64)>;
        let cases: [(Offsets, Offsets); 3] = [
            (vec![], vec![]),
            (vec![(0, 4), (0, 5), (0, 6)], vec![(0, 7)]),
            (vec![(1, 9), (0, 2), (1, 10), (0, 3)], vec![(1, 11), (0, 4)]),
        ];
        for (read, want) in cases {
            let records: Vec<StreamEvent> = read.iter().map(|&(p, o)| record(p, o)).collect();
            assert_eq!(next_offsets(&records), want, "{read:?}");
        }
    }
}
