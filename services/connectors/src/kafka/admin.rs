//! Creating topics: a stream function's dead-letter topic when the brokers do not have it,
//! and tests' topics.

use std::time::Duration;

use rdkafka::ClientContext;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::consumer::BaseConsumer;
use rdkafka::types::RDKafkaErrorCode;

use super::lag::{PartitionsError, partitions_of};
use super::{KafkaError, KafkaProperties, check_name, client_log};

const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Creates `topic` with `partitions` partitions and the broker's default replication factor.
/// Idempotent: a topic that already exists is left as it is (its partition count included).
pub async fn create_topic(
    props: &KafkaProperties,
    topic: &str,
    partitions: i32,
) -> Result<(), KafkaError> {
    check_name("topic", topic)?;
    if partitions < 1 {
        return Err(KafkaError::InvalidRequest(format!(
            "topic {topic} needs at least one partition, not {partitions}"
        )));
    }
    let redactor = props.redactor();
    let admin: AdminClient<AdminLog> = props
        .client_config(&[])
        .create_with_context(AdminLog)
        .map_err(|e| KafkaError::from_rdkafka(&redactor, "create topic", Some(topic), &e))?;
    // -1: the broker's `default.replication.factor` (CreateTopics v4+), right for a cluster of
    // one and for a real one alike.
    let new_topic = NewTopic::new(topic, partitions, TopicReplication::Fixed(-1));
    let options = AdminOptions::new().request_timeout(Some(REQUEST_TIMEOUT));
    let created = admin.create_topics([&new_topic], &options).await;
    // The admin client's drop joins its polling thread: keep it off the runtime's threads.
    tokio::task::spawn_blocking(move || drop(admin));
    let results = created
        .map_err(|e| KafkaError::from_rdkafka(&redactor, "create topic", Some(topic), &e))?;
    for result in results {
        match result {
            Ok(_) | Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
            Err((_, code)) => {
                return Err(KafkaError::from_code(
                    "create topic",
                    None,
                    code,
                    format!("topic {topic}: {code}"),
                ));
            }
        }
    }
    Ok(())
}

/// What [`create_topic_like`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopicCreation {
    /// The topic was there already (or another client created it meanwhile).
    Existed,
    /// Created with this many partitions.
    Created { partitions: i32 },
}

/// Makes sure `topic` exists: when the brokers do not list it, creates it with as many
/// partitions as `like` has. Brokers without automatic topic creation (Event Hubs' Kafka
/// endpoint among them) never create a topic on a write, and one with it would use its own
/// default partition count; so the topic is looked up with automatic creation turned off and,
/// if missing, created here. A topic that exists is left as it is.
pub async fn create_topic_like(
    props: &KafkaProperties,
    topic: &str,
    like: &str,
) -> Result<TopicCreation, KafkaError> {
    check_name("topic", topic)?;
    check_name("topic", like)?;
    if partition_count(props, topic).await?.is_some() {
        return Ok(TopicCreation::Existed);
    }
    let partitions =
        partition_count(props, like)
            .await?
            .ok_or_else(|| KafkaError::TopicNotFound {
                topic: like.to_owned(),
            })?;
    create_topic(props, topic, partitions).await?;
    Ok(TopicCreation::Created { partitions })
}

/// The partition count of `topic`, or `None` when the brokers do not have it. The metadata
/// request says not to create the topic (`allow.auto.create.topics=false`).
pub async fn partition_count(
    props: &KafkaProperties,
    topic: &str,
) -> Result<Option<i32>, KafkaError> {
    check_name("topic", topic)?;
    let redactor = props.redactor();
    let op = "read topic metadata";
    let client: BaseConsumer<AdminLog> = props
        .client_config(&[("allow.auto.create.topics", "false")])
        .create_with_context(AdminLog)
        .map_err(|e| KafkaError::from_rdkafka(&redactor, op, Some(topic), &e))?;
    let topic = topic.to_owned();
    tokio::task::spawn_blocking(move || {
        let found = match partitions_of(&client, &topic) {
            Ok(partitions) => Some(i32::try_from(partitions.len()).unwrap_or(i32::MAX)),
            Err(PartitionsError::Missing(KafkaError::TopicNotFound { .. })) => None,
            Err(PartitionsError::Missing(e)) => return Err(e),
            Err(PartitionsError::Kafka(e)) => {
                return Err(KafkaError::from_rdkafka(&redactor, op, Some(&topic), &e));
            }
        };
        drop(client);
        Ok(found)
    })
    .await
    .map_err(|e| KafkaError::Other {
        op,
        message: format!("the task failed: {e}"),
    })?
}

struct AdminLog;

impl ClientContext for AdminLog {
    fn log(&self, level: rdkafka::config::RDKafkaLogLevel, fac: &str, message: &str) {
        client_log(level, fac, message);
    }

    fn error(&self, error: rdkafka::error::KafkaError, reason: &str) {
        tracing::debug!(%error, reason, "Kafka admin client error");
    }
}

impl rdkafka::consumer::ConsumerContext for AdminLog {}
