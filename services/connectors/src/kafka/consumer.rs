//! A member of a consumer group reading one topic, committing offsets only when told to.
//!
//! Built on rdkafka's `StreamConsumer`, whose `recv` takes an event off librdkafka's queue and
//! returns it in the same poll: a `recv` future dropped before it is ready has taken nothing.
//! [`StreamConsumer::fetch`] awaits only that first `recv`; the rest of the batch is taken
//! synchronously, so dropping a `fetch` future never loses an event.
//!
//! librdkafka's blocking calls (commit, close) run on tokio's blocking pool, holding an `Arc` of
//! the client, so that they finish even when the future awaiting them is dropped.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use chrono::DateTime;
use futures::FutureExt;
use rdkafka::consumer::{
    BaseConsumer, CommitMode, Consumer, ConsumerContext, Rebalance, StreamConsumer as RdConsumer,
};
use rdkafka::error::KafkaResult;
use rdkafka::message::{BorrowedMessage, Headers, Message};
use rdkafka::{ClientContext, Offset, TopicPartitionList};

use super::{KafkaError, KafkaProperties, check_name, client_log};
use crate::error::Redactor;

/// The events and start positions are the domain's (`shoal_domain::stream_trigger`): what the
/// trigger hands a handler is built from them without a copy in between. The leader epoch
/// stays `None` for now: rdkafka 0.39 does not expose librdkafka's
/// `rd_kafka_message_leader_epoch`, and the workspace forbids the `unsafe` a direct call would
/// take.
pub use shoal_domain::stream_trigger::{StartFrom, StreamEvent};

/// librdkafka's `auto.offset.reset` for a start position.
fn auto_offset_reset(start: StartFrom) -> &'static str {
    match start {
        StartFrom::Earliest => "earliest",
        StartFrom::Latest => "latest",
    }
}

/// How long [`StreamConsumer::close`] waits for the member to leave the group.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(30);

/// How long [`StreamConsumer::pause_at`] waits for librdkafka to take the new position.
const SEEK_TIMEOUT: Duration = Duration::from_secs(10);

/// A member of a consumer group subscribed to one topic. Offsets move only through
/// [`StreamConsumer::commit`] (`enable.auto.commit=false`, `enable.auto.offset.store=false`).
///
/// librdkafka serves the group's rebalances when the member fetches: a member that does not
/// call [`StreamConsumer::fetch`] for `max.poll.interval.ms` (5 min by default) is taken out of
/// the group, and a rebalance waits (up to that long) for every member to fetch again.
/// Dropping it without [`StreamConsumer::close`] leaves the group too, on the blocking pool.
pub struct StreamConsumer {
    client: Option<Arc<RdConsumer<MemberContext>>>,
    topic: String,
    redactor: Redactor,
}

impl StreamConsumer {
    /// Joins `group` as `client_id` and subscribes to `topic`. Must be called within a tokio
    /// runtime. The group is joined on the first [`StreamConsumer::fetch`].
    pub fn subscribe(
        props: &KafkaProperties,
        group: &str,
        topic: &str,
        start: StartFrom,
        client_id: &str,
    ) -> Result<StreamConsumer, KafkaError> {
        check_name("consumer group", group)?;
        check_name("topic", topic)?;
        check_name("client id", client_id)?;
        // rdkafka's stream consumer spawns a task for its wake-ups: without a runtime it panics.
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(KafkaError::InvalidRequest(
                "a stream consumer must be created within a tokio runtime".into(),
            ));
        }
        let redactor = props.redactor();
        let error = |e: &rdkafka::error::KafkaError| {
            KafkaError::from_rdkafka(&redactor, "subscribe", Some(topic), e)
        };
        let config = props.client_config(&[
            ("group.id", group),
            ("client.id", client_id),
            ("enable.auto.commit", "false"),
            ("enable.auto.offset.store", "false"),
            ("auto.offset.reset", auto_offset_reset(start)),
        ]);
        let client: RdConsumer<MemberContext> = config
            .create_with_context(MemberContext {
                group: group.to_owned(),
            })
            .map_err(|e| error(&e))?;
        client.subscribe(&[topic]).map_err(|e| error(&e))?;
        Ok(StreamConsumer {
            client: Some(Arc::new(client)),
            topic: topic.to_owned(),
            redactor,
        })
    }

    fn client(&self) -> &Arc<RdConsumer<MemberContext>> {
        // Only `close` and `drop` take it, and both consume the consumer.
        self.client
            .as_ref()
            .expect("the client is taken only on close")
    }

    /// Waits up to `wait` for the first event, then takes only what is already buffered, up to
    /// `max`. Empty on timeout. Cancel-safe: dropping the future loses no event.
    ///
    /// An error the broker reports for the subscription (the topic does not exist, the member
    /// is not authorized) is returned when it comes first; after the first event, the batch
    /// ends before it and it is returned by the next call.
    pub async fn fetch(&self, max: usize, wait: Duration) -> Result<Vec<StreamEvent>, KafkaError> {
        if max == 0 {
            return Err(KafkaError::InvalidRequest(
                "fetch needs room for at least one event (max = 0)".into(),
            ));
        }
        let client = self.client();
        let first = match tokio::time::timeout(wait, client.recv()).await {
            Err(_elapsed) => return Ok(Vec::new()),
            Ok(first) => first.map_err(|e| self.error("fetch", &e))?,
        };
        let mut events = Vec::with_capacity(max.min(1024));
        events.push(event(&first));
        drop(first);
        // No await from here on: what is taken below is returned.
        while events.len() < max {
            match client.recv().now_or_never() {
                Some(Ok(message)) => events.push(event(&message)),
                Some(Err(e)) => {
                    // Errors are notices (a partition's fetch failed); the events before it are
                    // returned and the error is not lost: librdkafka repeats it while it lasts.
                    tracing::debug!(topic = %self.topic, error = %self.error("fetch", &e), "batch ends at a consumer error");
                    break;
                }
                None => break,
            }
        }
        Ok(events)
    }

    /// Synchronous commit of the next offsets to read (last processed + 1), per partition of
    /// `topic`. The commit completes even if the future is dropped.
    pub async fn commit(&self, topic: &str, next_offsets: &[(i32, i64)]) -> Result<(), KafkaError> {
        if topic != self.topic {
            return Err(KafkaError::InvalidRequest(format!(
                "this member reads topic {}, not {topic}",
                self.topic
            )));
        }
        if next_offsets.is_empty() {
            return Ok(());
        }
        let mut offsets = TopicPartitionList::with_capacity(next_offsets.len());
        for &(partition, next) in next_offsets {
            if partition < 0 || next < 0 {
                return Err(KafkaError::InvalidRequest(format!(
                    "cannot commit offset {next} of partition {partition}: both must be non-negative"
                )));
            }
            offsets
                .add_partition_offset(topic, partition, Offset::Offset(next))
                .map_err(|e| self.error("commit", &e))?;
        }
        let client = self.client().clone();
        let committed =
            tokio::task::spawn_blocking(move || client.commit(&offsets, CommitMode::Sync))
                .await
                .map_err(|e| KafkaError::Other {
                    op: "commit",
                    message: format!("the commit task failed: {e}"),
                })?;
        committed.map_err(|e| self.error("commit", &e))
    }

    /// Stops fetching `partition` and sets its next fetch to `offset`: the events from `offset`
    /// on that were taken already are read again after [`StreamConsumer::resume`]. The member
    /// stays in the group while it keeps calling [`StreamConsumer::fetch`] (which then returns
    /// nothing of the paused partition). A rebalance that takes the partition away and gives it
    /// back ends the pause: it is read from the group's last commit.
    pub async fn pause_at(&self, partition: i32, offset: i64) -> Result<(), KafkaError> {
        let mut list = TopicPartitionList::with_capacity(1);
        list.add_partition(&self.topic, partition);
        self.client()
            .pause(&list)
            .map_err(|e| self.error("pause", &e))?;
        let client = self.client().clone();
        let topic = self.topic.clone();
        tokio::task::spawn_blocking(move || {
            client.seek(&topic, partition, Offset::Offset(offset), SEEK_TIMEOUT)
        })
        .await
        .map_err(|e| KafkaError::Other {
            op: "seek",
            message: format!("the seek task failed: {e}"),
        })?
        .map_err(|e| self.error("seek", &e))
    }

    /// Fetches `partition` again from where [`StreamConsumer::pause_at`] left it.
    pub fn resume(&self, partition: i32) -> Result<(), KafkaError> {
        let mut list = TopicPartitionList::with_capacity(1);
        list.add_partition(&self.topic, partition);
        self.client()
            .resume(&list)
            .map_err(|e| self.error("resume", &e))
    }

    /// The partitions of the topic assigned to this member now (empty before the group is
    /// joined and during a rebalance).
    pub fn assignment(&self) -> Result<Vec<i32>, KafkaError> {
        let assigned = self
            .client()
            .assignment()
            .map_err(|e| self.error("read the assignment", &e))?;
        let mut partitions: Vec<i32> = assigned
            .elements_for_topic(&self.topic)
            .iter()
            .map(|p| p.partition())
            .collect();
        partitions.sort_unstable();
        Ok(partitions)
    }

    /// Leaves the group cleanly (the other members rebalance at once) and waits for it, up to
    /// 30 s; after that the member keeps leaving in the background. Uncommitted offsets are not
    /// committed.
    pub async fn close(mut self) {
        let Some(client) = self.client.take() else {
            return;
        };
        let topic = self.topic.clone();
        let leaving = tokio::task::spawn_blocking(move || drop(client));
        match tokio::time::timeout(CLOSE_TIMEOUT, leaving).await {
            Ok(Ok(())) => tracing::debug!(%topic, "consumer left its group"),
            Ok(Err(e)) => tracing::warn!(%topic, error = %e, "closing the consumer failed"),
            Err(_) => {
                tracing::warn!(%topic, "the consumer is still leaving its group after {CLOSE_TIMEOUT:?}")
            }
        }
    }

    fn error(&self, op: &'static str, e: &rdkafka::error::KafkaError) -> KafkaError {
        KafkaError::from_rdkafka(&self.redactor, op, Some(&self.topic), e)
    }
}

impl Drop for StreamConsumer {
    fn drop(&mut self) {
        // Leaving the group blocks until the broker answers: never on a runtime thread.
        if let Some(client) = self.client.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn_blocking(move || drop(client));
        }
    }
}

impl std::fmt::Debug for StreamConsumer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamConsumer")
            .field("topic", &self.topic)
            .finish_non_exhaustive()
    }
}

pub(super) fn event(message: &BorrowedMessage<'_>) -> StreamEvent {
    StreamEvent {
        topic: message.topic().to_owned(),
        partition: message.partition(),
        offset: message.offset(),
        key: message.key().map(<[u8]>::to_vec),
        value: message.payload().map(<[u8]>::to_vec),
        timestamp: message
            .timestamp()
            .to_millis()
            .and_then(DateTime::from_timestamp_millis),
        headers: message.headers().map(headers).unwrap_or_default(),
        leader_epoch: None,
    }
}

/// rdkafka panics on a header name that is not UTF-8 (its `try_get` unwraps the conversion);
/// such a header is kept under the name U+FFFD, with its value, rather than failing the event.
fn headers(borrowed: &rdkafka::message::BorrowedHeaders) -> Vec<(String, Option<Vec<u8>>)> {
    (0..borrowed.count())
        .filter_map(|index| {
            match std::panic::catch_unwind(AssertUnwindSafe(|| {
                borrowed
                    .try_get(index)
                    .map(|h| (h.key.to_owned(), h.value.map(<[u8]>::to_vec)))
            })) {
                Ok(header) => header,
                Err(_) => {
                    tracing::warn!(index, "an event header's name is not UTF-8");
                    Some(("\u{FFFD}".to_owned(), None))
                }
            }
        })
        .collect()
}

/// Logs librdkafka's messages and the group's rebalances.
struct MemberContext {
    group: String,
}

impl ClientContext for MemberContext {
    fn log(&self, level: rdkafka::config::RDKafkaLogLevel, fac: &str, message: &str) {
        client_log(level, fac, message);
    }

    fn error(&self, error: rdkafka::error::KafkaError, reason: &str) {
        tracing::warn!(group = %self.group, %error, reason, "Kafka consumer error");
    }
}

impl ConsumerContext for MemberContext {
    fn post_rebalance(&self, _consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        match rebalance {
            Rebalance::Assign(partitions) => {
                tracing::info!(group = %self.group, partitions = ?partition_list(partitions), "partitions assigned")
            }
            Rebalance::Revoke(partitions) => {
                tracing::info!(group = %self.group, partitions = ?partition_list(partitions), "partitions revoked")
            }
            Rebalance::Error(e) => {
                tracing::warn!(group = %self.group, error = %e, "rebalance failed")
            }
        }
    }

    fn commit_callback(&self, result: KafkaResult<()>, _offsets: &TopicPartitionList) {
        if let Err(e) = result {
            tracing::debug!(group = %self.group, error = %e, "commit failed");
        }
    }
}

fn partition_list(list: &TopicPartitionList) -> Vec<(String, i32)> {
    list.elements()
        .iter()
        .map(|p| (p.topic().to_owned(), p.partition()))
        .collect()
}
