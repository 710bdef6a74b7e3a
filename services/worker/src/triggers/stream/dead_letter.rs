//! Writing a stream function's given-up events to its dead-letter target: a topic on the
//! trigger's own brokers, or a Storage queue (see the domain's `stream_trigger::dead_letter`).
//!
//! A topic the brokers do not have is created before the first write, with the source topic's
//! partition count (`topic_writer`), as a Storage queue target is created when missing. The
//! checkpoint waits for the write: while the
//! target cannot be written (creation refused, brokers unreachable) it is retried with a
//! growing pause (at most 30 s), the listener's status says why — so the app's diagnostics
//! report the function in error — and the events are never skipped. Once a write succeeds the
//! status is `listening` again.
use chrono::Utc;
use shoal_connectors::kafka::OutgoingRecord;
use shoal_connectors::{ConnectorError, Queue};
use shoal_domain::host_config::MessageEncoding;
use shoal_domain::queue_trigger::encode_body;
use shoal_domain::stream_trigger::dead_letter::Failure;
use shoal_domain::stream_trigger::source::resolve_secure;
use shoal_domain::stream_trigger::{
    DeadLetterTarget, StreamEvent, StreamSource, dead_letter_headers, dead_letter_message,
};
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

use crate::config::WorkerConfig;
use crate::connections;
use crate::error::WorkerError;
use crate::hosted_apps::HostedApp;
use crate::stats::ListenerStats;
use crate::triggers::backoff::Retry;
use crate::triggers::stream::topic_writer::TopicWriter;

pub enum DeadLetterSink {
    Topic(TopicWriter),
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
                Ok(DeadLetterSink::Topic(TopicWriter::new(
                    "dead-letter",
                    topic,
                    source,
                    config.egress.for_tenant(&app.egress_allow),
                )))
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
        let mut failed = false;
        loop {
            match self.try_write(events, &failure).await {
                Ok(()) => {
                    for _ in events {
                        stats.poisoned();
                    }
                    if failed {
                        tracing::info!(
                            function,
                            target = self.describe(),
                            "the dead-letter target can be written again; the partition moves on"
                        );
                        stats.set_status("listening");
                    }
                    return true;
                }
                Err(error) => {
                    failed = true;
                    let waiting = waiting(events);
                    tracing::warn!(
                        function,
                        target = self.describe(),
                        error = %error,
                        "writing failed events to the dead-letter target failed; {waiting} until it succeeds"
                    );
                    stats.set_status(format!(
                        "error: cannot write to the dead-letter target {} ({waiting}; retried with back-off): {error}",
                        self.describe()
                    ));
                    stats.error(&WorkerError::SettleMessage(error));
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
    ) -> Result<(), ConnectorError> {
        match self {
            DeadLetterSink::Topic(writer) => {
                let records = events.iter().map(|event| OutgoingRecord {
                    key: event.key.clone(),
                    value: event.value.clone().unwrap_or_default(),
                    headers: dead_letter_headers(event, failure),
                    partition: None,
                });
                Ok(writer.send_all(records).await?)
            }
            DeadLetterSink::Queue {
                queue,
                created,
                encoding,
            } => {
                created
                    .get_or_try_init(|| queue.create_if_missing())
                    .await?;
                for event in events {
                    let text = dead_letter_message(event, failure).to_string();
                    queue.enqueue(&encode_body(&text, *encoding)).await?;
                }
                Ok(())
            }
        }
    }

    /// The target, for statuses and logs.
    pub fn describe(&self) -> String {
        match self {
            DeadLetterSink::Topic(writer) => format!("topic {}", writer.topic()),
            DeadLetterSink::Queue { queue, .. } => format!("queue {}", queue.name()),
        }
    }
}

/// Which checkpoints wait for the write, for the status: `orders partition 0 waits at offset
/// 5`, or for a batch the partitions it spans.
fn waiting(events: &[&StreamEvent]) -> String {
    let mut partitions: Vec<(i32, i64)> = Vec::new();
    for event in events {
        if !partitions.iter().any(|(p, _)| *p == event.partition) {
            partitions.push((event.partition, event.offset));
        }
    }
    let topic = events.first().map_or("", |e| e.topic.as_str());
    match partitions.as_slice() {
        [(partition, offset)] => {
            format!("{topic} partition {partition} waits at offset {offset}")
        }
        _ => {
            let list: Vec<String> = partitions
                .iter()
                .map(|(p, o)| format!("{p} at offset {o}"))
                .collect();
            format!("{topic} partitions {} wait", list.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(partition: i32, offset: i64) -> StreamEvent {
        StreamEvent::at("orders", partition, offset)
    }

    #[test]
    fn the_status_names_the_checkpoints_that_wait() {
        let (a, b, c) = (event(0, 5), event(0, 6), event(2, 9));
        assert_eq!(waiting(&[&a]), "orders partition 0 waits at offset 5");
        assert_eq!(waiting(&[&a, &b]), "orders partition 0 waits at offset 5");
        assert_eq!(
            waiting(&[&a, &c, &b]),
            "orders partitions 0 at offset 5, 2 at offset 9 wait"
        );
    }
}
