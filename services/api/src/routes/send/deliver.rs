//! Putting one message on the trigger's source, connected as the app under the tenant's egress
//! policy: a Storage queue, a Service Bus queue or topic, a Kafka topic or event hub.

use shoal_connectors::kafka::{
    KafkaError, KafkaProperties, OutgoingRecord, StreamProducer, check_cluster,
};
use shoal_connectors::{QueueError, StorageQueues};
use shoal_domain::binding_kinds::stream::is_event_hubs;
use shoal_domain::bindings::Binding;
use shoal_domain::service_bus_entity::path::EntityPath;
use shoal_domain::service_bus_trigger::output::OutgoingMessage;
use shoal_domain::stream_trigger::source::{StreamSource, connection_properties};

use super::SendResult;
use crate::error::ApiError;
use crate::routes::trigger_source::{FunctionContext, open_namespace};
use shoal_domain::connection::ConnectionSpec;
use shoal_domain::send_message::{BodyForm, SendRequest};

pub(super) async fn storage_queue(
    context: &FunctionContext,
    connection: &ConnectionSpec,
    queue_name: &str,
    text: &str,
) -> Result<SendResult, ApiError> {
    context.check_egress(connection).await?;
    let unusable =
        |e: String| ApiError::Conflict(format!("the trigger's queue cannot be used: {e}"));
    let queues = StorageQueues::connect_for_app(
        connection,
        &context.connector_options(),
        &context.identities,
    )
    .map_err(|e| unusable(e.to_string()))?;
    let queue = queues
        .queue(queue_name)
        .map_err(|e| unusable(e.to_string()))?;
    let message_id = queue.send(text).await.map_err(|e| match e {
        // Not created here: a test message is no reason to create queues in the tenant's
        // account, and a missing trigger queue is worth knowing about.
        QueueError::QueueNotFound { .. } => ApiError::Conflict(format!(
            "the trigger's queue {queue_name} does not exist in the storage account"
        )),
        other => ApiError::Storage(format!("the queue service failed: {other}")),
    })?;
    Ok(SendResult {
        trigger: "queueTrigger".into(),
        destination: queue_name.to_owned(),
        message_id,
        size: text.len() as u64,
        session_id: None,
        partition: None,
        offset: None,
    })
}

pub(super) async fn service_bus(
    context: &FunctionContext,
    connection: &ConnectionSpec,
    entity: &EntityPath,
    request: SendRequest,
) -> Result<SendResult, ApiError> {
    context.check_egress(connection).await?;
    // A subscription is read from its topic: the message goes to the topic, so every
    // subscription whose rules match receives it, as in Azure.
    let destination = match entity {
        EntityPath::Queue(queue) => queue.clone(),
        EntityPath::Subscription { topic, .. } => topic.clone(),
    };
    let namespace = open_namespace(
        connection,
        &context.connector_options(),
        &context.identities,
    )
    .await?;
    let message_id = uuid::Uuid::new_v4().to_string();
    let size = request.body.len() as u64;
    let message = OutgoingMessage {
        body: request.body,
        message_id: Some(message_id.clone()),
        session_id: request.session_id.clone(),
        content_type: match request.form {
            BodyForm::Json => Some("application/json".into()),
            BodyForm::Text => Some("text/plain".into()),
            BodyForm::Binary => None,
        },
        application_properties: request
            .properties
            .into_iter()
            .map(|(k, v)| (k, v.into()))
            .collect(),
        ..OutgoingMessage::default()
    };
    let failed = |e: String| ApiError::Storage(format!("sending to {destination} failed: {e}"));
    let sent = async {
        let mut sender = namespace
            .sender(&destination)
            .await
            .map_err(|e| failed(e.to_string()))?;
        let sent = sender
            .send(&[message])
            .await
            .map_err(|e| failed(e.to_string()));
        let _ = sender.close().await;
        sent
    }
    .await;
    namespace.close().await;
    sent?;
    Ok(SendResult {
        trigger: "serviceBusTrigger".into(),
        destination,
        message_id: Some(message_id),
        size,
        session_id: request.session_id,
        partition: None,
        offset: None,
    })
}

pub(super) async fn stream(
    context: &FunctionContext,
    binding: &Binding,
    source: &StreamSource,
    request: SendRequest,
) -> Result<SendResult, ApiError> {
    let mut properties = KafkaProperties::new();
    for (key, value) in connection_properties(&source.properties) {
        properties.set(key, value);
    }
    // The setting a refusal names, as the worker's refusals do.
    let setting = if is_event_hubs(binding) {
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
    check_cluster(&properties, &source.topic, setting, &context.egress)
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
    Ok(SendResult {
        trigger: binding.type_name().into(),
        destination: source.topic.clone(),
        message_id: Some(format!("{partition}-{offset}")),
        size,
        session_id: None,
        partition: Some(partition),
        offset: Some(offset),
    })
}
