//! `GET /v1/tenants/{tenant}/auditLog`: every write and every denied request in a tenant,
//! newest first.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use shoal_domain::rbac::{Scope, actions};
use shoal_store::audit;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::TAG_ACCESS;
use super::principals::tenant_tx;
use crate::access::Caller;
use crate::access::allow;
use crate::error::{ApiError, Problem};
use crate::extract::{Query, TenantPath};
use crate::state::AppState;

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntryView {
    pub id: i64,
    pub at: DateTime<Utc>,
    /// The caller's subject or principal id.
    pub principal: String,
    /// The operation, e.g. `Shoal/apps/write`.
    pub action: String,
    pub resource: String,
    /// `succeeded` or `denied`.
    pub outcome: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditLog {
    pub items: Vec<AuditEntryView>,
    /// Pass as `before` for the next (older) page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_before: Option<i64>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Entries per page, 1–1000 (default 100).
    #[param(value_type = Option<u32>)]
    pub limit: Option<String>,
    /// Only entries older than this entry id.
    #[param(value_type = Option<i64>)]
    pub before: Option<String>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(read_audit_log))
}

/// Read the tenant's audit log.
#[utoipa::path(get, path = "/v1/tenants/{tenant}/auditLog", tag = TAG_ACCESS,
    params(("tenant" = shoal_domain::names::TenantName, Path), AuditQuery),
    responses((status = 200, body = AuditLog), (status = 403, body = Problem), (status = 404, body = Problem), (status = 422, body = Problem)))]
pub async fn read_audit_log(
    State(state): State<AppState>,
    caller: Caller,
    TenantPath(tenant): TenantPath,
    Query(query): Query<AuditQuery>,
) -> Result<Json<AuditLog>, ApiError> {
    allow(
        &state.pool,
        &caller,
        actions::AUDIT_LOG_READ,
        &Scope::tenant(&tenant),
    )
    .await?;
    let limit = match query.limit.as_deref() {
        None => 100,
        Some(text) => text
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=1000).contains(n))
            .ok_or_else(|| {
                ApiError::validation("limit", "must be an integer between 1 and 1000")
            })?,
    };
    let before = query
        .before
        .as_deref()
        .map(|t| {
            t.parse::<i64>()
                .map_err(|_| ApiError::validation("before", "must be an entry id"))
        })
        .transpose()?;
    let (_, mut tx) = tenant_tx(&state, &tenant).await?;
    let entries = audit::list(&mut tx, before, limit).await?;
    shoal_store::commit(tx).await?;
    let next_before = (entries.len() == limit as usize)
        .then(|| entries.last().map(|e| e.id))
        .flatten();
    Ok(Json(AuditLog {
        items: entries
            .into_iter()
            .map(|e| AuditEntryView {
                id: e.id,
                at: e.at,
                principal: e.principal,
                action: e.action,
                resource: e.resource,
                outcome: e.outcome,
                request_id: e.request_id,
            })
            .collect(),
        next_before,
    }))
}
