//! Creating topics (dead-letter topics, tests).

use std::time::Duration;

use rdkafka::ClientContext;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::types::RDKafkaErrorCode;

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

struct AdminLog;

impl ClientContext for AdminLog {
    fn log(&self, level: rdkafka::config::RDKafkaLogLevel, fac: &str, message: &str) {
        client_log(level, fac, message);
    }

    fn error(&self, error: rdkafka::error::KafkaError, reason: &str) {
        tracing::debug!(%error, reason, "Kafka admin client error");
    }
}
