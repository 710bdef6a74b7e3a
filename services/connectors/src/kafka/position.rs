//! Reading a topic from a consumer group's committed position without joining the group, and
//! moving that position: how the poison endpoints list and replay a stream function's dead
//! letters, each function with a group of its own on the dead-letter topic (so a second
//! replay starts where the first stopped).
//!
//! The group never has members: the partitions are assigned by hand and offsets committed as
//! a client outside any generation, so nothing rebalances. A read is bounded: at most
//! `max_events` events and `max_bytes` of key, value and headers, and at most `timeout`; the
//! events come back in offset order per partition, each partition's a prefix of what follows
//! the position (so committing "last read + 1" never skips an event that was not returned).

use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::KafkaError as RdError;
use rdkafka::{ClientContext, Offset, TopicPartitionList};

use super::consumer::event;
use super::lag::committed_in;
use super::{KafkaError, KafkaProperties, StreamEvent, check_name, client_log};

/// How long each metadata, offset or commit request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// What one read may take.
#[derive(Clone, Copy, Debug)]
pub struct ReadLimits {
    pub max_events: usize,
    /// Key, value and headers together; the first event is returned whatever its size.
    pub max_bytes: usize,
    pub timeout: Duration,
}

/// Events from the group's position on.
#[derive(Debug, Default)]
pub struct PositionedRead {
    /// Ordered by partition, then offset.
    pub events: Vec<StreamEvent>,
    /// Events from the position to the end of each partition when the read began (what a
    /// read without limits would return).
    pub pending: u64,
    /// Whether every partition was read to that end.
    pub complete: bool,
}

/// Reads `topic` from `group`'s committed position (from a partition's first event where
/// the group has none), within `limits`. Nothing is committed.
pub async fn read_from_position(
    props: &KafkaProperties,
    group: &str,
    topic: &str,
    limits: ReadLimits,
) -> Result<PositionedRead, KafkaError> {
    check_name("consumer group", group)?;
    check_name("topic", topic)?;
    let redactor = props.redactor();
    // Bound what librdkafka buffers ahead of the read, too.
    let buffered_kb = (limits.max_bytes / 1024).clamp(1024, 65_536).to_string();
    let client: BaseConsumer<ReaderLog> = props
        .client_config(&[
            ("group.id", group),
            ("enable.auto.commit", "false"),
            ("enable.auto.offset.store", "false"),
            ("enable.partition.eof", "true"),
            ("auto.offset.reset", "earliest"),
            ("queued.max.messages.kbytes", buffered_kb.as_str()),
        ])
        .create_with_context(ReaderLog)
        .map_err(|e| KafkaError::from_rdkafka(&redactor, "read the topic", Some(topic), &e))?;
    let topic = topic.to_owned();
    tokio::task::spawn_blocking(move || {
        let error = |op, e: &RdError| KafkaError::from_rdkafka(&redactor, op, Some(&topic), e);
        let started = Instant::now();
        let (partitions, committed) = committed_in(&client, &topic, REQUEST_TIMEOUT, error)?;
        // (partition, next offset to read, end) of each partition with something to read.
        let mut open: Vec<(i32, i64, i64)> = Vec::new();
        let mut pending = 0u64;
        for partition in partitions {
            let (low, high) = client
                .fetch_watermarks(&topic, partition, REQUEST_TIMEOUT)
                .map_err(|e| error("read partition watermarks", &e))?;
            let position = committed
                .find_partition(&topic, partition)
                .and_then(|p| match p.offset() {
                    Offset::Offset(next) => Some(next.max(low)),
                    _ => None,
                })
                .unwrap_or(low);
            if position < high {
                pending += u64::try_from(high - position).unwrap_or(0);
                open.push((partition, position, high));
            }
        }
        let mut read = PositionedRead {
            pending,
            ..PositionedRead::default()
        };
        if open.is_empty() {
            read.complete = true;
            return Ok(read);
        }
        let mut assignment = TopicPartitionList::with_capacity(open.len());
        for &(partition, position, _) in &open {
            assignment
                .add_partition_offset(&topic, partition, Offset::Offset(position))
                .map_err(|e| error("assign partitions", &e))?;
        }
        client
            .assign(&assignment)
            .map_err(|e| error("assign partitions", &e))?;
        let mut bytes = 0usize;
        let mut full = false;
        while !open.is_empty() && !full {
            let Some(left) = limits.timeout.checked_sub(started.elapsed()) else {
                break;
            };
            match client.poll(left.min(Duration::from_millis(500))) {
                None => {}
                Some(Ok(message)) => {
                    let event = event(&message);
                    let size = size(&event);
                    if read.events.len() >= limits.max_events
                        || (!read.events.is_empty() && bytes + size > limits.max_bytes)
                    {
                        full = true;
                        continue;
                    }
                    bytes += size;
                    if let Some(i) = open.iter().position(|(p, _, _)| *p == event.partition) {
                        if event.offset + 1 >= open[i].2 {
                            open.swap_remove(i);
                        }
                        read.events.push(event);
                    }
                }
                Some(Err(RdError::PartitionEOF(partition))) => {
                    open.retain(|(p, _, _)| *p != partition);
                }
                Some(Err(e)) => return Err(error("read the topic", &e)),
            }
        }
        read.complete = open.is_empty() && !full;
        read.events.sort_by_key(|e| (e.partition, e.offset));
        drop(client);
        Ok(read)
    })
    .await
    .map_err(|e| KafkaError::Other {
        op: "read the topic",
        message: format!("the task failed: {e}"),
    })?
}

/// Moves `group`'s position on `topic` to `next_offsets` (per partition, the next offset to
/// read), as a client outside the group.
pub async fn commit_position(
    props: &KafkaProperties,
    group: &str,
    topic: &str,
    next_offsets: &[(i32, i64)],
) -> Result<(), KafkaError> {
    check_name("consumer group", group)?;
    check_name("topic", topic)?;
    if next_offsets.is_empty() {
        return Ok(());
    }
    let redactor = props.redactor();
    let client: BaseConsumer<ReaderLog> = props
        .client_config(&[("group.id", group), ("enable.auto.commit", "false")])
        .create_with_context(ReaderLog)
        .map_err(|e| KafkaError::from_rdkafka(&redactor, "commit", Some(topic), &e))?;
    let mut offsets = TopicPartitionList::with_capacity(next_offsets.len());
    for &(partition, next) in next_offsets {
        offsets
            .add_partition_offset(topic, partition, Offset::Offset(next))
            .map_err(|e| KafkaError::from_rdkafka(&redactor, "commit", Some(topic), &e))?;
    }
    let topic = topic.to_owned();
    tokio::task::spawn_blocking(move || {
        let committed = client.commit(&offsets, CommitMode::Sync);
        drop(client);
        committed.map_err(|e| KafkaError::from_rdkafka(&redactor, "commit", Some(&topic), &e))
    })
    .await
    .map_err(|e| KafkaError::Other {
        op: "commit",
        message: format!("the task failed: {e}"),
    })?
}

/// The bytes an event holds: key, value and headers.
fn size(event: &StreamEvent) -> usize {
    event.key.as_ref().map_or(0, Vec::len)
        + event.value.as_ref().map_or(0, Vec::len)
        + event
            .headers
            .iter()
            .map(|(k, v)| k.len() + v.as_ref().map_or(0, Vec::len))
            .sum::<usize>()
}

struct ReaderLog;

impl ClientContext for ReaderLog {
    fn log(&self, level: rdkafka::config::RDKafkaLogLevel, fac: &str, message: &str) {
        client_log(level, fac, message);
    }

    fn error(&self, error: RdError, reason: &str) {
        tracing::debug!(%error, reason, "Kafka client error while reading from a position");
    }
}

impl rdkafka::consumer::ConsumerContext for ReaderLog {}
