//! Where a function's finally failed messages are, by its trigger: a queue trigger's poison
//! queue, a Service Bus trigger's dead-letter queue, a stream trigger's dead-letter topic —
//! opened with the app's settings and connections under the tenant's egress policy
//! ([`FunctionContext`], shared with the send endpoint).

use shoal_connectors::{Queue, StorageQueues};
use shoal_domain::queue_trigger::poison_queue_name;
use shoal_domain::stream_trigger::source::{connection_properties, resolve_secure};
use shoal_domain::stream_trigger::{DeadLetterTarget, default_target};
use shoal_store::TenantId;

use super::dead_letter_topic::DeadLetterTopic;
use super::dead_letters::DeadLetters;
use crate::error::ApiError;
use crate::routes::trigger_source::{FunctionContext, TriggerSource};
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
        let context = FunctionContext::load(state, id, app, function).await?;
        let unusable =
            |e: String| ApiError::Conflict(format!("the trigger's queue cannot be used: {e}"));
        match context.trigger()? {
            TriggerSource::StorageQueue {
                connection,
                queue_name,
            } => {
                context.check_egress(&connection).await?;
                let queues = StorageQueues::connect_for_app(
                    &connection,
                    &context.connector_options(),
                    &context.identities,
                )
                .map_err(|e| unusable(e.to_string()))?;
                let open = |name: &str| queues.queue(name).map_err(|e| unusable(e.to_string()));
                // As in Azure, some queues have none: their failed messages stay on the queue.
                let poison = poison_queue_name(&queue_name).map_err(|reason| {
                    ApiError::Conflict(format!(
                        "the function has no poison queue: {reason}; its failed messages stay on {queue_name}"
                    ))
                })?;
                Ok(Source::Queue(TriggerQueues {
                    trigger: open(&queue_name)?,
                    poison: open(&poison)?,
                }))
            }
            TriggerSource::ServiceBus {
                connection, entity, ..
            } => {
                context.check_egress(&connection).await?;
                let options = context.connector_options();
                let dead =
                    DeadLetters::open(&connection, entity, &options, &context.identities).await?;
                Ok(Source::ServiceBus(dead))
            }
            TriggerSource::Stream { source, .. } => {
                let unusable = |e: String| {
                    ApiError::Conflict(format!(
                        "the trigger's dead-letter topic cannot be used: {e}"
                    ))
                };
                let target = context
                    .spec
                    .dead_letter
                    .as_ref()
                    .map(|d| d.0.clone())
                    .unwrap_or_else(|| default_target(&source.topic));
                let topic = match target {
                    DeadLetterTarget::Topic(topic) => resolve_secure(&topic, &context.settings)
                        .map_err(|e| unusable(format!("deadLetter.topic: {e}")))?,
                    DeadLetterTarget::StorageQueue { queue_name, .. } => {
                        return Err(ApiError::Conflict(format!(
                            "function {function} dead-letters to the Storage queue {}, as JSON documents; read them there (only a dead-letter topic is listed and replayed here)",
                            queue_name.as_str()
                        )));
                    }
                };
                Ok(Source::Stream(DeadLetterTopic::new(
                    source.topic.clone(),
                    topic,
                    connection_properties(&source.properties),
                    (id.as_str(), app, function),
                    context.egress.clone(),
                )))
            }
            TriggerSource::Other(_) => Err(ApiError::Conflict(format!(
                "function {function} has no queueTrigger, serviceBusTrigger, kafkaTrigger or eventHubTrigger, so it has no poison queue, dead-letter queue or dead-letter topic"
            ))),
        }
    }
}
