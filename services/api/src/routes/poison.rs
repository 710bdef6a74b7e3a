//! `…/functions/{function}/poison` and `…/poison/replay`: where a function's messages go after
//! their last failed delivery — a queue trigger's poison queue (`<queue>-poison`, after
//! `maxDequeueCount`), a Service Bus queue trigger's dead-letter queue (after the entity's
//! `MaxDeliveryCount`), a stream trigger's dead-letter topic (`deadLetter.topic`), a RabbitMQ
//! trigger's dead-letter queue (`deadLetterQueueName`), each reached by its kind
//! (`crate::routes::kinds`) — its depth and oldest messages, and moving messages back to the
//! trigger's queue or topic with their body intact and a fresh dequeue or delivery count once
//! the handler works again.
//!
//! The API reaches the queues with the app's connection as this process can sign in (like the
//! Service Bus probe of diagnostics): connection strings everywhere, identity-based
//! connections where the API's host may sign in as the app's identity.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use shoal_store::TenantId;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{TAG_FUNCTIONS, authorize};
use crate::access::{Caller, allow, permits};
use crate::error::{ApiError, Problem};
use crate::extract::{FunctionPath, JsonBody, Query};
use crate::routes::kinds::{self, KindRoutes, Target};
use crate::routes::trigger_source::FunctionContext;
use crate::state::AppState;
use shoal_domain::rbac::{Scope, actions};

/// Most messages one replay moves, and the default.
const MAX_REPLAY: u32 = 1000;
const DEFAULT_REPLAY: u32 = 32;

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
    let context = FunctionContext::load(&state, &id, app.as_str(), function.as_str()).await?;
    let (routes, target) = failed_messages_of(&context)?;
    let failed = routes.failed(target, top, with_bodies).await?;
    let view = PoisonQueue {
        trigger_queue: failed.source,
        poison_queue: failed.failed,
        approximate_count: failed.count,
        messages: failed
            .messages
            .into_iter()
            .map(|m| PoisonMessage {
                message_id: m.message_id,
                inserted_at: m.failed_at,
                expires_at: m.expires_at,
                dequeue_count: m.failures,
                dead_letter_reason: m.reason,
                body: m.body,
            })
            .collect(),
        bodies_hidden: !with_bodies,
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
    let context = FunctionContext::load(&state, &id, app.as_str(), function.as_str()).await?;
    let (routes, target) = failed_messages_of(&context)?;
    let ids = request.message_ids.as_deref();
    let replayed = routes.replay(target, ids, limit).await?;
    let result = ReplayResult {
        replayed: replayed.moved.len() as u32,
        message_ids: replayed.moved,
        not_found: replayed.not_found,
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

/// The kind of the function's trigger and the trigger, for reading or replaying what failed;
/// 409 for a trigger with nowhere its failed messages go that the API reaches.
fn failed_messages_of(
    context: &FunctionContext,
) -> Result<(&'static dyn KindRoutes, Target<'_>), ApiError> {
    let function = &context.function;
    let Some(target) = Target::of(context)? else {
        return Err(ApiError::Conflict(format!(
            "function {function} has no queueTrigger, serviceBusTrigger, kafkaTrigger, eventHubTrigger or rabbitMQTrigger, so it has no poison queue, dead-letter queue or dead-letter topic"
        )));
    };
    let kind = target.binding.type_name();
    let routes = kinds::find(kind).ok_or_else(|| {
        ApiError::Conflict(format!(
            "function {function}'s {kind} has no poison or dead-letter endpoint yet"
        ))
    })?;
    Ok((routes, target))
}
