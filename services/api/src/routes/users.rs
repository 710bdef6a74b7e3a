//! `/v1/tenants/{tenant}/users`: people who sign in with a trusted external OIDC issuer,
//! registered by issuer and subject so that role assignments can name them.
//!
//! Each tenant registers its own users: the same (issuer, subject) may be a user of several
//! tenants, each registration with its own name and assignments, and no tenant learns of
//! another's. Within one tenant a subject is registered once (409 for a second name), so a
//! token acts there as one user. Only the issuers Shoal trusts (`--external-issuer`) are
//! accepted: a user of any other could never sign in.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use shoal_domain::rbac::{Scope, actions};
use shoal_domain::validation::{Problems, body_from_json};
use shoal_store::principals::{self, NewPrincipal, PrincipalKind};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::principals::{self as shared, PrincipalList, PrincipalView, name_param};
use super::{TAG_IDENTITY, authorize};
use crate::access::Caller;
use crate::error::{ApiError, Problem};
use crate::external_issuers::ExternalIssuers;
use crate::extract::{JsonBody, TenantPath, TenantScoped};
use crate::state::AppState;

const KIND: PrincipalKind = PrincipalKind::User;

/// What a client sends to register a user.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UserWrite {
    /// The token issuer (`iss`), exactly as the provider writes it: one of the issuers Shoal
    /// is configured to trust.
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
///
/// The issuer must be one Shoal trusts (422 at `issuer` otherwise); another user of the tenant
/// with the same issuer and subject is a 409. Other tenants' users play no part.
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
    let write = parse(&body, &state.external_issuers)?;
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

fn parse(body: &serde_json::Value, trusted: &ExternalIssuers) -> Result<UserWrite, ApiError> {
    let write: UserWrite = body_from_json(body)?;
    let printable =
        |v: &str| !v.trim().is_empty() && v.len() <= 1024 && !v.chars().any(char::is_control);
    let mut problems = Problems::new();
    if !printable(&write.issuer) {
        problems.push("issuer", "must be 1–1024 printable characters");
    } else if !trusted.trusts(&write.issuer) {
        problems.push("issuer", untrusted(trusted));
    }
    if !printable(&write.subject) {
        problems.push("subject", "must be 1–1024 printable characters");
    }
    problems.finish()?;
    Ok(write)
}

/// Names the issuers a user may be registered with: they are the operator's configuration,
/// the same for every tenant, and a tenant needs them to register anyone.
fn untrusted(trusted: &ExternalIssuers) -> String {
    let issuers = trusted.trusted();
    if issuers.is_empty() {
        "Shoal trusts no external issuer (an operator configures them with --external-issuer), \
         so no user can be registered"
            .into()
    } else {
        format!(
            "must be an issuer Shoal trusts, exactly as written: {}",
            issuers.join(", ")
        )
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
