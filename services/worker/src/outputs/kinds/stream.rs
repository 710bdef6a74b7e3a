//! The `kafka` and `eventHub` outputs: the handler's output produced to a Kafka topic, or to an
//! event hub through its Kafka endpoint (`stream_trigger::output`: a `kafka` output reads the
//! `KafkaEventData` form, with key and headers; an `eventHub` one does not). Every record
//! carries the attempt's trace context in its headers unless the handler set one, and every
//! record is acknowledged by the brokers before the invocation counts as done. The producer
//! is made on first use, after the brokers pass the app's egress policy.

use futures::FutureExt as _;
use futures::future::try_join_all;
use serde_json::Value;
use shoal_connectors::kafka::{KafkaProperties, OutgoingRecord, StreamProducer};
use shoal_domain::binding_kinds::KindBinding;
use shoal_domain::binding_kinds::stream::{self, EVENT_HUB_OUTPUT_TYPE, KAFKA_OUTPUT_TYPE};
use shoal_domain::stream_trigger::source::check_topic;
use shoal_domain::stream_trigger::stream_output_records;
use shoal_domain::trace_context::TraceContext;
use shoal_egress::Egress;
use tokio::sync::OnceCell;

use super::{Bound, KindTarget, OutputKind, Prepared};
use crate::config::WorkerConfig;
use crate::connections;
use crate::error::OutputWriteError;
use crate::hosted_apps::HostedApp;

/// One of the two stream outputs.
pub struct StreamOutput {
    binding_type: &'static str,
    /// `kafka` outputs read the `KafkaEventData` form (key, headers); `eventHub` ones do not.
    event_data_form: bool,
}

pub const KAFKA: StreamOutput = StreamOutput {
    binding_type: KAFKA_OUTPUT_TYPE,
    event_data_form: true,
};

pub const EVENT_HUB: StreamOutput = StreamOutput {
    binding_type: EVENT_HUB_OUTPUT_TYPE,
    event_data_form: false,
};

impl OutputKind for StreamOutput {
    fn binding_type(&self) -> &'static str {
        self.binding_type
    }

    fn bind(
        &self,
        binding: &KindBinding,
        app: &HostedApp,
        config: &WorkerConfig,
    ) -> Result<Bound, String> {
        let Some(target) = stream::client(binding, &app.settings) else {
            return Err(format!("{} is not a stream output", self.binding_type));
        };
        let target = target?;
        connections::check_brokers(&target.properties, app, config)?;
        let mut properties = KafkaProperties::new();
        for (key, value) in &target.properties {
            properties.set(key, value);
        }
        Ok(Bound {
            name: Some(target.topic.clone()),
            target: Box::new(Producer {
                topic: target.topic,
                properties,
                event_data_form: self.event_data_form,
                producer: OnceCell::new(),
                egress: config.egress.for_tenant(&app.egress_allow),
            }),
        })
    }
}

/// A Kafka topic (or an event hub through its Kafka endpoint); the producer is made on first
/// use and kept.
struct Producer {
    topic: String,
    properties: KafkaProperties,
    event_data_form: bool,
    producer: OnceCell<StreamProducer>,
    /// The app's egress policy, which the brokers pass before the producer is made.
    egress: Egress,
}

impl KindTarget for Producer {
    fn check_name(&self, written: &str, resolved: String) -> Result<String, String> {
        match check_topic(&resolved) {
            Ok(()) => Ok(resolved),
            Err(e) => Err(format!("{written} resolves to {resolved:?}, which {e}")),
        }
    }

    fn prepare<'a>(
        &'a self,
        value: &'a Value,
        trace: &'a TraceContext,
    ) -> Result<Prepared<'a>, OutputWriteError> {
        let mut records = stream_output_records(value, self.event_data_form);
        for record in &mut records {
            let headers = &record.headers;
            let added = trace.for_output(false, |name| headers.iter().any(|(k, _)| k == name));
            record.headers.extend(
                added
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v.into_bytes())),
            );
        }
        Ok(Box::new(move |name, _| {
            async move {
                if records.is_empty() {
                    return Ok(0);
                }
                let topic = name.as_deref().unwrap_or(&self.topic);
                let producer = self
                    .producer
                    .get_or_try_init(|| {
                        connections::stream_producer(&self.properties, &self.topic, &self.egress)
                    })
                    .await?;
                let count = records.len();
                try_join_all(records.into_iter().map(|record| {
                    producer.send(
                        topic,
                        OutgoingRecord {
                            key: record.key,
                            value: record.value,
                            headers: record.headers,
                            partition: None,
                        },
                    )
                }))
                .await
                .map_err(|e| format!("producing to {topic}: {e}"))?;
                Ok(count)
            }
            .boxed()
        }))
    }
}
