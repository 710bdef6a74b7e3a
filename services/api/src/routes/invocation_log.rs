//! `GET …/functions/{function}/invocationLog`: the invocation explorer's search — a
//! function's invocations, successes too, newest first by start, each with its attempts
//! grouped (RetryCount, DequeueCount/DeliveryCount, worker, duration, status, error, the
//! handler's `Logs`, the trace id and span id of the `traceparent` it received) and a preview
//! of its payload. Filters by status, message id, invocation id, trace id and time;
//! keyset-paged with `continuationToken`.
//!
//! The answer states the retention policy (`retention`), so a reader knows that an invocation
//! missing here may have been pruned rather than never made. Clients follow new invocations by
//! asking for the first page again (the dashboard polls it): workers write the log in batches
//! about once a second, so a push channel would deliver no sooner than a poll of a few seconds,
//! and a plain GET passes through every proxy, cache rule and RBAC check as every other read.
//!
//! Readable by anyone who may read the function; another tenant's function is a 404.

mod filters;

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::Serialize;
use shoal_domain::invocation_log::{MAX_LOG_BYTES, MAX_PREVIEW_BYTES};
use shoal_domain::rbac::{Scope, actions};
use shoal_store::invocation_log::{self, KEPT_ATTEMPTS, KEPT_INVOCATIONS, Status};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{TAG_FUNCTIONS, readable_function};
use crate::access::{Caller, permits};
use crate::error::{ApiError, Problem};
use crate::extract::{FunctionPath, Query};
use crate::state::AppState;

pub use filters::InvocationLogQuery;

/// A page of a function's invocation log.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvocationLog {
    /// Newest first by when the invocation started.
    pub items: Vec<LoggedInvocation>,
    /// Pass as `continuationToken` for the next (older) page; absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continuation_token: Option<String>,
    pub retention: Retention,
}

/// What the log keeps: capped, never sampled.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Retention {
    /// A function keeps its newest invocations by start, up to this many.
    pub kept_invocations: i64,
    /// An invocation keeps its newest attempts, up to this many (`attemptCount` counts all).
    pub kept_attempts: i64,
    /// Bytes of the trigger's data kept as `payload`.
    pub max_payload_bytes: usize,
    /// Bytes of the handler's `Logs` kept per attempt.
    pub max_log_bytes: usize,
}

/// How an attempt ended; an invocation's is its latest attempt's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum AttemptStatus {
    Succeeded,
    Failed,
}

impl From<Status> for AttemptStatus {
    fn from(status: Status) -> Self {
        match status {
            Status::Succeeded => AttemptStatus::Succeeded,
            Status::Failed => AttemptStatus::Failed,
        }
    }
}

/// One delivery of a message (or event, occurrence or HTTP request) to the handler, with its
/// attempts.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoggedInvocation {
    /// The delivery's `webhook-id`, the same for each of its attempts.
    pub delivery_key: String,
    /// The source's message id, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    pub started_at: DateTime<Utc>,
    pub last_attempt_at: DateTime<Utc>,
    /// The latest attempt's.
    pub status: AttemptStatus,
    /// Every attempt made, also those no longer kept.
    pub attempt_count: i32,
    /// The trigger's data as the handler got it (text, or JSON as text), cut short. Only for
    /// callers who may list the app's settings, as poison messages' bodies: a message often
    /// carries what settings protect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payload: Option<String>,
    /// True when a payload was kept but the caller may not see it (`Shoal/apps/settings/list`
    /// at the app is needed).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub payload_hidden: bool,
    /// True when `payload` is not all of it.
    pub payload_truncated: bool,
    /// The kept attempts, oldest first.
    pub attempts: Vec<LoggedAttempt>,
}

/// One handler call.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoggedAttempt {
    /// This attempt's `X-Shoal-Invocation-Id`.
    pub invocation_id: uuid::Uuid,
    pub at: DateTime<Utc>,
    /// Retries before this one under the function's retry policy (Azure's RetryCount).
    pub retry_count: i32,
    /// The source's DequeueCount (Storage Queue) or DeliveryCount (Service Bus).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivery_count: Option<i64>,
    pub worker: String,
    pub duration_ms: i64,
    pub status: AttemptStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The handler's `Logs`, when it answered.
    pub logs: Vec<String>,
    /// The W3C trace id of the `traceparent` the handler received (32 lowercase hex digits):
    /// the delivery's trace, the same for every attempt at one message. Absent for attempts
    /// recorded before Shoal kept it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "4bf92f3577b34da6a3ce929d0e0e4736")]
    pub trace_id: Option<String>,
    /// The attempt's own span id (16 lowercase hex digits), the parent of the handler's spans.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "00f067aa0ba902b7")]
    pub span_id: Option<String>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(search_invocation_log))
}

/// Search a function's invocation log: every invocation with its attempts grouped, newest
/// first; poll the first page to follow new ones.
#[utoipa::path(get, path = "/v1/tenants/{tenant}/apps/{app}/functions/{function}/invocationLog", tag = TAG_FUNCTIONS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path),
        ("function" = shoal_domain::names::FunctionName, Path), InvocationLogQuery),
    responses(
        (status = 200, body = InvocationLog, example = json!({
            "items": [{"deliveryKey": "6b1f0c1e-3c55-4f0e-9d0a-1f6f3f0c2b11", "messageId": "6b1f0c1e-3c55-4f0e-9d0a-1f6f3f0c2b11",
                "startedAt": "2026-11-24T10:00:41Z", "lastAttemptAt": "2026-11-24T10:00:44Z", "status": "succeeded",
                "attemptCount": 2, "payload": "{\"order\":42}", "payloadTruncated": false,
                "attempts": [
                    {"invocationId": "0193a5c0-7f1e-7c2a-9a41-2f5d8e1c0b7a", "at": "2026-11-24T10:00:41Z", "retryCount": 0,
                     "deliveryCount": 1, "worker": "worker-a", "durationMs": 212, "status": "failed",
                     "error": "handler answered 500", "logs": ["charging order 42", "card declined"],
                     "traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "spanId": "00f067aa0ba902b7"},
                    {"invocationId": "0193a5c0-8a2b-7c2a-9a41-2f5d8e1c0b7b", "at": "2026-11-24T10:00:44Z", "retryCount": 1,
                     "deliveryCount": 1, "worker": "worker-a", "durationMs": 35, "status": "succeeded", "logs": ["charged"],
                     "traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "spanId": "b7ad6b7169203331"}]}],
            "retention": {"keptInvocations": 1000, "keptAttempts": 20, "maxPayloadBytes": 4096, "maxLogBytes": 8192}
        })),
        (status = 404, body = Problem, description = "No such tenant, app or function, or one the caller may not know exists"),
        (status = 422, body = Problem, description = "A filter is not valid (`errors[].path` names it), or a path parameter is not a valid name")))]
pub async fn search_invocation_log(
    State(state): State<AppState>,
    caller: Caller,
    FunctionPath(tenant, app, function): FunctionPath,
    Query(query): Query<InvocationLogQuery>,
) -> Result<Json<InvocationLog>, ApiError> {
    let with_payloads = permits(
        &caller,
        actions::APP_SETTINGS_LIST,
        &Scope::app(&tenant, &app),
    );
    let (id, mut tx) = readable_function(&state, &caller, tenant, &app, &function).await?;
    let search = query.search()?;
    let page =
        invocation_log::search(&mut tx, &id, app.as_str(), function.as_str(), &search).await?;
    shoal_store::commit(tx).await?;
    Ok(Json(InvocationLog {
        items: page
            .items
            .into_iter()
            .map(|i| logged(i, with_payloads))
            .collect(),
        continuation_token: page.next.map(|c| c.encode()),
        retention: Retention {
            kept_invocations: KEPT_INVOCATIONS,
            kept_attempts: KEPT_ATTEMPTS,
            max_payload_bytes: MAX_PREVIEW_BYTES,
            max_log_bytes: MAX_LOG_BYTES,
        },
    }))
}

fn logged(i: invocation_log::Invocation, with_payload: bool) -> LoggedInvocation {
    let kept = i.payload_preview.is_some();
    LoggedInvocation {
        delivery_key: i.delivery_key,
        message_id: i.message_id,
        started_at: i.started_at,
        last_attempt_at: i.last_at,
        status: i.status.into(),
        attempt_count: i.attempt_count,
        payload: i.payload_preview.filter(|_| with_payload),
        payload_hidden: kept && !with_payload,
        payload_truncated: i.payload_truncated,
        attempts: i
            .attempts
            .into_iter()
            .map(|a| LoggedAttempt {
                invocation_id: a.invocation_id,
                at: a.at,
                retry_count: a.retry_count,
                delivery_count: a.delivery_count,
                worker: a.worker,
                duration_ms: a.duration_ms,
                status: a.status.into(),
                error: a.error,
                logs: a.logs,
                span_id: a.trace.as_ref().map(|t| t.span_id.clone()),
                trace_id: a.trace.map(|t| t.trace_id),
            })
            .collect(),
    }
}
