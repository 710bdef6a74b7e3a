//! `queueTrigger` in the API: a test message put on the trigger's Storage queue, and the failed
//! messages read from and replayed out of its poison queue (`<queue>-poison`, where the
//! listener moves a message after `maxDequeueCount` failed deliveries). Both queues are reached
//! with the app's connection under the tenant's egress policy.
//!
//! Reading is a peek (nothing changes); a replay receives from the poison queue, enqueues a
//! copy on the trigger queue (a new message, dequeue count 0) and only then deletes the poison
//! message: a message may be replayed twice if that delete fails, never lost.

use std::time::Duration;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use shoal_connectors::{Queue, QueueError, StorageQueues};
use shoal_domain::binding_kinds::storage_queue::TRIGGER_TYPE;
use shoal_domain::connection::ConnectionSpec;
use shoal_domain::host_config::MessageEncoding;
use shoal_domain::queue_trigger::poison_queue_name;
use shoal_domain::send_message::{Carrier, SendRequest};
use shoal_domain::trigger_source::TriggerSource;

use super::{FailedMessage, FailedMessages, KindRoutes, Replayed, Sent, Target, Wanted, bounded};
use crate::error::ApiError;
use crate::routes::trigger_source::FunctionContext;

/// How long a message taken for replay stays invisible: enough for its copy and delete.
const REPLAY_VISIBILITY: Duration = Duration::from_secs(30);

pub(super) struct StorageQueueRoutes;

pub(super) const STORAGE_QUEUE: StorageQueueRoutes = StorageQueueRoutes;

/// A queue-triggered function's trigger queue and poison queue, connected as the app.
struct TriggerQueues {
    trigger: Queue,
    poison: Queue,
}

impl KindRoutes for StorageQueueRoutes {
    fn type_name(&self) -> &'static str {
        TRIGGER_TYPE
    }

    fn send<'a>(
        &'a self,
        target: Target<'a>,
        request: SendRequest,
    ) -> BoxFuture<'a, Result<Sent, ApiError>> {
        async move {
            let (connection, queue_name) = queue(&target)?;
            let context = target.context;
            let base64 = context.host.extensions.queues.message_encoding == MessageEncoding::Base64;
            let text = request
                .check(Carrier::StorageQueue { base64 })
                .map_err(ApiError::Validation)?
                .unwrap_or_default();
            deliver(context, connection, queue_name, &text).await
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
            let queues = open(&target).await?;
            let (count, peeked) = bounded(async {
                match queues.poison.approximate_length().await {
                    Err(QueueError::QueueNotFound { .. }) => Ok((0, Vec::new())),
                    Err(e) => Err(e),
                    Ok(count) => Ok((count, queues.poison.peek(top).await?)),
                }
            })
            .await?;
            Ok(FailedMessages {
                source: queues.trigger.name().to_owned(),
                failed: queues.poison.name().to_owned(),
                count,
                messages: peeked
                    .into_iter()
                    .map(|m| FailedMessage {
                        message_id: m.message_id,
                        failed_at: m.insertion_time,
                        expires_at: Some(m.expiration_time),
                        failures: m.dequeue_count,
                        reason: None,
                        body: with_bodies.then_some(m.text),
                    })
                    .collect(),
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
            let queues = open(&target).await?;
            bounded(replay(&queues, ids, limit)).await
        }
        .boxed()
    }
}

/// The trigger's connection and queue.
fn queue<'t>(target: &'t Target<'_>) -> Result<(&'t ConnectionSpec, &'t str), ApiError> {
    match &target.source {
        TriggerSource::StorageQueue { connection, queue } => Ok((connection, queue)),
        _ => Err(target.unexpected()),
    }
}

fn unusable(e: String) -> ApiError {
    ApiError::Conflict(format!("the trigger's queue cannot be used: {e}"))
}

/// The storage account's queue service, as the app, once the egress policy allows it.
async fn connect(
    context: &FunctionContext,
    connection: &ConnectionSpec,
) -> Result<StorageQueues, ApiError> {
    context.check_egress(connection).await?;
    StorageQueues::connect_for_app(
        connection,
        &context.connector_options(),
        &context.identities,
    )
    .map_err(|e| unusable(e.to_string()))
}

async fn deliver(
    context: &FunctionContext,
    connection: &ConnectionSpec,
    queue_name: &str,
    text: &str,
) -> Result<Sent, ApiError> {
    let queues = connect(context, connection).await?;
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
    Ok(Sent {
        destination: queue_name.to_owned(),
        message_id,
        size: text.len() as u64,
        session_id: None,
        partition: None,
        offset: None,
    })
}

/// The trigger queue and its poison queue, connected as the app; 409 when the queue has none.
async fn open(target: &Target<'_>) -> Result<TriggerQueues, ApiError> {
    let (connection, queue_name) = queue(target)?;
    let queues = connect(target.context, connection).await?;
    let open = |name: &str| queues.queue(name).map_err(|e| unusable(e.to_string()));
    // As in Azure, some queues have none: their failed messages stay on the queue.
    let poison = poison_queue_name(queue_name).map_err(|reason| {
        ApiError::Conflict(format!(
            "the function has no poison queue: {reason}; its failed messages stay on {queue_name}"
        ))
    })?;
    Ok(TriggerQueues {
        trigger: open(queue_name)?,
        poison: open(&poison)?,
    })
}

/// Receives from the poison queue until `count` messages (or every named one) moved back or
/// the queue has no more visible messages; messages received but not named are made visible
/// again at once.
async fn replay(
    queues: &TriggerQueues,
    ids: Option<&[String]>,
    limit: u32,
) -> Result<Replayed, QueueError> {
    let mut wanted = Wanted::new(ids);
    let mut moved = Vec::new();
    let mut skipped = Vec::new();
    let result = async {
        while (moved.len() as u32) < limit {
            let take = (limit - moved.len() as u32).clamp(1, 32) as u8;
            let batch = match queues.poison.receive(take, REPLAY_VISIBILITY).await {
                Err(QueueError::QueueNotFound { .. }) => break,
                other => other?,
            };
            if batch.is_empty() {
                break;
            }
            for message in batch {
                if !wanted.take(&message.message_id) || moved.len() as u32 >= limit {
                    skipped.push(message);
                    continue;
                }
                queues.trigger.enqueue(&message.text).await?;
                queues
                    .poison
                    .delete(&message.message_id, &message.pop_receipt)
                    .await?;
                moved.push(message.message_id);
            }
            if wanted.all_found() {
                break;
            }
        }
        Ok::<(), QueueError>(())
    }
    .await;
    // Whatever happened, what was taken but not moved becomes visible again.
    for message in &skipped {
        let _ = queues
            .poison
            .update_visibility(&message.message_id, &message.pop_receipt, Duration::ZERO)
            .await;
    }
    result?;
    Ok(Replayed::new(moved, wanted))
}
