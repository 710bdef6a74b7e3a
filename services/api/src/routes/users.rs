//! `/v1/tenants/{tenant}/users`: people who sign in with a trusted external OIDC issuer,
//! registered by issuer and subject so that role assignments can name them.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use shoal_domain::rbac::{Scope, actions};
use shoal_store::principals::{self, NewPrincipal, PrincipalKind};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::principals::{self as shared, PrincipalList, PrincipalView, name_param};
use super::{TAG_IDENTITY, authorize};
use crate::access::Caller;
use crate::error::{ApiError, Problem};
use crate::extract::{JsonBody, TenantPath, TenantScoped};
use crate::state::AppState;

const KIND: PrincipalKind = PrincipalKind::User;

/// What a client sends to register a user.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UserWrite {
    /// The token issuer (`iss`), exactly as the provider writes it.
    pub issuer: String,
    /// The user's subject at that issuer (`oid` for Entra ID, otherwise `sub`).
    pub subject: String,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_users))
        .routes(routes!(get_user, put_user, delete_user))
}

/// List the tenant's registered users.
#[utoipa::path(get, path = "/v1/tenants/{tenant}/users", tag = TAG_IDENTITY,
    params(("tenant" = shoal_domain::names::TenantName, Path)),
    responses((status = 200, body = PrincipalList), (status = 403, body = Problem), (status = 404, body = Problem)))]
pub async fn list_users(
    State(state): State<AppState>,
    caller: Caller,
    TenantPath(tenant): TenantPath,
) -> Result<Json<PrincipalList>, ApiError> {
    shared::list(&state, &caller, &tenant, KIND, actions::USERS_READ).await
}

/// Read a registered user.
#[utoipa::path(get, path = "/v1/tenants/{tenant}/users/{name}", tag = TAG_IDENTITY,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("name" = String, Path)),
    responses((status = 200, body = PrincipalView), (status = 403, body = Problem), (status = 404, body = Problem)))]
pub async fn get_user(
    State(state): State<AppState>,
    caller: Caller,
    TenantScoped(tenant, name): TenantScoped,
) -> Result<Json<PrincipalView>, ApiError> {
    shared::get(&state, &caller, &tenant, KIND, &name, actions::USERS_READ).await
}

/// Register a user (201) or change its issuer and subject (200).
#[utoipa::path(put, path = "/v1/tenants/{tenant}/users/{name}", tag = TAG_IDENTITY,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("name" = String, Path)), request_body = UserWrite,
    responses((status = 200, body = PrincipalView), (status = 201, body = PrincipalView), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 409, body = Problem), (status = 422, body = Problem)))]
pub async fn put_user(
    State(state): State<AppState>,
    caller: Caller,
    TenantScoped(tenant, name): TenantScoped,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let authorized = authorize(
        &state,
        &caller,
        actions::USERS_WRITE,
        &Scope::tenant(&tenant),
    )
    .await?;
    let name = name_param(&name)?;
    let write = parse(&body)?;
    let (id, mut audited) = authorized.begin_existing(&tenant).await?;
    let (mut record, created) = principals::ensure(
        &mut audited.tx,
        &id,
        &NewPrincipal {
            kind: KIND,
            name: &name,
            app_name: None,
            issuer: Some(&write.issuer),
            subject: Some(&write.subject),
        },
    )
    .await?;
    if !created
        && (record.issuer.as_deref() != Some(&write.issuer)
            || record.subject.as_deref() != Some(&write.subject))
    {
        record = principals::set_external(
            &mut audited.tx,
            &id,
            record.id,
            &write.issuer,
            &write.subject,
        )
        .await?;
    }
    audited
        .commit(&format!("/v1/tenants/{tenant}/users/{name}"))
        .await?;
    state.access.invalidate();
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(PrincipalView::from(record))).into_response())
}

fn parse(body: &serde_json::Value) -> Result<UserWrite, ApiError> {
    let write: UserWrite = serde_json::from_value(body.clone())
        .map_err(|e| ApiError::validation("", e.to_string()))?;
    let mut errors = Vec::new();
    for (path, value) in [("issuer", &write.issuer), ("subject", &write.subject)] {
        if value.trim().is_empty() || value.len() > 1024 || value.chars().any(char::is_control) {
            errors.push(shoal_domain::validation::FieldError {
                path: path.into(),
                message: "must be 1–1024 printable characters".into(),
            });
        }
    }
    if errors.is_empty() {
        Ok(write)
    } else {
        Err(ApiError::Validation(errors))
    }
}

/// Remove a user with its role assignments.
#[utoipa::path(delete, path = "/v1/tenants/{tenant}/users/{name}", tag = TAG_IDENTITY,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("name" = String, Path)),
    responses((status = 204), (status = 403, body = Problem), (status = 404, body = Problem)))]
pub async fn delete_user(
    State(state): State<AppState>,
    caller: Caller,
    TenantScoped(tenant, name): TenantScoped,
) -> Result<StatusCode, ApiError> {
    shared::delete(&state, &caller, &tenant, KIND, &name, actions::USERS_DELETE).await
}
