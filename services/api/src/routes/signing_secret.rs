//! `POST …/apps/{app}/signingSecret/list` and `…/signingSecret/regenerate`: the secret
//! workers sign deliveries to the app's handler with (Standard Webhooks `whsec_…`), so the
//! handler can verify that a request came from Shoal. POSTs so they are never cached; only
//! the app's Owners may read or replace it, and every call is audited.

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use shoal_domain::names::{AppName, TenantName};
use shoal_store::{TenantId, signing_secrets};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{TAG_APPS, authorize};
use crate::access::Caller;
use crate::error::{ApiError, Problem};
use crate::extract::AppPath;
use crate::state::AppState;
use shoal_domain::rbac::{Scope, actions};

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SigningSecret {
    /// `whsec_` + base64 of the key, the form Standard Webhooks libraries take.
    #[schema(example = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")]
    pub secret: String,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_signing_secret))
        .routes(routes!(regenerate_signing_secret))
}

/// Read the app's webhook signing secret (Owner).
#[utoipa::path(post, path = "/v1/tenants/{tenant}/apps/{app}/signingSecret/list", tag = TAG_APPS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path)),
    responses((status = 200, body = SigningSecret), (status = 403, body = Problem), (status = 404, body = Problem)))]
pub async fn list_signing_secret(
    State(state): State<AppState>,
    caller: Caller,
    AppPath(tenant, app): AppPath,
) -> Result<Json<SigningSecret>, ApiError> {
    respond(state, caller, tenant, app, false).await
}

/// Replace the app's webhook signing secret with a new random one and return it (Owner).
/// Workers sign with the new secret within a few seconds.
#[utoipa::path(post, path = "/v1/tenants/{tenant}/apps/{app}/signingSecret/regenerate", tag = TAG_APPS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path)),
    responses((status = 200, body = SigningSecret), (status = 403, body = Problem), (status = 404, body = Problem)))]
pub async fn regenerate_signing_secret(
    State(state): State<AppState>,
    caller: Caller,
    AppPath(tenant, app): AppPath,
) -> Result<Json<SigningSecret>, ApiError> {
    respond(state, caller, tenant, app, true).await
}

async fn respond(
    state: AppState,
    caller: Caller,
    tenant: TenantName,
    app: AppName,
    regenerate: bool,
) -> Result<Json<SigningSecret>, ApiError> {
    let action = if regenerate {
        actions::APP_SIGNING_SECRET_REGENERATE
    } else {
        actions::APP_SIGNING_SECRET_READ
    };
    let authorized = authorize(&state, &caller, action, &Scope::app(&tenant, &app)).await?;
    let id = TenantId::new(tenant);
    let mut write = authorized.begin(&id).await?;
    let secret = if regenerate {
        signing_secrets::regenerate(&mut write.tx, &id, &state.cipher, app.as_str()).await?
    } else {
        signing_secrets::get_or_create(&mut write.tx, &id, &state.cipher, app.as_str()).await?
    };
    write
        .commit(&format!("/v1/tenants/{id}/apps/{app}/signingSecret"))
        .await?;
    if regenerate {
        // The old identity header stops working here at once (other replicas: within seconds).
        state.msi_headers.forget(id.as_str(), app.as_str());
    }
    Ok(Json(SigningSecret {
        secret: secret.expose(),
    }))
}
