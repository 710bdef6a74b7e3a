//! `…/functions/{function}/poison` and `…/poison/replay`: where a function's messages go after
//! their last failed delivery — a queue trigger's poison queue (`<queue>-poison`, after
//! `maxDequeueCount`), a Service Bus queue trigger's dead-letter queue (after the entity's
//! `MaxDeliveryCount`), a stream trigger's dead-letter topic (`dead_letter_topic`), a RabbitMQ
//! trigger's dead-letter queue (`deadLetterQueueName`, `crate::routes::kinds`) — its depth
//! and oldest messages, and moving messages back to the trigger's queue or topic with their
//! body intact and a fresh dequeue or delivery count once the handler works again.
//!
//! The API reaches the queues with the app's connection as this process can sign in (like the
//! Service Bus probe of diagnostics): connection strings everywhere, identity-based
//! connections where the API's host may sign in as the app's identity.

mod dead_letter_topic;
mod dead_letters;
mod source;

use source::{Source, TriggerQueues};

use std::time::Duration;

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use shoal_connectors::QueueError;
use shoal_store::TenantId;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{TAG_FUNCTIONS, authorize};
use crate::access::{Caller, allow, permits};
use crate::error::{ApiError, Problem};
use crate::extract::{FunctionPath, JsonBody, Query};
use crate::routes::kinds::Wanted;
use crate::state::AppState;
use shoal_domain::rbac::{Scope, actions};

/// Most messages one replay moves, and the default.
const MAX_REPLAY: u32 = 1000;
const DEFAULT_REPLAY: u32 = 32;
/// How long a message taken for replay stays invisible: enough for its copy and delete.
const REPLAY_VISIBILITY: Duration = Duration::from_secs(30);
/// Longest one request waits on the storage service.
const STORAGE_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PoisonQueue {
    pub trigger_queue: String,
    pub poison_queue: String,
    /// The service's approximate count (0 when the poison queue does not exist yet).
    pub approximate_count: u64,
    /// The oldest visible messages, oldest first (peeked: nothing changes).
    pub messages: Vec<PoisonMessage>,
    /// Whether the bodies were left out for this caller (it may not list the app's settings,
    /// `Shoal/apps/settings/list/action`). Said here because a message without a `body` is
    /// otherwise ambiguous: hidden from this caller, or a message that has none.
    pub bodies_hidden: bool,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PoisonMessage {
    pub message_id: String,
    /// When it was written to the poison queue (for a dead-letter topic, the record's
    /// timestamp; for RabbitMQ, when the broker dead-lettered it, its `x-death` time).
    pub inserted_at: DateTime<Utc>,
    /// When the queue drops it (absent for a dead-letter topic: the topic's retention decides).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<DateTime<Utc>>,
    /// Times it was received from the poison queue (replays and peeks do not count); for a
    /// dead-lettered Service Bus message, its delivery count; for a dead-letter topic's record,
    /// how often the event had been replayed before (`shoal-replay-count`); for a RabbitMQ
    /// message, the failed deliveries its `x-ms-rabbitmq-requeuecount` says (the count plus
    /// the one that rejected it).
    pub dequeue_count: u32,
    /// Why the broker dead-lettered it (Service Bus; RabbitMQ's `x-death` reason, e.g.
    /// `rejected`), or why the function's last attempt failed (a dead-letter topic's
    /// `shoal-dead-letter-reason`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dead_letter_reason: Option<String>,
    /// The message text as stored (a Service Bus body that is not UTF-8 as `base64:…`); only
    /// for callers allowed to read the app's settings (`Shoal/apps/settings/list/action`),
    /// since bodies often carry what settings protect (the queue's `bodiesHidden` says when
    /// it was left out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct PoisonQuery {
    /// How many of the oldest messages to show, 1 to 32 (default 10).
    pub top: Option<u8>,
}

/// What to replay: up to `count` messages from the front of the poison queue, or exactly the
/// messages named (at most `count` of them). A stream function's dead letters are replayed in
/// order from its replay position: only `count` applies.
#[derive(Debug, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReplayRequest {
    /// 1 to 1000; default 32.
    pub count: Option<u32>,
    /// Only these messages (ids as the read endpoint shows them); queues and Service Bus only.
    pub message_ids: Option<Vec<String>>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplayResult {
    /// Moved back to the trigger queue or topic (each is a new message there, body unchanged).
    pub replayed: u32,
    /// The poison-queue ids of the messages moved (`<partition>-<offset>` on a dead-letter
    /// topic).
    pub message_ids: Vec<String>,
    /// Named in `messageIds` but not found in the poison queue.
    pub not_found: Vec<String>,
}

impl ReplayResult {
    fn new(moved: Vec<String>, wanted: Wanted<'_>) -> ReplayResult {
        ReplayResult {
            replayed: moved.len() as u32,
            message_ids: moved,
            not_found: wanted.not_found(),
        }
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_poison))
        .routes(routes!(replay_poison))
}

/// Read a queue-triggered function's poison queue: its depth and oldest messages (bodies only
/// for callers who may read the app's settings).
#[utoipa::path(get, path = "/v1/tenants/{tenant}/apps/{app}/functions/{function}/poison", tag = TAG_FUNCTIONS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path), ("function" = shoal_domain::names::FunctionName, Path), PoisonQuery),
    responses((status = 200, body = PoisonQueue), (status = 403, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem, description = "the function has no queue, Service Bus, stream or RabbitMQ trigger (or a RabbitMQ trigger without deadLetterQueueName), or its failed messages cannot be reached"),
        (status = 422, body = Problem), (status = 502, body = Problem, description = "the queue service or the brokers failed")))]
pub async fn get_poison(
    State(state): State<AppState>,
    caller: Caller,
    FunctionPath(tenant, app, function): FunctionPath,
    Query(query): Query<PoisonQuery>,
) -> Result<Json<PoisonQueue>, ApiError> {
    let scope = Scope::function(&tenant, &app, &function);
    allow(&state.pool, &caller, actions::FUNCTIONS_POISON_READ, &scope).await?;
    let top = query.top.unwrap_or(10);
    if !(1..=32).contains(&top) {
        return Err(ApiError::validation("top", "must be between 1 and 32"));
    }
    let with_bodies = permits(
        &caller,
        actions::APP_SETTINGS_LIST,
        &Scope::app(&tenant, &app),
    );
    let id = TenantId::new(tenant);
    let view = match Source::open(&state, &id, app.as_str(), function.as_str()).await? {
        Source::Queue(queues) => {
            let (approximate_count, peeked) = bounded(async {
                match queues.poison.approximate_length().await {
                    Err(QueueError::QueueNotFound { .. }) => Ok((0, Vec::new())),
                    Err(e) => Err(e),
                    Ok(count) => Ok((count, queues.poison.peek(top).await?)),
                }
            })
            .await?;
            PoisonQueue {
                trigger_queue: queues.trigger.name().to_owned(),
                poison_queue: queues.poison.name().to_owned(),
                approximate_count,
                messages: peeked
                    .into_iter()
                    .map(|m| PoisonMessage {
                        message_id: m.message_id,
                        inserted_at: m.insertion_time,
                        expires_at: Some(m.expiration_time),
                        dequeue_count: m.dequeue_count,
                        dead_letter_reason: None,
                        body: with_bodies.then_some(m.text),
                    })
                    .collect(),
                bodies_hidden: !with_bodies,
            }
        }
        Source::ServiceBus(dead) => {
            let (approximate_count, messages) = bounded(async {
                let depth = dead.depth().await?;
                Ok::<_, String>((depth, dead.peek(top, with_bodies).await?))
            })
            .await?;
            PoisonQueue {
                trigger_queue: dead.entity.management_path(),
                poison_queue: format!("{}/$DeadLetterQueue", dead.entity.management_path()),
                approximate_count,
                messages,
                bodies_hidden: !with_bodies,
            }
        }
        Source::Stream(dead) => {
            let (approximate_count, messages) = bounded(dead.peek(top, with_bodies)).await?;
            PoisonQueue {
                trigger_queue: dead.source_topic.clone(),
                poison_queue: dead.topic.clone(),
                approximate_count,
                messages,
                bodies_hidden: !with_bodies,
            }
        }
        Source::Kind(kind) => {
            let failed = timed(kind.routes.failed(kind.target(), top, with_bodies)).await?;
            PoisonQueue {
                trigger_queue: failed.source,
                poison_queue: failed.failed,
                approximate_count: failed.count,
                messages: failed
                    .messages
                    .into_iter()
                    .map(|m| PoisonMessage {
                        message_id: m.message_id,
                        inserted_at: m.failed_at,
                        expires_at: None,
                        dequeue_count: m.failures,
                        dead_letter_reason: m.reason,
                        body: m.body,
                    })
                    .collect(),
                bodies_hidden: !with_bodies,
            }
        }
    };
    Ok(Json(view))
}

/// Move poison messages back to the function's trigger queue: each is copied with its body
/// intact (a new message, dequeue count 0), then deleted from the poison queue; if the delete
/// fails the message may be replayed twice, never lost. Audited.
#[utoipa::path(post, path = "/v1/tenants/{tenant}/apps/{app}/functions/{function}/poison/replay", tag = TAG_FUNCTIONS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path), ("function" = shoal_domain::names::FunctionName, Path)),
    request_body = ReplayRequest,
    responses((status = 200, body = ReplayResult), (status = 403, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem, description = "the function has no queue, Service Bus, stream or RabbitMQ trigger (or a RabbitMQ trigger without deadLetterQueueName), or its failed messages cannot be reached"),
        (status = 422, body = Problem), (status = 502, body = Problem, description = "the queue service or the brokers failed")))]
pub async fn replay_poison(
    State(state): State<AppState>,
    caller: Caller,
    FunctionPath(tenant, app, function): FunctionPath,
    JsonBody(body): JsonBody,
) -> Result<Json<ReplayResult>, ApiError> {
    let authorized = authorize(
        &state,
        &caller,
        actions::FUNCTIONS_POISON_REPLAY,
        &Scope::function(&tenant, &app, &function),
    )
    .await?;
    let request = parse_replay(&body)?;
    let limit = request.limit();
    let id = TenantId::new(tenant);
    let result = match Source::open(&state, &id, app.as_str(), function.as_str()).await? {
        Source::Queue(queues) => bounded(replay(&queues, &request, limit)).await?,
        Source::ServiceBus(dead) => bounded(dead.replay(&request, limit)).await?,
        Source::Stream(_) if request.message_ids.is_some() => {
            return Err(ApiError::validation(
                "messageIds",
                dead_letter_topic::NO_SELECTION,
            ));
        }
        Source::Stream(dead) => bounded(dead.replay(&request, limit)).await?,
        Source::Kind(kind) => {
            let ids = request.message_ids.as_deref();
            let replayed = timed(kind.routes.replay(kind.target(), ids, limit)).await?;
            ReplayResult {
                replayed: replayed.moved.len() as u32,
                message_ids: replayed.moved,
                not_found: replayed.not_found,
            }
        }
    };
    // Audited after the move: the entry records what was done, even if only part of it.
    let write = authorized.begin(&id).await?;
    write
        .commit(&format!(
            "/v1/tenants/{id}/apps/{app}/functions/{function}/poison/replay"
        ))
        .await?;
    Ok(Json(result))
}

impl ReplayRequest {
    /// How many messages to move at most: `count`, else as many as named, else 32.
    fn limit(&self) -> u32 {
        self.count
            .unwrap_or(match &self.message_ids {
                Some(ids) => ids.len() as u32,
                None => DEFAULT_REPLAY,
            })
            .min(MAX_REPLAY)
    }
}

fn parse_replay(body: &serde_json::Value) -> Result<ReplayRequest, ApiError> {
    use serde_json::Value;
    let Value::Object(fields) = body else {
        return Err(ApiError::validation(
            "",
            "expected an object {count?, messageIds?}",
        ));
    };
    let mut problems = Vec::new();
    let mut problem = |path: String, message: String| {
        problems.push(shoal_domain::validation::FieldError { path, message })
    };
    for key in fields.keys() {
        if !matches!(key.as_str(), "count" | "messageIds") {
            problem(
                key.clone(),
                "is not a field of a replay request (count, messageIds)".into(),
            );
        }
    }
    let count = match fields.get("count") {
        None | Some(Value::Null) => None,
        Some(value) => match value.as_u64() {
            Some(n) if (1..=u64::from(MAX_REPLAY)).contains(&n) => Some(n as u32),
            _ => {
                problem(
                    "count".into(),
                    format!("must be an integer between 1 and {MAX_REPLAY}"),
                );
                None
            }
        },
    };
    let message_ids = match fields.get("messageIds") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) if !items.is_empty() && items.len() <= MAX_REPLAY as usize => {
            let mut ids = Vec::new();
            for (i, item) in items.iter().enumerate() {
                match item.as_str().map(str::trim) {
                    Some(id) if !id.is_empty() => ids.push(id.to_owned()),
                    _ => problem(
                        format!("messageIds[{i}]"),
                        "must be a non-empty string".into(),
                    ),
                }
            }
            Some(ids)
        }
        Some(_) => {
            problem(
                "messageIds".into(),
                format!("must be an array of 1 to {MAX_REPLAY} message ids"),
            );
            None
        }
    };
    if !problems.is_empty() {
        return Err(ApiError::Validation(problems));
    }
    Ok(ReplayRequest { count, message_ids })
}

/// Receives from the poison queue until `count` messages (or every named one) moved back or
/// the queue has no more visible messages; messages received but not named are made visible
/// again at once.
async fn replay(
    queues: &TriggerQueues,
    request: &ReplayRequest,
    limit: u32,
) -> Result<ReplayResult, QueueError> {
    let mut wanted = Wanted::new(request.message_ids.as_deref());
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
    Ok(ReplayResult::new(moved, wanted))
}

/// Runs a storage call with the request's time bound, mapping its failure to a 502.
async fn bounded<T, E: std::fmt::Display>(
    work: impl Future<Output = Result<T, E>>,
) -> Result<T, ApiError> {
    match tokio::time::timeout(STORAGE_TIMEOUT, work).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(ApiError::Storage(format!("the queue service failed: {e}"))),
        Err(_) => Err(not_answered()),
    }
}

/// Runs a call that answers in the API's own terms (a kind's) with the request's time bound.
async fn timed<T>(work: impl Future<Output = Result<T, ApiError>>) -> Result<T, ApiError> {
    tokio::time::timeout(STORAGE_TIMEOUT, work)
        .await
        .unwrap_or_else(|_| Err(not_answered()))
}

fn not_answered() -> ApiError {
    ApiError::Storage(format!(
        "the queue service did not answer within {} s",
        STORAGE_TIMEOUT.as_secs()
    ))
}
