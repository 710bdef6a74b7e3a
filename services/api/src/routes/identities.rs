//! `/v1/tenants/{tenant}/identities`: user-assigned managed identities. An app names the ones
//! it uses in `identity.userAssignedIdentities` and gets their tokens from its managed-identity
//! endpoint. (A system-assigned identity is created and deleted with its app.)

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use shoal_domain::rbac::{Scope, actions};
use shoal_store::principals::{self, NewPrincipal, PrincipalKind};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::principals::{self as shared, PrincipalList, PrincipalView, name_param};
use super::{TAG_IDENTITY, authorize};
use crate::access::Caller;
use crate::error::{ApiError, Problem};
use crate::extract::{TenantPath, TenantScoped};
use crate::state::AppState;

const KIND: PrincipalKind = PrincipalKind::UserAssignedIdentity;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_identities))
        .routes(routes!(get_identity, put_identity, delete_identity))
}

/// List the tenant's user-assigned identities.
#[utoipa::path(get, path = "/v1/tenants/{tenant}/identities", tag = TAG_IDENTITY,
    params(("tenant" = shoal_domain::names::TenantName, Path)),
    responses((status = 200, body = PrincipalList), (status = 403, body = Problem), (status = 404, body = Problem)))]
pub async fn list_identities(
    State(state): State<AppState>,
    caller: Caller,
    TenantPath(tenant): TenantPath,
) -> Result<Json<PrincipalList>, ApiError> {
    shared::list(&state, &caller, &tenant, KIND, actions::IDENTITIES_READ).await
}

/// Read a user-assigned identity.
#[utoipa::path(get, path = "/v1/tenants/{tenant}/identities/{name}", tag = TAG_IDENTITY,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("name" = String, Path)),
    responses((status = 200, body = PrincipalView), (status = 403, body = Problem), (status = 404, body = Problem)))]
pub async fn get_identity(
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
        actions::IDENTITIES_READ,
    )
    .await
}

/// Create a user-assigned identity (201), or read it back unchanged if it exists (200).
#[utoipa::path(put, path = "/v1/tenants/{tenant}/identities/{name}", tag = TAG_IDENTITY,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("name" = String, Path)),
    responses((status = 200, body = PrincipalView), (status = 201, body = PrincipalView), (status = 403, body = Problem), (status = 404, body = Problem)))]
pub async fn put_identity(
    State(state): State<AppState>,
    caller: Caller,
    TenantScoped(tenant, name): TenantScoped,
) -> Result<Response, ApiError> {
    let authorized = authorize(
        &state,
        &caller,
        actions::IDENTITIES_WRITE,
        &Scope::tenant(&tenant),
    )
    .await?;
    let name = name_param(&name)?;
    let (id, mut write) = authorized.begin_existing(&tenant).await?;
    let (record, created) =
        principals::ensure(&mut write.tx, &id, &NewPrincipal::named(KIND, &name)).await?;
    if created {
        let resource = format!("/v1/tenants/{tenant}/identities/{name}");
        write.commit(&resource).await?;
    } else {
        write.commit_unchanged().await?;
    }
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(PrincipalView::from(record))).into_response())
}

/// Delete a user-assigned identity with its role assignments; its tokens stop working.
#[utoipa::path(delete, path = "/v1/tenants/{tenant}/identities/{name}", tag = TAG_IDENTITY,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("name" = String, Path)),
    responses((status = 204), (status = 403, body = Problem), (status = 404, body = Problem)))]
pub async fn delete_identity(
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
        actions::IDENTITIES_DELETE,
    )
    .await
}
