//! What user-assigned identities, service principals and users share: the view, and
//! reading, listing and deleting them. Each kind's routes live in its own module.

use axum::Json;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::Serialize;
use shoal_domain::names::TenantName;
use shoal_domain::rbac::Scope;
use shoal_store::principals::{self, PrincipalKind, PrincipalRecord};
use shoal_store::{TenantId, begin_tenant};
use utoipa::ToSchema;

use super::authorize;
use crate::access::Caller;
use crate::access::allow;
use crate::error::ApiError;
use crate::state::AppState;

/// A principal as the API shows it. Secrets are never part of it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PrincipalView {
    pub name: String,
    /// `user`, `servicePrincipal`, `systemAssignedIdentity` or `userAssignedIdentity`.
    pub kind: String,
    /// The object id: what role assignments name and tokens carry as `oid`.
    pub principal_id: uuid::Uuid,
    /// The application id: what `/oauth2/token` and the managed-identity endpoint take.
    pub client_id: uuid::Uuid,
    /// `/tenants/{t}/identities/{name}` for a user-assigned identity (`mi_res_id`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_id: Option<String>,
    /// The app a system-assigned identity belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// When the service principal's current secret was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_created_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PrincipalList {
    pub items: Vec<PrincipalView>,
}

impl From<PrincipalRecord> for PrincipalView {
    fn from(r: PrincipalRecord) -> PrincipalView {
        PrincipalView {
            resource_id: (r.kind == PrincipalKind::UserAssignedIdentity)
                .then(|| identity_resource_id(&r.tenant, &r.name)),
            kind: r.kind.as_str().to_string(),
            name: r.name,
            principal_id: r.id,
            client_id: r.client_id,
            app: r.app_name,
            issuer: r.issuer,
            subject: r.subject,
            secret_created_at: r.secret_created_at,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

pub fn identity_resource_id(tenant: &str, name: &str) -> String {
    format!("/tenants/{tenant}/identities/{name}")
}

/// Principal names follow app names' rules.
pub fn name_param(raw: &str) -> Result<String, ApiError> {
    shoal_domain::names::AppName::parse(raw)
        .map(|n| n.as_str().to_string())
        .map_err(|m| ApiError::validation("name", m))
}

/// The collection's path segment for a kind.
pub fn segment(kind: PrincipalKind) -> &'static str {
    match kind {
        PrincipalKind::UserAssignedIdentity | PrincipalKind::SystemAssignedIdentity => "identities",
        PrincipalKind::ServicePrincipal => "servicePrincipals",
        PrincipalKind::User => "users",
    }
}

/// Opens the tenant's transaction, answering 404 for a tenant that does not exist.
pub async fn tenant_tx(
    state: &AppState,
    tenant: &TenantName,
) -> Result<(TenantId, shoal_store::Tx), ApiError> {
    let id = TenantId::new(tenant.clone());
    let mut tx = begin_tenant(&state.pool, &id).await?;
    if !shoal_store::tenants::exists(&mut tx, tenant.as_str()).await? {
        return Err(ApiError::NotFound);
    }
    Ok((id, tx))
}

pub async fn list(
    state: &AppState,
    caller: &Caller,
    tenant: &TenantName,
    kind: PrincipalKind,
    read_action: &str,
) -> Result<Json<PrincipalList>, ApiError> {
    allow(&state.pool, caller, read_action, &Scope::tenant(tenant)).await?;
    let (id, mut tx) = tenant_tx(state, tenant).await?;
    let items = principals::list(&mut tx, &id, kind).await?;
    shoal_store::commit(tx).await?;
    Ok(Json(PrincipalList {
        items: items.into_iter().map(PrincipalView::from).collect(),
    }))
}

pub async fn get(
    state: &AppState,
    caller: &Caller,
    tenant: &TenantName,
    kind: PrincipalKind,
    name: &str,
    read_action: &str,
) -> Result<Json<PrincipalView>, ApiError> {
    allow(&state.pool, caller, read_action, &Scope::tenant(tenant)).await?;
    let name = name_param(name)?;
    let (id, mut tx) = tenant_tx(state, tenant).await?;
    let record = principals::get(&mut tx, &id, kind, &name)
        .await?
        .ok_or(ApiError::NotFound)?;
    shoal_store::commit(tx).await?;
    Ok(Json(record.into()))
}

/// Deletes the principal and its role assignments; its tokens stop working at once.
pub async fn delete(
    state: &AppState,
    caller: &Caller,
    tenant: &TenantName,
    kind: PrincipalKind,
    name: &str,
    delete_action: &'static str,
) -> Result<StatusCode, ApiError> {
    let authorized = authorize(state, caller, delete_action, &Scope::tenant(tenant)).await?;
    let name = name_param(name)?;
    let (id, mut write) = authorized.begin_existing(tenant).await?;
    if !principals::delete(&mut write.tx, &id, kind, &name).await? {
        return Err(ApiError::NotFound);
    }
    write
        .commit(&format!("/v1/tenants/{tenant}/{}/{name}", segment(kind)))
        .await?;
    state.access.invalidate();
    Ok(StatusCode::NO_CONTENT)
}
