//! `GET /webhooks/{tenant}/{app}/{function}/invocations/{id}`: an async invocation's status
//! and, once it succeeded, the response the caller would have got (kept 24 hours after it
//! completed). The same permission as invoking, and admitted by the app's webhook rate like an
//! invocation.

use std::time::Instant;

use axum::Json;
use axum::extract::{Path, State};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use shoal_domain::async_invocation::InvocationStatus;
use shoal_domain::names::{AppName, FunctionName, TenantName};
use shoal_store::webhook_invocations;
use shoal_store::{TenantId, begin_tenant};
use utoipa::ToSchema;
use uuid::Uuid;

use super::TAG_WEBHOOKS;
use super::caller::WebhookCaller;
use crate::error::{ApiError, Problem};
use crate::extract::InvokedFunction;
use crate::state::AppState;
use crate::webhooks::errors::WebhookError;

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookInvocation {
    pub id: Uuid,
    pub status: InvocationStatus,
    /// Deliveries started so far (at most 5).
    pub attempts: u32,
    pub created_at: DateTime<Utc>,
    /// When it succeeded or finally failed; null while queued or running.
    pub completed_at: Option<DateTime<Utc>>,
    /// The function's response once it succeeded, else null.
    pub response: Option<FunctionResponse>,
    /// Why the latest attempt failed (kept while a retry is queued), else null.
    pub error: Option<String>,
}

/// The function's HTTP response, as a synchronous call would have returned it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FunctionResponse {
    pub status_code: u16,
    /// Header values by name; an array where the handler gave a header more than once.
    #[schema(value_type = Object)]
    pub headers: Value,
    /// A string, any other JSON value the handler returned, or null for no body.
    #[schema(value_type = Object)]
    pub body: Value,
}

/// Read an async webhook invocation: `queued`, `running`, `succeeded` (with the function's
/// response) or `failed` (after 5 attempts, with the last error).
#[utoipa::path(get, path = "/webhooks/{tenant}/{app}/{function}/invocations/{id}", tag = TAG_WEBHOOKS,
    params(("tenant" = TenantName, Path), ("app" = AppName, Path), ("function" = FunctionName, Path),
        ("id" = Uuid, Path, description = "The id `?mode=async` answered with")),
    responses(
        (status = 200, body = WebhookInvocation),
        (status = 404, body = Problem),
        (status = 429, description = "Reads count against the app's `webhooks.requestsPerSecond` like invocations; or the caller (or its tenant) has used up its budget of refused webhook requests; retry after `Retry-After` seconds", body = Problem),
    ))]
pub async fn invocation_status(
    State(state): State<AppState>,
    caller: WebhookCaller,
    InvokedFunction(tenant, app, function): InvokedFunction,
    Path((.., id)): Path<(String, String, String, String)>,
) -> Result<Json<WebhookInvocation>, WebhookError> {
    // A read costs a transaction: admitted by the app's bucket like an invocation (the app
    // still exists: its invocations are deleted with it).
    let http_app = caller.app(&state, &tenant, &app, &function).await?;
    http_app
        .admit(Instant::now())
        .map_err(|wait| WebhookError::RateLimited {
            retry_after_seconds: wait.seconds(),
        })?;
    let id = Uuid::parse_str(&id).map_err(|_| ApiError::NotFound)?;
    let tenant = TenantId::new(tenant);
    let mut tx = begin_tenant(&state.pool, &tenant).await?;
    let record = webhook_invocations::get(
        &mut tx,
        &tenant,
        &state.cipher,
        app.as_str(),
        function.as_str(),
        id,
    )
    .await?;
    shoal_store::commit(tx).await?;
    let response = record.response.map(|stored| FunctionResponse {
        status_code: stored["statusCode"]
            .as_u64()
            .and_then(|s| u16::try_from(s).ok())
            .unwrap_or_default(),
        headers: stored["headers"].clone(),
        body: stored["body"].clone(),
    });
    Ok(Json(WebhookInvocation {
        id: record.id,
        status: record.status,
        attempts: record.attempts,
        created_at: record.created_at,
        completed_at: record.completed_at,
        response,
        error: record.error,
    }))
}
