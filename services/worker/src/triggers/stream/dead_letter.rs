//! Writing a stream function's given-up events to its dead-letter target: a topic on the
//! trigger's own brokers, or a Storage queue (see the domain's `stream_trigger::dead_letter`).
//! The checkpoint waits for this write: it is retried, with a growing pause and the reason on
//! the listener's line, until it succeeds or the listener is abandoned — never skipped.

use chrono::Utc;
use futures::future::try_join_all;
use shoal_connectors::Queue;
use shoal_connectors::kafka::{KafkaProperties, OutgoingRecord, StreamProducer};
use shoal_domain::host_config::MessageEncoding;
use shoal_domain::queue_trigger::encode_body;
use shoal_domain::stream_trigger::dead_letter::Failure;
use shoal_domain::stream_trigger::source::resolve_secure;
use shoal_domain::stream_trigger::{
    DeadLetterTarget, StreamEvent, StreamSource, dead_letter_headers, dead_letter_message,
};
use shoal_egress::Egress;
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

use crate::config::WorkerConfig;
use crate::connections;
use crate::error::WorkerError;
use crate::hosted_apps::HostedApp;
use crate::stats::ListenerStats;
use crate::triggers::backoff::Retry;

/// Client properties a producer takes from the trigger's: where the brokers are and how to
/// sign in, nothing of the consumer's.
const PRODUCER_PROPERTIES: &[&str] = &["bootstrap.servers", "security.protocol"];

pub enum DeadLetterSink {
    Topic {
        topic: String,
        properties: KafkaProperties,
        producer: OnceCell<StreamProducer>,
        egress: Egress,
    },
    Queue {
        queue: Queue,
        created: OnceCell<()>,
        encoding: MessageEncoding,
    },
}

impl DeadLetterSink {
    pub fn bind(
        target: &DeadLetterTarget,
        source: &StreamSource,
        app: &HostedApp,
        config: &WorkerConfig,
    ) -> Result<DeadLetterSink, String> {
        match target {
            DeadLetterTarget::Topic(topic) => {
                let topic = resolve_secure(topic, &app.settings)
                    .map_err(|e| format!("deadLetter.topic: {e}"))?;
                let mut properties = KafkaProperties::new();
                for (key, value) in &source.properties {
                    if PRODUCER_PROPERTIES.contains(&key.as_str()) || key.starts_with("sasl.") {
                        properties.set(key, value);
                    }
                }
                Ok(DeadLetterSink::Topic {
                    topic,
                    properties,
                    producer: OnceCell::new(),
                    egress: config.egress.for_tenant(&app.egress_allow),
                })
            }
            DeadLetterTarget::StorageQueue {
                queue_name,
                connection,
            } => {
                let queues = connections::storage_queues(connection.as_deref(), app, config)
                    .map_err(|e| format!("deadLetter: {e}"))?;
                let name = queue_name
                    .resolve(&app.settings)
                    .map_err(|e| format!("deadLetter.queueName: {e}"))?;
                let queue = queues.queue(name.as_str()).map_err(|e| e.to_string())?;
                Ok(DeadLetterSink::Queue {
                    queue,
                    created: OnceCell::new(),
                    encoding: app.host.extensions.queues.message_encoding,
                })
            }
        }
    }

    /// Writes every event with why it failed; false if abandoned before it succeeded.
    pub async fn write(
        &self,
        events: &[&StreamEvent],
        function: &str,
        reason: &str,
        stats: &ListenerStats,
        abandon: &CancellationToken,
    ) -> bool {
        let failure = Failure {
            function,
            reason,
            at: Utc::now(),
        };
        let mut retry = Retry::default();
        loop {
            match self.try_write(events, &failure).await {
                Ok(()) => {
                    for _ in events {
                        stats.poisoned();
                    }
                    return true;
                }
                Err(error) => {
                    tracing::warn!(
                        function,
                        target = self.describe(),
                        error,
                        "writing failed events to the dead-letter target failed; the partition's checkpoint waits for it"
                    );
                    stats.set_status(format!(
                        "error: writing to the dead-letter target {} failed: {error}",
                        self.describe()
                    ));
                    stats.error(&WorkerError::SettleMessage(error.into()));
                    if !retry.pause(abandon).await {
                        return false;
                    }
                }
            }
        }
    }

    async fn try_write(
        &self,
        events: &[&StreamEvent],
        failure: &Failure<'_>,
    ) -> Result<(), String> {
        match self {
            DeadLetterSink::Topic {
                topic,
                properties,
                producer,
                egress,
            } => {
                let producer = producer
                    .get_or_try_init(|| connections::stream_producer(properties, topic, egress))
                    .await
                    .map_err(|e| e.to_string())?;
                try_join_all(events.iter().map(|event| {
                    producer.send(
                        topic,
                        OutgoingRecord {
                            key: event.key.clone(),
                            value: event.value.clone().unwrap_or_default(),
                            headers: dead_letter_headers(event, failure),
                            partition: None,
                        },
                    )
                }))
                .await
                .map_err(|e| e.to_string())?;
                Ok(())
            }
            DeadLetterSink::Queue {
                queue,
                created,
                encoding,
            } => {
                created
                    .get_or_try_init(|| queue.create_if_missing())
                    .await
                    .map_err(|e| e.to_string())?;
                for event in events {
                    let text = dead_letter_message(event, failure).to_string();
                    queue
                        .enqueue(&encode_body(&text, *encoding))
                        .await
                        .map_err(|e| e.to_string())?;
                }
                Ok(())
            }
        }
    }

    /// The target, for statuses and logs.
    pub fn describe(&self) -> String {
        match self {
            DeadLetterSink::Topic { topic, .. } => format!("topic {topic}"),
            DeadLetterSink::Queue { queue, .. } => format!("queue {}", queue.name()),
        }
    }
}
