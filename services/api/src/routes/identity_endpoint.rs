//! `POST …/apps/{app}/identityEndpoint/list`: what the app's code sets as `IDENTITY_ENDPOINT`
//! and `IDENTITY_HEADER` so the Azure SDK's `ManagedIdentityCredential` gets Shoal tokens for the
//! app's managed identities (see `msi`). The header lets whoever holds it act as the app's
//! identities, so only those allowed the identityEndpoint action (Owner; not Contributor) may
//! read it, every read is audited, and regenerating the app's signing secret replaces it.

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use shoal_domain::rbac::{Scope, actions};
use shoal_store::{TenantId, apps, signing_secrets};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{TAG_APPS, authorize};
use crate::access::Caller;
use crate::error::{ApiError, Problem};
use crate::extract::AppPath;
use crate::state::AppState;

/// The environment an app's code needs for managed identity, named as App Service names it.
#[derive(Debug, Serialize, ToSchema)]
pub struct IdentityEndpoint {
    /// The app's token endpoint (App Service managed-identity protocol, 2019-08-01).
    #[serde(rename = "IDENTITY_ENDPOINT")]
    #[schema(example = "https://shoal.example.com/msi/contoso/orders/token")]
    pub identity_endpoint: String,
    /// The secret `X-IDENTITY-HEADER` value; it changes when the app's signing secret is
    /// regenerated.
    #[serde(rename = "IDENTITY_HEADER")]
    pub identity_header: String,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_identity_endpoint))
}

/// Read the app's managed-identity endpoint and its secret header (Owner; audited).
#[utoipa::path(post, path = "/v1/tenants/{tenant}/apps/{app}/identityEndpoint/list", tag = TAG_APPS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path)),
    responses((status = 200, body = IdentityEndpoint), (status = 403, body = Problem), (status = 404, body = Problem)))]
pub async fn list_identity_endpoint(
    State(state): State<AppState>,
    caller: Caller,
    AppPath(tenant, app): AppPath,
) -> Result<Json<IdentityEndpoint>, ApiError> {
    let authorized = authorize(
        &state,
        &caller,
        actions::APP_IDENTITY_ENDPOINT_LIST,
        &Scope::app(&tenant, &app),
    )
    .await?;
    let id = TenantId::new(tenant.clone());
    let mut write = authorized.begin(&id).await?;
    apps::get(&mut write.tx, &id, &state.cipher, app.as_str()).await?;
    let secret =
        signing_secrets::get_or_create(&mut write.tx, &id, &state.cipher, app.as_str()).await?;
    write
        .commit(&format!("/v1/tenants/{id}/apps/{app}/identityEndpoint"))
        .await?;
    Ok(Json(IdentityEndpoint {
        identity_endpoint: state
            .issuance
            .url(&super::msi::endpoint_path(&tenant, &app)),
        identity_header: secret.identity_header(),
    }))
}
