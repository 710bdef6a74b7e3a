//! `kafkaTrigger` and `eventHubTrigger` (Event Hubs through its Kafka endpoint) in the API: a
//! test record written to the trigger's topic (event hub), and the function's dead letters
//! read from and replayed out of its dead-letter topic ([`dead_letter_topic`]: `<topic>-poison`,
//! or the function's `deadLetter.topic`). The brokers are checked against the tenant's egress
//! policy before anything connects. One kind serving both trigger types, a registry line each.

mod dead_letter_topic;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use shoal_connectors::kafka::{
    KafkaError, KafkaProperties, OutgoingRecord, StreamProducer, check_cluster,
};
use shoal_domain::binding_kinds::stream::{
    EVENT_HUB_TRIGGER_TYPE, KAFKA_TRIGGER_TYPE, is_event_hubs,
};
use shoal_domain::send_message::{Carrier, SendRequest};
use shoal_domain::stream_trigger::source::{StreamSource, connection_properties, resolve_secure};
use shoal_domain::stream_trigger::{DeadLetterTarget, default_target};
use shoal_domain::trigger_source::TriggerSource;

use super::{FailedMessages, KindRoutes, Replayed, Sent, Target, bounded};
use crate::error::ApiError;
use dead_letter_topic::{DeadLetterTopic, NO_SELECTION};

/// A stream trigger's routes, under its `type`.
pub(super) struct StreamRoutes(&'static str);

pub(super) const KAFKA: StreamRoutes = StreamRoutes(KAFKA_TRIGGER_TYPE);
pub(super) const EVENT_HUBS: StreamRoutes = StreamRoutes(EVENT_HUB_TRIGGER_TYPE);

impl KindRoutes for StreamRoutes {
    fn type_name(&self) -> &'static str {
        self.0
    }

    fn send<'a>(
        &'a self,
        target: Target<'a>,
        request: SendRequest,
    ) -> BoxFuture<'a, Result<Sent, ApiError>> {
        async move {
            let source = stream(&target)?;
            request
                .check(Carrier::Stream)
                .map_err(ApiError::Validation)?;
            deliver(&target, source, request).await
        }
        .boxed()
    }

    fn failed<'a>(
        &'a self,
        target: Target<'a>,
        top: u8,
        with_bodies: bool,
    ) -> BoxFuture<'a, Result<FailedMessages, ApiError>> {
        async move {
            let dead = open(&target)?;
            let (count, messages) = bounded(dead.peek(top, with_bodies)).await?;
            Ok(FailedMessages {
                source: dead.source_topic.clone(),
                failed: dead.topic.clone(),
                count,
                messages,
            })
        }
        .boxed()
    }

    fn replay<'a>(
        &'a self,
        target: Target<'a>,
        ids: Option<&'a [String]>,
        limit: u32,
    ) -> BoxFuture<'a, Result<Replayed, ApiError>> {
        async move {
            let dead = open(&target)?;
            if ids.is_some() {
                return Err(ApiError::validation("messageIds", NO_SELECTION));
            }
            bounded(dead.replay(ids, limit)).await
        }
        .boxed()
    }
}

/// The trigger's topic and client.
fn stream<'t>(target: &'t Target<'_>) -> Result<&'t StreamSource, ApiError> {
    match &target.source {
        TriggerSource::Stream(source) => Ok(source),
        _ => Err(target.unexpected()),
    }
}

/// The function's dead-letter topic on the trigger's brokers; 409 when it dead-letters to a
/// Storage queue instead, or its `deadLetter.topic` does not resolve.
fn open(target: &Target<'_>) -> Result<DeadLetterTopic, ApiError> {
    let source = stream(target)?;
    let context = target.context;
    let function = context.function.as_str();
    let unusable = |e: String| {
        ApiError::Conflict(format!(
            "the trigger's dead-letter topic cannot be used: {e}"
        ))
    };
    let dead_letter = context
        .spec
        .dead_letter
        .as_ref()
        .map(|d| d.0.clone())
        .unwrap_or_else(|| default_target(&source.topic));
    let topic = match dead_letter {
        DeadLetterTarget::Topic(topic) => resolve_secure(&topic, &context.settings)
            .map_err(|e| unusable(format!("deadLetter.topic: {e}")))?,
        DeadLetterTarget::StorageQueue { queue_name, .. } => {
            return Err(ApiError::Conflict(format!(
                "function {function} dead-letters to the Storage queue {}, as JSON documents; read them there (only a dead-letter topic is listed and replayed here)",
                queue_name.as_str()
            )));
        }
    };
    Ok(DeadLetterTopic::new(
        source.topic.clone(),
        topic,
        connection_properties(&source.properties),
        (context.tenant.as_str(), context.app.as_str(), function),
        context.egress.clone(),
    ))
}

async fn deliver(
    target: &Target<'_>,
    source: &StreamSource,
    request: SendRequest,
) -> Result<Sent, ApiError> {
    let mut properties = KafkaProperties::new();
    for (key, value) in connection_properties(&source.properties) {
        properties.set(key, value);
    }
    // The setting a refusal names, as the worker's refusals do.
    let setting = if is_event_hubs(target.binding) {
        "connection"
    } else {
        "brokerList"
    };
    let refused = |e: KafkaError| match e {
        KafkaError::Refused(why) => ApiError::Conflict(format!(
            "{why}: the egress policy does not allow the API to connect there"
        )),
        KafkaError::InvalidConfiguration(why) => {
            ApiError::Conflict(format!("the trigger's topic cannot be used: {why}"))
        }
        other => ApiError::Storage(format!("writing to {} failed: {other}", source.topic)),
    };
    check_cluster(&properties, &source.topic, setting, &target.context.egress)
        .await
        .map_err(refused)?;
    let producer = StreamProducer::new(&properties).map_err(refused)?;
    let size = request.body.len() as u64;
    let (partition, offset) = producer
        .send(
            &source.topic,
            OutgoingRecord {
                key: request.key.map(String::into_bytes),
                value: request.body,
                headers: request
                    .properties
                    .into_iter()
                    .map(|(k, v)| (k, v.into_bytes()))
                    .collect(),
                partition: None,
            },
        )
        .await
        .map_err(refused)?;
    Ok(Sent {
        destination: source.topic.clone(),
        message_id: Some(format!("{partition}-{offset}")),
        size,
        session_id: None,
        partition: Some(partition),
        offset: Some(offset),
    })
}
