//! Parking a stream invocation's events on the trigger's retry topic when their next retry is
//! far off (see the domain's `stream_trigger::retry_topic` for the record and why), so the
//! partition's checkpoint moves on; `retry_reader` resumes them when they are due.
//!
//! The events of one park go to one partition of the retry topic — the first event's partition,
//! modulo the retry topic's partition count — so a batch's events are read back together and
//! events parked from one partition keep their order there. When the retry topic cannot be
//! written (its creation refused, the brokers unreachable) the retry is waited for in memory as
//! it was before retries were parked: the partition waits on it, nothing is lost.

use chrono::{DateTime, Utc};
use shoal_connectors::kafka::{KafkaError, OutgoingRecord};
use shoal_domain::stream_trigger::retry_topic::{retry_headers, retry_topic};
use shoal_domain::stream_trigger::{StreamEvent, StreamSource};
use shoal_egress::Egress;
use tokio::sync::Notify;

use crate::invocation::Parked;
use crate::triggers::stream::topic_writer::TopicWriter;

pub struct RetryTopic {
    writer: TopicWriter,
    /// Told when this instance first wrote to the retry topic: its reader joins then, without
    /// waiting for its next look at the brokers.
    written: Notify,
}

impl RetryTopic {
    pub fn new(source: &StreamSource, egress: Egress) -> RetryTopic {
        RetryTopic {
            writer: TopicWriter::new("retry", retry_topic(&source.topic), source, egress),
            written: Notify::new(),
        }
    }

    pub fn topic(&self) -> &str {
        self.writer.topic()
    }

    /// Writes `events` to the retry topic, due after `parked.wait` with `parked.state`, under
    /// the parked invocation's idempotency key `batch`.
    pub async fn park(
        &self,
        events: &[&StreamEvent],
        parked: &Parked,
        batch: &str,
    ) -> Result<(), KafkaError> {
        let Some(first) = events.first() else {
            return Ok(());
        };
        let due = chrono::Duration::from_std(parked.wait)
            .ok()
            .and_then(|wait| Utc::now().checked_add_signed(wait))
            .unwrap_or(DateTime::<Utc>::MAX_UTC);
        let partitions = self.writer.partitions().await?;
        let partition = first.partition.rem_euclid(partitions.max(1));
        let records = events.iter().map(|event| OutgoingRecord {
            key: event.key.clone(),
            value: event.value.clone().unwrap_or_default(),
            headers: retry_headers(event, &parked.state, due, batch),
            partition: Some(partition),
        });
        self.writer.send_all(records).await?;
        self.written.notify_one();
        Ok(())
    }

    /// Resolves once this instance has written to the retry topic (at once if it has).
    pub async fn written(&self) {
        if !self.writer.has_written() {
            self.written.notified().await;
        }
    }
}
