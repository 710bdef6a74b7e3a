//! `/v1/tenants/{tenant}/servicePrincipals`: non-human callers with a client id and secret,
//! which they trade for a token at `POST /oauth2/token`. The secret is shown once, in the
//! response that creates it, and stored only as a hash.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use chrono::{DateTime, Utc};
use serde::Serialize;
use shoal_domain::rbac::{Scope, actions};
use shoal_store::crypto::random_bytes;
use shoal_store::principals::{self, NewPrincipal, PrincipalKind};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::principals::{self as shared, PrincipalList, PrincipalView, name_param};
use super::{TAG_IDENTITY, authorize};
use crate::access::Caller;
use crate::error::{ApiError, Problem};
use crate::extract::{TenantPath, TenantScoped};
use crate::state::AppState;

const KIND: PrincipalKind = PrincipalKind::ServicePrincipal;

/// A service principal with its new secret: the only time the secret is shown.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServicePrincipalCredential {
    #[serde(flatten)]
    pub principal: PrincipalView,
    /// Keep it now: it cannot be read again, only replaced.
    pub client_secret: String,
    pub secret_created_at: DateTime<Utc>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_service_principals))
        .routes(routes!(
            get_service_principal,
            put_service_principal,
            delete_service_principal
        ))
        .routes(routes!(new_secret))
}

/// List the tenant's service principals (without secrets).
#[utoipa::path(get, path = "/v1/tenants/{tenant}/servicePrincipals", tag = TAG_IDENTITY,
    params(("tenant" = shoal_domain::names::TenantName, Path)),
    responses((status = 200, body = PrincipalList), (status = 403, body = Problem), (status = 404, body = Problem)))]
pub async fn list_service_principals(
    State(state): State<AppState>,
    caller: Caller,
    TenantPath(tenant): TenantPath,
) -> Result<Json<PrincipalList>, ApiError> {
    shared::list(
        &state,
        &caller,
        &tenant,
        KIND,
        actions::SERVICE_PRINCIPALS_READ,
    )
    .await
}

/// Read a service principal (without its secret).
#[utoipa::path(get, path = "/v1/tenants/{tenant}/servicePrincipals/{name}", tag = TAG_IDENTITY,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("name" = String, Path)),
    responses((status = 200, body = PrincipalView), (status = 403, body = Problem), (status = 404, body = Problem)))]
pub async fn get_service_principal(
    State(state): State<AppState>,
    caller: Caller,
    TenantScoped(tenant, name): TenantScoped,
) -> Result<Json<PrincipalView>, ApiError> {
    shared::get(
        &state,
        &caller,
        &tenant,
        KIND,
        &name,
        actions::SERVICE_PRINCIPALS_READ,
    )
    .await
}

/// Create a service principal with a secret (201, the secret in the body), or read an existing
/// one back without its secret (200).
#[utoipa::path(put, path = "/v1/tenants/{tenant}/servicePrincipals/{name}", tag = TAG_IDENTITY,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("name" = String, Path)),
    responses((status = 200, body = PrincipalView), (status = 201, body = ServicePrincipalCredential),
        (status = 403, body = Problem), (status = 404, body = Problem)))]
pub async fn put_service_principal(
    State(state): State<AppState>,
    caller: Caller,
    TenantScoped(tenant, name): TenantScoped,
) -> Result<Response, ApiError> {
    let authorized = authorize(
        &state,
        &caller,
        actions::SERVICE_PRINCIPALS_WRITE,
        &Scope::tenant(&tenant),
    )
    .await?;
    let name = name_param(&name)?;
    let (id, mut write) = authorized.begin_existing(&tenant).await?;
    let (record, created) =
        principals::ensure(&mut write.tx, &id, &NewPrincipal::named(KIND, &name)).await?;
    if !created {
        write.commit_unchanged().await?;
        return Ok((StatusCode::OK, Json(PrincipalView::from(record))).into_response());
    }
    let secret = new_client_secret()?;
    let record = principals::set_secret(&mut write.tx, &id, record.id, &secret).await?;
    write
        .commit(&format!("/v1/tenants/{tenant}/servicePrincipals/{name}"))
        .await?;
    Ok((StatusCode::CREATED, Json(credential(record, secret))).into_response())
}

/// Replace the service principal's secret: the old one stops working at once.
#[utoipa::path(post, path = "/v1/tenants/{tenant}/servicePrincipals/{name}/secrets", tag = TAG_IDENTITY,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("name" = String, Path)),
    responses((status = 200, body = ServicePrincipalCredential), (status = 403, body = Problem), (status = 404, body = Problem)))]
pub async fn new_secret(
    State(state): State<AppState>,
    caller: Caller,
    TenantScoped(tenant, name): TenantScoped,
) -> Result<Json<ServicePrincipalCredential>, ApiError> {
    let action = actions::SERVICE_PRINCIPAL_SECRETS_ACTION;
    let authorized = authorize(&state, &caller, action, &Scope::tenant(&tenant)).await?;
    let name = name_param(&name)?;
    let (id, mut write) = authorized.begin_existing(&tenant).await?;
    let record = principals::get(&mut write.tx, &id, KIND, &name)
        .await?
        .ok_or(ApiError::NotFound)?;
    let secret = new_client_secret()?;
    let record = principals::set_secret(&mut write.tx, &id, record.id, &secret).await?;
    write
        .commit(&format!(
            "/v1/tenants/{tenant}/servicePrincipals/{name}/secrets"
        ))
        .await?;
    Ok(Json(credential(record, secret)))
}

/// Delete a service principal with its role assignments; its tokens stop working.
#[utoipa::path(delete, path = "/v1/tenants/{tenant}/servicePrincipals/{name}", tag = TAG_IDENTITY,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("name" = String, Path)),
    responses((status = 204), (status = 403, body = Problem), (status = 404, body = Problem)))]
pub async fn delete_service_principal(
    State(state): State<AppState>,
    caller: Caller,
    TenantScoped(tenant, name): TenantScoped,
) -> Result<StatusCode, ApiError> {
    shared::delete(
        &state,
        &caller,
        &tenant,
        KIND,
        &name,
        actions::SERVICE_PRINCIPALS_DELETE,
    )
    .await
}

/// 256 random bits, URL-safe, with a recognisable prefix so secret scanners can find leaks.
fn new_client_secret() -> Result<String, ApiError> {
    let bytes = random_bytes(32)?;
    Ok(format!(
        "shoal_sp_{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    ))
}

fn credential(
    record: shoal_store::principals::PrincipalRecord,
    secret: String,
) -> ServicePrincipalCredential {
    let secret_created_at = record.secret_created_at.unwrap_or(record.updated_at);
    let mut principal = PrincipalView::from(record);
    principal.secret_created_at = None;
    ServicePrincipalCredential {
        principal,
        client_secret: secret,
        secret_created_at,
    }
}
