//! Writing records to a topic of Shoal's on a stream trigger's own brokers: the dead-letter
//! topic (`<topic>-poison` by default) and the retry topic (`<topic>-retry`).
//!
//! The topic is created before the first write when the brokers do not have it, with the
//! source topic's partition count: brokers without automatic topic creation — Event Hubs'
//! Kafka endpoint among them — would otherwise refuse every write, and one with it would use
//! its own default partition count. The brokers pass the app's egress policy before the
//! producer dials them.

use futures::future::try_join_all;
use shoal_connectors::kafka::{
    KafkaError, KafkaProperties, OutgoingRecord, StreamProducer, TopicCreation, create_topic_like,
    partition_count,
};
use shoal_domain::stream_trigger::StreamSource;
use shoal_domain::stream_trigger::source::connection_properties;
use shoal_egress::Egress;
use tokio::sync::OnceCell;

use crate::connections;

/// How long librdkafka keeps trying to deliver one record before the write fails and the caller
/// decides what next (its default is 5 minutes): long enough for a leader to move, short enough
/// that a write that cannot succeed shows in the listener's status soon.
const DELIVERY_TIMEOUT_MS: &str = "30000";

pub struct TopicWriter {
    /// What the topic is for, in logs and errors: `dead-letter`, `retry`.
    purpose: &'static str,
    topic: String,
    /// The trigger's topic, whose partition count a created topic gets.
    source_topic: String,
    properties: KafkaProperties,
    /// The producer, and the topic's partition count, once the topic is known to exist.
    producer: OnceCell<(StreamProducer, i32)>,
    egress: Egress,
}

impl TopicWriter {
    pub fn new(
        purpose: &'static str,
        topic: String,
        source: &StreamSource,
        egress: Egress,
    ) -> TopicWriter {
        // Where the brokers are and how to sign in (without the trigger's CA or client
        // certificate the write could never reach a broker the trigger reads over TLS), nothing
        // of the consumer's.
        let mut properties = KafkaProperties::new();
        for (key, value) in connection_properties(&source.properties) {
            properties.set(&key, &value);
        }
        properties.set("message.timeout.ms", DELIVERY_TIMEOUT_MS);
        TopicWriter {
            purpose,
            topic,
            source_topic: source.topic.clone(),
            properties,
            producer: OnceCell::new(),
            egress,
        }
    }

    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// Whether a write succeeded from this writer (the topic exists).
    pub fn has_written(&self) -> bool {
        self.producer.initialized()
    }

    /// The topic's partition count (the topic is created first when missing).
    pub async fn partitions(&self) -> Result<i32, KafkaError> {
        Ok(self.ready().await?.1)
    }

    /// Writes every record (side by side; librdkafka batches them), each acknowledged by all
    /// in-sync replicas.
    pub async fn send_all(
        &self,
        records: impl IntoIterator<Item = OutgoingRecord>,
    ) -> Result<(), KafkaError> {
        let (producer, _) = self.ready().await?;
        try_join_all(
            records
                .into_iter()
                .map(|record| producer.send(&self.topic, record)),
        )
        .await?;
        Ok(())
    }

    async fn ready(&self) -> Result<&(StreamProducer, i32), KafkaError> {
        self.producer.get_or_try_init(|| self.producer()).await
    }

    /// A producer for the topic, once the brokers pass the egress policy and the topic exists,
    /// and the topic's partition count.
    async fn producer(&self) -> Result<(StreamProducer, i32), KafkaError> {
        // Checks the brokers (bootstrap and advertised) before anything dials them.
        let producer =
            connections::stream_producer(&self.properties, &self.topic, &self.egress).await?;
        let partitions = match create_topic_like(&self.properties, &self.topic, &self.source_topic)
            .await
            .map_err(|e| self.creation_refused(e))?
        {
            TopicCreation::Created { partitions } => {
                tracing::info!(
                    topic = self.topic,
                    partitions,
                    source_topic = self.source_topic,
                    purpose = self.purpose,
                    "created the {} topic",
                    self.purpose
                );
                partitions
            }
            TopicCreation::Existed => partition_count(&self.properties, &self.topic)
                .await?
                .ok_or_else(|| KafkaError::TopicNotFound {
                    topic: self.topic.clone(),
                })?,
        };
        Ok((producer, partitions))
    }

    /// Says that it was the topic's creation that failed, which a bare "not authorized" would
    /// not.
    fn creation_refused(&self, error: KafkaError) -> KafkaError {
        match error {
            KafkaError::Unauthorized { message, .. } => KafkaError::Unauthorized {
                op: "create a topic",
                message: format!(
                    "{message} (create the {} topic {} on the brokers, or let this connection create topics)",
                    self.purpose, self.topic
                ),
            },
            other => other,
        }
    }
}
