//! A consumer group's lag on a topic, read from outside the group: the topic's partitions
//! (Metadata), their watermarks (ListOffsets) and the group's committed offsets (OffsetFetch).
//! No member joins, so reading it never rebalances the group; DescribeGroups is not needed
//! (and tansu's SQLite engine fails it).

use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{ClientContext, Offset, TopicPartitionList};

use super::{KafkaError, KafkaProperties, check_name, client_log};

/// How long each of the three reads may take.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The lag of one partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionLag {
    pub partition: i32,
    /// The first offset still in the partition (the low watermark).
    pub low: i64,
    /// The offset the next event will get (the high watermark).
    pub high: i64,
    /// The group's next offset to read, when it committed one.
    pub committed: Option<i64>,
    /// Events the group has yet to read: `high − committed`, counted from `low` when nothing
    /// was committed or the commit points below what the partition still holds; never negative.
    pub lag: u64,
}

impl PartitionLag {
    /// Pure: the lag of a partition from its watermarks and the group's commit.
    pub fn new(partition: i32, low: i64, high: i64, committed: Option<i64>) -> PartitionLag {
        let from = committed.map_or(low, |c| c.max(low));
        PartitionLag {
            partition,
            low,
            high,
            committed,
            lag: u64::try_from(high - from).unwrap_or(0),
        }
    }
}

/// A group's lag on every partition of a topic, ordered by partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicLag {
    pub partitions: Vec<PartitionLag>,
    pub total: u64,
}

impl TopicLag {
    fn new(mut partitions: Vec<PartitionLag>) -> TopicLag {
        partitions.sort_by_key(|p| p.partition);
        let total = partitions.iter().map(|p| p.lag).sum();
        TopicLag { partitions, total }
    }
}

/// Lag of consumer group `group` on `topic`: per partition, high watermark − committed offset;
/// a partition with no commit counts from its low watermark. Reads from outside the group.
pub async fn consumer_lag(
    props: &KafkaProperties,
    group: &str,
    topic: &str,
) -> Result<TopicLag, KafkaError> {
    check_name("consumer group", group)?;
    check_name("topic", topic)?;
    let redactor = props.redactor();
    // A client with the group's id, never subscribed: OffsetFetch goes to the group's
    // coordinator without joining it.
    let client: BaseConsumer<LagLog> = props
        .client_config(&[("group.id", group), ("enable.auto.commit", "false")])
        .create_with_context(LagLog)
        .map_err(|e| KafkaError::from_rdkafka(&redactor, "read consumer lag", Some(topic), &e))?;
    let topic = topic.to_owned();
    tokio::task::spawn_blocking(move || {
        let error = |op, e: &rdkafka::error::KafkaError| {
            KafkaError::from_rdkafka(&redactor, op, Some(&topic), e)
        };
        let (partitions, committed) = committed_in(&client, &topic, READ_TIMEOUT, error)?;
        let mut lags = Vec::with_capacity(partitions.len());
        for partition in partitions {
            let (low, high) = client
                .fetch_watermarks(&topic, partition, READ_TIMEOUT)
                .map_err(|e| error("read partition watermarks", &e))?;
            let commit =
                committed
                    .find_partition(&topic, partition)
                    .and_then(|p| match p.offset() {
                        Offset::Offset(next) => Some(next),
                        _ => None,
                    });
            lags.push(PartitionLag::new(partition, low, high, commit));
        }
        // Dropping a client that never joined a group does not block on the broker.
        drop(client);
        Ok(TopicLag::new(lags))
    })
    .await
    .map_err(|e| KafkaError::Other {
        op: "read consumer lag",
        message: format!("the task failed: {e}"),
    })?
}

/// The partitions of `topic` and the client's group's committed offsets in them (read from
/// outside the group), `error` naming what failed.
pub(super) fn committed_in<C: rdkafka::consumer::ConsumerContext>(
    client: &BaseConsumer<C>,
    topic: &str,
    timeout: Duration,
    error: impl Fn(&'static str, &rdkafka::error::KafkaError) -> KafkaError,
) -> Result<(Vec<i32>, TopicPartitionList), KafkaError> {
    let partitions = partitions_of(client, topic).map_err(|e| match e {
        PartitionsError::Kafka(e) => error("read topic metadata", &e),
        PartitionsError::Missing(e) => e,
    })?;
    let mut asked = TopicPartitionList::with_capacity(partitions.len());
    for &partition in &partitions {
        asked.add_partition(topic, partition);
    }
    let committed = client
        .committed_offsets(asked, timeout)
        .map_err(|e| error("read committed offsets", &e))?;
    Ok((partitions, committed))
}

pub(super) enum PartitionsError {
    Kafka(rdkafka::error::KafkaError),
    Missing(KafkaError),
}

/// The partition ids of `topic`, from a metadata request for it alone.
pub(super) fn partitions_of<C: rdkafka::consumer::ConsumerContext>(
    client: &BaseConsumer<C>,
    topic: &str,
) -> Result<Vec<i32>, PartitionsError> {
    let metadata = client
        .fetch_metadata(Some(topic), READ_TIMEOUT)
        .map_err(PartitionsError::Kafka)?;
    let not_found = || {
        PartitionsError::Missing(KafkaError::TopicNotFound {
            topic: topic.to_owned(),
        })
    };
    let found = metadata
        .topics()
        .iter()
        .find(|t| t.name() == topic)
        .ok_or_else(not_found)?;
    if let Some(code) = found.error() {
        let code = rdkafka::types::RDKafkaErrorCode::from(code);
        return Err(PartitionsError::Missing(KafkaError::from_code(
            "read topic metadata",
            Some(topic),
            code,
            code.to_string(),
        )));
    }
    if found.partitions().is_empty() {
        return Err(not_found());
    }
    Ok(found.partitions().iter().map(|p| p.id()).collect())
}

struct LagLog;

impl ClientContext for LagLog {
    fn log(&self, level: rdkafka::config::RDKafkaLogLevel, fac: &str, message: &str) {
        client_log(level, fac, message);
    }

    fn error(&self, error: rdkafka::error::KafkaError, reason: &str) {
        tracing::debug!(%error, reason, "Kafka client error while reading lag");
    }
}

impl rdkafka::consumer::ConsumerContext for LagLog {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lag_counts_from_the_commit_or_from_the_start() {
        // (low, high, committed) → lag
        let cases = [
            (0, 10, Some(4), 6),
            (0, 10, Some(10), 0),
            (0, 10, None, 10),
            (5, 10, None, 5),
            (0, 0, None, 0),
            // the commit points below what retention kept: only what exists counts
            (6, 10, Some(2), 4),
            // a commit past the end (the topic was recreated): nothing to read, not negative
            (0, 3, Some(8), 0),
        ];
        for (low, high, committed, want) in cases {
            let lag = PartitionLag::new(0, low, high, committed);
            assert_eq!(
                lag.lag, want,
                "low {low} high {high} committed {committed:?}"
            );
        }
    }

    #[test]
    fn total_sums_partitions_in_partition_order() {
        let lag = TopicLag::new(vec![
            PartitionLag::new(2, 0, 5, Some(1)),
            PartitionLag::new(0, 0, 3, None),
            PartitionLag::new(1, 0, 7, Some(7)),
        ]);
        assert_eq!(lag.total, 4 + 3);
        let order: Vec<i32> = lag.partitions.iter().map(|p| p.partition).collect();
        assert_eq!(order, [0, 1, 2]);
    }
}
