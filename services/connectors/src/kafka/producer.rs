//! Writing records to a topic, each acknowledged by all in-sync replicas before `send` returns.

use std::time::Duration;

use rdkafka::ClientContext;
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord};

use super::{KafkaError, KafkaProperties, check_name, client_log};
use crate::error::Redactor;

/// One record to write. Without `partition`, librdkafka's partitioner picks one from the key
/// (records with the same key land in the same partition; keyless ones are spread).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutgoingRecord {
    pub key: Option<Vec<u8>>,
    pub value: Vec<u8>,
    pub headers: Vec<(String, Vec<u8>)>,
    pub partition: Option<i32>,
}

/// How long `send` waits for room in librdkafka's local queue when it is full.
const QUEUE_TIMEOUT: Duration = Duration::from_secs(30);

/// A producer with `acks=all` and idempotence on (no duplicates or reordering from librdkafka's
/// own retries). Cheap to share: `send` takes `&self` and may run concurrently; librdkafka
/// batches what is sent at the same time.
pub struct StreamProducer {
    client: Option<FutureProducer<ProducerLog>>,
    redactor: Redactor,
}

impl StreamProducer {
    pub fn new(props: &KafkaProperties) -> Result<StreamProducer, KafkaError> {
        let redactor = props.redactor();
        let client = props
            .client_config(&[("acks", "all"), ("enable.idempotence", "true")])
            .create_with_context(ProducerLog)
            .map_err(|e| KafkaError::from_rdkafka(&redactor, "create producer", None, &e))?;
        Ok(StreamProducer {
            client: Some(client),
            redactor,
        })
    }

    /// Writes `record` to `topic` and returns its `(partition, offset)` once acknowledged.
    /// Dropping the future does not withdraw the record: librdkafka may still write it.
    pub async fn send(
        &self,
        topic: &str,
        record: OutgoingRecord,
    ) -> Result<(i32, i64), KafkaError> {
        check_name("topic", topic)?;
        if let Some(partition) = record.partition.filter(|p| *p < 0) {
            return Err(KafkaError::InvalidRequest(format!(
                "partition {partition} does not exist: partitions are numbered from 0"
            )));
        }
        let headers = record.headers.iter().fold(
            OwnedHeaders::new_with_capacity(record.headers.len()),
            |h, (key, value)| {
                h.insert(Header {
                    key,
                    value: Some(value),
                })
            },
        );
        let mut out = FutureRecord::<[u8], [u8]>::to(topic)
            .payload(&record.value)
            .headers(headers);
        if let Some(key) = &record.key {
            out = out.key(key);
        }
        if let Some(partition) = record.partition {
            out = out.partition(partition);
        }
        let client = self
            .client
            .as_ref()
            .expect("the client is taken only on drop");
        match client.send(out, QUEUE_TIMEOUT).await {
            Ok(delivery) => Ok((delivery.partition, delivery.offset)),
            Err((e, _record)) => Err(KafkaError::from_rdkafka(
                &self.redactor,
                "send",
                Some(topic),
                &e,
            )),
        }
    }
}

impl Drop for StreamProducer {
    fn drop(&mut self) {
        // Dropping the client flushes for up to 500 ms: never on a runtime thread.
        if let Some(client) = self.client.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn_blocking(move || drop(client));
        }
    }
}

impl std::fmt::Debug for StreamProducer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamProducer").finish_non_exhaustive()
    }
}

/// Logs librdkafka's messages.
#[derive(Clone)]
struct ProducerLog;

impl ClientContext for ProducerLog {
    fn log(&self, level: rdkafka::config::RDKafkaLogLevel, fac: &str, message: &str) {
        client_log(level, fac, message);
    }

    fn error(&self, error: rdkafka::error::KafkaError, reason: &str) {
        tracing::warn!(%error, reason, "Kafka producer error");
    }
}
