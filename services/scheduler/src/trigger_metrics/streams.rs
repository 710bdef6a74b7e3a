//! A stream trigger's backlog: its consumer group's lag on the topic, read from outside the
//! group (the latest offset of each partition minus the group's committed offset, as Azure's
//! Kafka scaler computes `TotalLag` in `Listeners/Scaler/KafkaMetricsProvider.cs`), with the
//! partition count, which caps the instances. Event Hubs' unprocessed events are the same
//! figure read through its Kafka endpoint.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use shoal_connectors::ConnectorOptions;
use shoal_connectors::kafka::{KafkaProperties, check_cluster, consumer_lag};
use shoal_domain::connection::outbound::AppIdentities;
use shoal_domain::stream_trigger::StreamSource;
use shoal_domain::trigger_source::{self, TriggerSource};
use shoal_egress::Egress;

use super::{Account, MetricClient, MetricKind, Properties, QueueReading, ReadFailure};

pub(super) struct StreamMetrics;

impl MetricKind for StreamMetrics {
    fn source_kind(&self) -> &'static str {
        trigger_source::STREAM
    }

    /// The brokers and how to sign in: triggers on the same brokers with the same credentials
    /// share one account's read budget.
    fn account(&self, source: &TriggerSource) -> Account {
        let TriggerSource::Stream(stream) = source else {
            // Not reached: `KINDS` finds these metrics by the source's kind. Another kind's
            // source gets an account this kind's `connect` refuses.
            return Account::of_broker(source);
        };
        Account::Properties(brokers(stream))
    }

    fn connect(
        &self,
        account: &Account,
        _identities: &AppIdentities,
        egress: &Egress,
        _options: &ConnectorOptions,
    ) -> Result<Arc<dyn MetricClient>, String> {
        let Account::Properties(brokers) = account else {
            return Err("a stream is read with its client properties".to_owned());
        };
        Ok(Arc::new(Cluster::new(brokers, egress.clone())))
    }
}

/// The properties a read from outside the group takes from the trigger's.
fn wanted(key: &str) -> bool {
    key == "bootstrap.servers" || key == "security.protocol" || key.starts_with("sasl.")
}

/// Where a stream's brokers are and how to sign in: the client properties a lag read needs.
fn brokers(source: &StreamSource) -> Properties {
    Properties::new(
        source
            .properties
            .iter()
            .filter(|(k, _)| wanted(k))
            .cloned()
            .collect(),
    )
}

fn client_properties(brokers: &Properties) -> KafkaProperties {
    let mut properties = KafkaProperties::new();
    for (key, value) in brokers.iter() {
        properties.set(key, value);
    }
    properties
}

/// How often a cluster's brokers are checked again: librdkafka's own metadata refresh interval
/// (`topic.metadata.refresh.interval.ms`), so a cluster that starts advertising another
/// address is seen about when a client would learn of it.
const CHECK_EVERY: Duration = Duration::from_secs(300);

/// The setting a refused broker is reported by, as the worker reports it.
const BROKER_SETTING: &str = "brokerList";

/// A set of brokers read under one egress policy: the bootstrap servers and the brokers they
/// advertise are checked before the first lag read, and again every [`CHECK_EVERY`].
struct Cluster {
    properties: KafkaProperties,
    egress: Egress,
    checked: tokio::sync::Mutex<Option<Instant>>,
}

impl Cluster {
    fn new(brokers: &Properties, egress: Egress) -> Cluster {
        Cluster {
            properties: client_properties(brokers),
            egress,
            checked: tokio::sync::Mutex::new(None),
        }
    }

    async fn read_lag(&self, group: &str, topic: &str) -> Result<QueueReading, String> {
        self.check(topic).await?;
        read(&self.properties, group, topic).await
    }

    async fn check(&self, topic: &str) -> Result<(), String> {
        let mut checked = self.checked.lock().await;
        if checked.is_some_and(|at| at.elapsed() < CHECK_EVERY) {
            return Ok(());
        }
        check_cluster(&self.properties, topic, BROKER_SETTING, &self.egress)
            .await
            .map_err(|e| e.to_string())?;
        *checked = Some(Instant::now());
        Ok(())
    }
}

impl MetricClient for Cluster {
    fn read<'a>(
        &'a self,
        source: &'a TriggerSource,
        _queue_time: bool,
    ) -> BoxFuture<'a, Result<QueueReading, ReadFailure>> {
        Box::pin(async move {
            let TriggerSource::Stream(stream) = source else {
                return Err(ReadFailure::from("not a stream".to_owned()));
            };
            self.read_lag(&stream.consumer_group, &stream.topic)
                .await
                .map_err(ReadFailure::from)
        })
    }
}

async fn read(
    properties: &KafkaProperties,
    group: &str,
    topic: &str,
) -> Result<QueueReading, String> {
    let lag = consumer_lag(properties, group, topic)
        .await
        .map_err(|e| e.to_string())?;
    Ok(QueueReading {
        length: lag.total,
        queue_time_ms: None,
        partitions: u32::try_from(lag.partitions.len()).ok(),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;
    use shoal_domain::bindings::parse_bindings;
    use shoal_domain::host_config::HostConfig;
    use shoal_domain::stream_trigger::stream_source;

    use super::*;

    #[test]
    fn brokers_keep_what_a_lag_read_needs_and_never_print_the_password() {
        let binding = parse_bindings(
            &json!([{"type": "kafkaTrigger", "direction": "in", "name": "e",
                "brokerList": "b:9092", "topic": "t", "protocol": "saslSsl",
                "authenticationMode": "plain", "username": "u", "password": "%P%"}]),
            "bindings",
        )
        .unwrap()
        .remove(0);
        let settings = BTreeMap::from([("P".to_owned(), "hunter2".to_owned())]);
        let source = stream_source(&binding, &settings, &HostConfig::default()).unwrap();
        let brokers = brokers(&source);
        let properties = client_properties(&brokers);
        assert_eq!(properties.get("bootstrap.servers"), Some("b:9092"));
        assert_eq!(properties.get("sasl.password"), Some("hunter2"));
        let shown = format!("{brokers:?}");
        assert!(
            !shown.contains("hunter2") && shown.contains("sasl.password=***"),
            "{shown}"
        );
    }
}
