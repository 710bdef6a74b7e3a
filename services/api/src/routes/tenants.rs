//! `/v1/tenants`: platform-scoped management of tenants and their quotas.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::Serialize;
use shoal_domain::merge_patch::merge_patch;
use shoal_domain::quotas::Quotas;
use shoal_domain::tenants::{TenantLimits, TenantSpec};
use shoal_store::tenants::{self, TenantRecord, TenantWrite};
use shoal_store::{Precondition, Written, begin_platform};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{Authorized, TAG_TENANTS, authorize, conditional_read, resource_headers};
use crate::access::Caller;
use crate::access::allow;
use crate::error::{ApiError, Problem};
use crate::extract::{Conditional, ConditionalHeaders, JsonBody, ListQuery, Query, TenantPath};
use crate::state::AppState;
use shoal_domain::rbac::{Scope, actions};

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Tenant {
    pub name: String,
    pub display_name: String,
    /// What a platform administrator set; an absent limit is the platform's default.
    pub limits: TenantLimits,
    /// What applies: each limit the tenant's own or else the platform's default
    /// (`--tenant-defaults`).
    pub effective_limits: Quotas,
    /// Identity-based connections of the tenant's apps act as the worker host's own identity
    /// instead of the app's (single-tenant installs; only platform administrators write
    /// tenants). Default false.
    pub allow_host_identity: bool,
    /// Destinations beyond public addresses the tenant's handlers and connections may reach,
    /// added to the platform's `--egress-allow` (docs/operating/egress.md). Empty by default;
    /// only platform administrators write tenants.
    #[schema(example = json!(["10.20.0.0/16", "*.handlers.svc.cluster.local:80"]))]
    pub egress_allow: Vec<String>,
    pub etag: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// What a client sends to create or replace a tenant.
#[derive(Debug, ToSchema)]
#[schema(as = TenantWrite)]
#[allow(dead_code)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TenantWriteDoc {
    /// Defaults to the tenant's name.
    display_name: Option<String>,
    limits: Option<TenantLimits>,
    /// Default false: connections act as the apps' own identities, never the host's.
    allow_host_identity: Option<bool>,
    /// CIDRs, addresses or host names, each optionally with `:port` (at most 64). Default
    /// empty: public addresses only.
    egress_allow: Option<Vec<String>>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TenantList {
    pub items: Vec<Tenant>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continuation_token: Option<String>,
}

impl Tenant {
    fn new(r: TenantRecord, defaults: &Quotas) -> Tenant {
        Tenant {
            effective_limits: r.limits.effective(defaults),
            limits: r.limits,
            allow_host_identity: r.allow_host_identity,
            egress_allow: r.egress_allow,
            etag: r.etag.to_string(),
            name: r.name,
            display_name: r.display_name,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_tenants))
        .routes(routes!(get_tenant, put_tenant, patch_tenant, delete_tenant))
}

/// List tenants (platform administrators only).
#[utoipa::path(get, path = "/v1/tenants", tag = TAG_TENANTS, params(ListQuery),
    responses((status = 200, body = TenantList), (status = 401, body = Problem), (status = 403, body = Problem), (status = 422, body = Problem)))]
pub async fn list_tenants(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<ListQuery>,
) -> Result<Json<TenantList>, ApiError> {
    allow(&state.pool, &caller, actions::TENANTS_READ, &Scope::root()).await?;
    let page = query.page()?;
    let mut tx = begin_platform(&state.pool).await?;
    let page = tenants::list(&mut tx, &page).await?;
    shoal_store::commit(tx).await?;
    Ok(Json(TenantList {
        items: page
            .items
            .into_iter()
            .map(|t| Tenant::new(t, &state.tenant_defaults))
            .collect(),
        continuation_token: page.continuation_token,
    }))
}

/// Read a tenant (platform administrators, or the tenant's own principals).
#[utoipa::path(get, path = "/v1/tenants/{tenant}", tag = TAG_TENANTS, params(("tenant" = shoal_domain::names::TenantName, Path), ConditionalHeaders),
    responses((status = 200, body = Tenant, headers(("ETag" = String))),
        (status = 304, description = "`If-None-Match` names the current `ETag`", headers(("ETag" = String))), (status = 412, body = Problem), (status = 404, body = Problem)))]
pub async fn get_tenant(
    State(state): State<AppState>,
    caller: Caller,
    TenantPath(tenant): TenantPath,
    Conditional(precondition): Conditional,
) -> Result<Response, ApiError> {
    allow(
        &state.pool,
        &caller,
        actions::TENANTS_READ,
        &Scope::tenant(&tenant),
    )
    .await?;
    let mut tx = begin_platform(&state.pool).await?;
    let record = tenants::get(&mut tx, tenant.as_str()).await?;
    shoal_store::commit(tx).await?;
    if let Some(not_modified) = conditional_read(&precondition, &record.etag)? {
        return Ok(not_modified);
    }
    Ok((
        resource_headers(&record.etag, None),
        Json(Tenant::new(record, &state.tenant_defaults)),
    )
        .into_response())
}

/// Create or replace a tenant (201 on create, 200 on replace).
#[utoipa::path(put, path = "/v1/tenants/{tenant}", tag = TAG_TENANTS, params(("tenant" = shoal_domain::names::TenantName, Path), ConditionalHeaders),
    request_body = TenantWriteDoc,
    responses((status = 200, body = Tenant), (status = 201, body = Tenant), (status = 412, body = Problem), (status = 422, body = Problem)))]
pub async fn put_tenant(
    State(state): State<AppState>,
    caller: Caller,
    TenantPath(tenant): TenantPath,
    Conditional(precondition): Conditional,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let authorized = authorize(&state, &caller, actions::TENANTS_WRITE, &Scope::root()).await?;
    let spec = TenantSpec::parse(tenant.as_str(), &body)?;
    write(&authorized, tenant.as_str(), &spec, precondition).await
}

/// Update a tenant with a JSON merge patch (RFC 7396).
#[utoipa::path(patch, path = "/v1/tenants/{tenant}", tag = TAG_TENANTS, params(("tenant" = shoal_domain::names::TenantName, Path), ConditionalHeaders),
    request_body(content = TenantWriteDoc, content_type = "application/merge-patch+json"),
    responses((status = 200, body = Tenant), (status = 404, body = Problem), (status = 412, body = Problem), (status = 422, body = Problem)))]
pub async fn patch_tenant(
    State(state): State<AppState>,
    caller: Caller,
    TenantPath(tenant): TenantPath,
    Conditional(precondition): Conditional,
    JsonBody(patch): JsonBody,
) -> Result<Response, ApiError> {
    let authorized = authorize(&state, &caller, actions::TENANTS_WRITE, &Scope::root()).await?;
    let mut tx = begin_platform(&state.pool).await?;
    let current = tenants::get(&mut tx, tenant.as_str()).await?;
    drop(tx);
    precondition.check(Some(current.etag))?;
    let mut written = serde_json::json!({
        "displayName": current.display_name,
        "limits": current.limits,
        "allowHostIdentity": current.allow_host_identity,
        "egressAllow": current.egress_allow,
    });
    merge_patch(&mut written, &patch);
    let spec = TenantSpec::parse(tenant.as_str(), &written)?;
    // The write is conditional on what we read, so a concurrent change answers 412.
    write(
        &authorized,
        tenant.as_str(),
        &spec,
        Precondition::matches(current.etag),
    )
    .await
}

async fn write(
    authorized: &Authorized<'_>,
    name: &str,
    spec: &TenantSpec,
    precondition: Precondition,
) -> Result<Response, ApiError> {
    let write = TenantWrite {
        display_name: spec.display_name.clone(),
        limits: spec.limits,
        allow_host_identity: spec.allow_host_identity,
        egress_allow: spec
            .egress_allow
            .entries()
            .iter()
            .map(ToString::to_string)
            .collect(),
    };
    let mut audited = authorized.begin_platform().await?;
    let (record, written) = tenants::put(&mut audited.tx, name, &write, precondition).await?;
    let location = format!("/v1/tenants/{name}");
    audited.commit(&location).await?;
    let status = if written == Written::Created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let location = (written == Written::Created).then_some(location);
    Ok((
        status,
        resource_headers(&record.etag, location.as_deref()),
        Json(Tenant::new(record, &authorized.state().tenant_defaults)),
    )
        .into_response())
}

/// Delete a tenant and everything it owns.
#[utoipa::path(delete, path = "/v1/tenants/{tenant}", tag = TAG_TENANTS, params(("tenant" = shoal_domain::names::TenantName, Path), ConditionalHeaders),
    responses((status = 204), (status = 404, body = Problem), (status = 412, body = Problem)))]
pub async fn delete_tenant(
    State(state): State<AppState>,
    caller: Caller,
    TenantPath(tenant): TenantPath,
    Conditional(precondition): Conditional,
) -> Result<StatusCode, ApiError> {
    let authorized = authorize(&state, &caller, actions::TENANTS_DELETE, &Scope::root()).await?;
    let mut write = authorized.begin_platform().await?;
    tenants::delete(&mut write.tx, tenant.as_str(), precondition).await?;
    write.commit(&format!("/v1/tenants/{tenant}")).await?;
    Ok(StatusCode::NO_CONTENT)
}
