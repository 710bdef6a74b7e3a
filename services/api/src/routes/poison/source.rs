//! Where a function's finally failed messages are, by its trigger: a queue trigger's poison
//! queue, a Service Bus trigger's dead-letter queue, a stream trigger's dead-letter topic —
//! opened with the app's settings and connections (and, for a tenant-chosen broker, the
//! tenant's egress policy).

use std::collections::BTreeMap;

use shoal_connectors::{ConnectorOptions, Queue, StorageQueues};
use shoal_domain::bindings::Binding;
use shoal_domain::connection::{ConnectionKind, resolve};
use shoal_domain::egress::AllowList;
use shoal_domain::host_config::HostConfig;
use shoal_domain::queue_trigger::{poison_queue_name, trigger_queue_name};
use shoal_domain::service_bus_entity::path::resolve_trigger_entity;
use shoal_domain::stream_trigger::source::{connection_properties, resolve_secure};
use shoal_domain::stream_trigger::{DeadLetterTarget, default_target, stream_source};
use shoal_store::{
    TenantId, apps, begin_tenant, functions as stored_functions, principals, tenants,
};

use super::dead_letter_topic::DeadLetterTopic;
use super::dead_letters::DeadLetters;
use crate::error::ApiError;
use crate::routes::functions::parse_stored;
use crate::state::AppState;

/// A queue-triggered function's trigger queue and poison queue, connected as the app.
pub(super) struct TriggerQueues {
    pub trigger: Queue,
    pub poison: Queue,
}

/// Where the function's finally failed messages are.
pub(super) enum Source {
    Queue(TriggerQueues),
    ServiceBus(DeadLetters),
    Stream(DeadLetterTopic),
}

impl Source {
    pub async fn open(
        state: &AppState,
        id: &TenantId,
        app: &str,
        function: &str,
    ) -> Result<Source, ApiError> {
        let mut tx = begin_tenant(&state.pool, id).await?;
        let record = stored_functions::get(&mut tx, id, app, function).await?;
        let app_record = apps::get(&mut tx, id, &state.cipher, app).await?;
        let app_spec = crate::routes::apps::parse_stored(&app_record)?.spec;
        let identities = principals::app_identities(&mut tx, id, app, &app_spec.identity).await?;
        let egress_allow = tenants::egress_allow(&mut tx, id.as_str()).await?;
        shoal_store::commit(tx).await?;
        let host = HostConfig::from_stored(
            app_record
                .written_document()
                .get("hostConfig")
                .unwrap_or(&serde_json::Value::Null),
        );
        let spec = parse_stored(&record)?.spec;
        let settings: BTreeMap<String, String> = app_record
            .settings
            .into_iter()
            .map(|s| (s.name, s.value))
            .collect();
        let unusable =
            |e: String| ApiError::Conflict(format!("the trigger's queue cannot be used: {e}"));
        match spec.trigger() {
            Some(Binding::QueueTrigger(trigger)) => {
                let connection = resolve(
                    ConnectionKind::StorageQueue,
                    trigger.connection.as_deref(),
                    &settings,
                )
                .map_err(|e| unusable(e.to_string()))?;
                let queue_name =
                    trigger_queue_name(&trigger.queue_name, &settings).map_err(unusable)?;
                let queues = StorageQueues::connect_for_app(
                    &connection,
                    &ConnectorOptions::default(),
                    &identities,
                )
                .map_err(|e| unusable(e.to_string()))?;
                let open = |name: &str| queues.queue(name).map_err(|e| unusable(e.to_string()));
                // As in Azure, some queues have none: their failed messages stay on the queue.
                let poison = poison_queue_name(queue_name.as_str()).map_err(|reason| {
                    ApiError::Conflict(format!(
                        "the function has no poison queue: {reason}; its failed messages stay on {queue_name}"
                    ))
                })?;
                Ok(Source::Queue(TriggerQueues {
                    trigger: open(queue_name.as_str())?,
                    poison: open(&poison)?,
                }))
            }
            Some(Binding::ServiceBusTrigger(trigger)) => {
                let connection = resolve(
                    ConnectionKind::ServiceBus,
                    trigger.connection.as_deref(),
                    &settings,
                )
                .map_err(|e| unusable(e.to_string()))?;
                let entity = resolve_trigger_entity(
                    trigger.queue_name.as_deref(),
                    trigger.topic_name.as_deref(),
                    trigger.subscription_name.as_deref(),
                    &settings,
                )
                .map_err(|e| unusable(e.to_string()))?;
                let dead = DeadLetters::open(&connection, entity, &identities);
                Ok(Source::ServiceBus(dead.await?))
            }
            Some(trigger @ (Binding::KafkaTrigger(_) | Binding::EventHubTrigger(_))) => {
                let unusable = |e: String| {
                    ApiError::Conflict(format!(
                        "the trigger's dead-letter topic cannot be used: {e}"
                    ))
                };
                let source = stream_source(trigger, &settings, &host).map_err(unusable)?;
                let target = spec
                    .dead_letter
                    .as_ref()
                    .map(|d| d.0.clone())
                    .unwrap_or_else(|| default_target(&source.topic));
                let topic = match target {
                    DeadLetterTarget::Topic(topic) => resolve_secure(&topic, &settings)
                        .map_err(|e| unusable(format!("deadLetter.topic: {e}")))?,
                    DeadLetterTarget::StorageQueue { queue_name, .. } => {
                        return Err(ApiError::Conflict(format!(
                            "function {function} dead-letters to the Storage queue {}, as JSON documents; read them there (only a dead-letter topic is listed and replayed here)",
                            queue_name.as_str()
                        )));
                    }
                };
                let allow = AllowList::from_items(egress_allow.iter().map(String::as_str))
                    .unwrap_or_default();
                Ok(Source::Stream(DeadLetterTopic::new(
                    source.topic.clone(),
                    topic,
                    connection_properties(&source.properties),
                    (id.as_str(), app, function),
                    state.egress().for_tenant(&allow),
                )))
            }
            _ => Err(ApiError::Conflict(format!(
                "function {function} has no queueTrigger, serviceBusTrigger, kafkaTrigger or eventHubTrigger, so it has no poison queue, dead-letter queue or dead-letter topic"
            ))),
        }
    }
}
