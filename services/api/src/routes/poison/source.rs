//! Where a function's finally failed messages are, by its trigger: a queue trigger's poison
//! queue, a Service Bus trigger's dead-letter queue, a stream trigger's dead-letter topic, or
//! what a kind of `binding_kinds` says (`crate::routes::kinds`) — opened with the app's
//! settings and connections under the tenant's egress policy ([`FunctionContext`], shared
//! with the send endpoint).

use shoal_connectors::{Queue, StorageQueues};
use shoal_domain::binding_kinds::{BrokerSource, KindBinding};
use shoal_domain::queue_trigger::poison_queue_name;
use shoal_domain::stream_trigger::source::{connection_properties, resolve_secure};
use shoal_domain::stream_trigger::{DeadLetterTarget, default_target};
use shoal_store::TenantId;

use super::dead_letter_topic::DeadLetterTopic;
use super::dead_letters::DeadLetters;
use crate::error::ApiError;
use crate::routes::kinds::{self, KindRoutes, Target};
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
    /// Boxed: it holds the function's whole context.
    Kind(Box<KindTrigger>),
}

/// A trigger of a kind of `binding_kinds`, with the routes its kind has.
pub(super) struct KindTrigger {
    pub routes: &'static dyn KindRoutes,
    context: FunctionContext,
    binding: KindBinding,
    source: BrokerSource,
}

impl KindTrigger {
    pub fn target(&self) -> Target<'_> {
        Target {
            context: &self.context,
            binding: &self.binding,
            source: &self.source,
        }
    }
}

impl Source {
    pub async fn open(
        state: &AppState,
        id: &TenantId,
        app: &str,
        function: &str,
    ) -> Result<Source, ApiError> {
        let context = FunctionContext::load(state, id, app, function).await?;
        let kind = match context.trigger()? {
            TriggerSource::Kind { binding, source } => Some((binding.clone(), source)),
            _ => None,
        };
        if let Some((binding, source)) = kind {
            let routes = kinds::find(source.kind).ok_or_else(|| {
                ApiError::Conflict(format!(
                    "function {function}'s {} has no poison or dead-letter endpoint yet",
                    source.kind
                ))
            })?;
            return Ok(Source::Kind(Box::new(KindTrigger {
                routes,
                context,
                binding,
                source,
            })));
        }
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
            TriggerSource::Other(_) | TriggerSource::Kind { .. } => {
                Err(ApiError::Conflict(format!(
                    "function {function} has no queueTrigger, serviceBusTrigger, kafkaTrigger, eventHubTrigger or rabbitMQTrigger, so it has no poison queue, dead-letter queue or dead-letter topic"
                )))
            }
        }
    }
}
