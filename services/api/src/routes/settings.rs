//! `POST …/apps/{app}/settings/list`: the raw values of an app's settings, secrets included.
//! A POST (as in Azure) so that it is never cached or prefetched, and it needs more than the
//! Reader role. Every call is audited.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use shoal_store::{TenantId, apps};
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
pub struct SettingsList {
    pub app_settings: BTreeMap<String, String>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_settings))
}

/// List an app's settings with secret values in the clear.
#[utoipa::path(post, path = "/v1/tenants/{tenant}/apps/{app}/settings/list", tag = TAG_APPS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path)),
    responses((status = 200, body = SettingsList), (status = 403, body = Problem), (status = 404, body = Problem)))]
pub async fn list_settings(
    State(state): State<AppState>,
    caller: Caller,
    AppPath(tenant, app): AppPath,
) -> Result<Json<SettingsList>, ApiError> {
    let authorized = authorize(
        &state,
        &caller,
        actions::APP_SETTINGS_LIST,
        &Scope::app(&tenant, &app),
    )
    .await?;
    let id = TenantId::new(tenant);
    let mut write = authorized.begin(&id).await?;
    let record = apps::get(&mut write.tx, &id, &state.cipher, app.as_str()).await?;
    write
        .commit(&format!("/v1/tenants/{id}/apps/{app}/settings"))
        .await?;
    Ok(Json(SettingsList {
        app_settings: record
            .settings
            .into_iter()
            .map(|s| (s.name, s.value))
            .collect(),
    }))
}
