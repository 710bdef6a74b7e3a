//! `/v1/tenants/{tenant}/apps`: function apps with their settings, host configuration,
//! scale limits and identity.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use shoal_domain::apps::{AppSpec, AppState as RunState, Handler, Identity, Scale, WrittenApp};
use shoal_domain::host_config::HostConfig;
use shoal_domain::merge_patch::merge_patch;
use shoal_domain::names::TenantName;
use shoal_domain::secret_routes;
use shoal_domain::settings::{MASK, settings_to_store};
use shoal_domain::webhook_limits::WebhookLimits;
use shoal_store::apps::{self, AppRecord};
use shoal_store::{Precondition, TenantId, Written, begin_tenant};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::app_status::{self, AppStatus};
use super::{Authorized, TAG_APPS, authorize, conditional_read, resource_headers};
use super::{app_identity, setting_access};
use crate::access::{Caller, allow};
use crate::error::{ApiError, Problem};
use crate::extract::{
    AppPath, Conditional, ConditionalHeaders, JsonBody, ListQuery, Query, TenantPath,
};
use crate::state::AppState;
use shoal_domain::rbac::{Scope, actions};
use shoal_store::principals::{self, PrincipalKind, PrincipalRecord};
use std::collections::HashMap;

/// A function app as the API returns it: what was written plus computed fields (defaults,
/// `scale.mode`, identity ids, etag, timestamps). Secret setting values are masked.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct App {
    pub name: String,
    pub tenant: String,
    pub handler: Handler,
    /// Values are shown only to callers allowed `Shoal/apps/settings/list/action` (as Azure
    /// shows a Reader no app-setting values); others read every value as `********`. Even
    /// then secret values read as `********`; `settings/list` returns the raw values.
    pub app_settings: BTreeMap<String, String>,
    pub host_config: HostConfig,
    pub scale: Scale,
    pub identity: Identity,
    #[schema(value_type = String, example = "Running")]
    pub state: RunState,
    /// Limits of the webhook ingress for the app's HTTP-triggered functions.
    pub webhooks: WebhookLimits,
    pub etag: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// An app as the apps list shows it: an [`App`] without `hostConfig`. Written or not, the
/// host config reads back with every documented default (tens of kilobytes of a 1,000-app
/// page that a list never shows); `GET …/apps/{app}` returns it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppListItem {
    pub name: String,
    pub tenant: String,
    pub handler: Handler,
    /// Masked as in [`App`]'s `appSettings`.
    pub app_settings: BTreeMap<String, String>,
    pub scale: Scale,
    pub identity: Identity,
    #[schema(value_type = String, example = "Running")]
    pub state: RunState,
    pub webhooks: WebhookLimits,
    pub etag: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Instances now and desired, and a health summary: only with `expand=status`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<AppStatus>,
}

impl AppListItem {
    fn of(app: App, status: Option<AppStatus>) -> AppListItem {
        AppListItem {
            name: app.name,
            tenant: app.tenant,
            handler: app.handler,
            app_settings: app.app_settings,
            scale: app.scale,
            identity: app.identity,
            state: app.state,
            webhooks: app.webhooks,
            etag: app.etag,
            created_at: app.created_at,
            updated_at: app.updated_at,
            status,
        }
    }
}

/// The apps list's query: a page, and what to add to each app.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct AppListQuery {
    /// Items per page, 1–1000 (default 100).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 1000)]
    pub limit: Option<String>,
    /// Token from the previous page's `continuationToken`.
    pub continuation_token: Option<String>,
    /// `status`: each app also carries `status` (instances now and desired, and a health
    /// summary from its checks and live listeners), computed for the whole page at once.
    #[param(example = "status")]
    pub expand: Option<String>,
}

/// What a client sends to create or replace an app (every field but `handler` optional).
#[derive(Debug, ToSchema)]
#[schema(as = AppWrite)]
#[allow(dead_code)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AppWriteDoc {
    handler: HandlerWrite,
    /// App settings (strings). Secret values may be sent back as `********` to keep them.
    app_settings: Option<BTreeMap<String, String>>,
    /// The `host.json` shape; omitted settings take their documented defaults.
    host_config: Option<HostConfig>,
    scale: Option<ScaleWrite>,
    identity: Option<IdentityWrite>,
    #[schema(value_type = Option<String>, example = "Running")]
    state: Option<RunState>,
    webhooks: Option<WebhooksWrite>,
}

/// The webhook ingress's limits; omitted ones take their defaults.
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct WebhooksWrite {
    /// Largest request body in bytes (default 4194304).
    #[schema(minimum = 1, maximum = 104857600)]
    max_request_body_bytes: Option<u64>,
    /// Sustained requests per second (default 100).
    #[schema(minimum = 1, maximum = 100000)]
    requests_per_second: Option<u32>,
    /// Requests accepted at once above the rate (default twice `requestsPerSecond`).
    #[schema(minimum = 1)]
    burst: Option<u32>,
}

#[derive(Debug, ToSchema)]
#[allow(dead_code)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct HandlerWrite {
    #[schema(example = "https://handler.example.com/api")]
    url: String,
    #[schema(minimum = 1, maximum = 3600)]
    timeout_seconds: Option<u32>,
    /// The handler's own health check; absent: none (see docs/triggers.md, "Unhealthy").
    health: Option<HealthCheckWrite>,
}

/// `handler.health` as written: `path` is required, the rest take their defaults.
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct HealthCheckWrite {
    /// Path on the handler's host (starting with `/`, a query allowed), called with GET.
    #[schema(example = "/healthz")]
    path: String,
    /// Seconds between checks (default 5).
    #[schema(minimum = 1, maximum = 300)]
    interval_seconds: Option<u32>,
    /// Seconds to wait for an answer (default 1; at most the interval).
    #[schema(minimum = 1, maximum = 60)]
    timeout_seconds: Option<u32>,
    /// Failed checks in a row that make the handler unhealthy (default 3).
    #[schema(minimum = 1, maximum = 100)]
    failure_threshold: Option<u32>,
    /// Passed checks in a row that make an unhealthy handler healthy again (default 1).
    #[schema(minimum = 1, maximum = 100)]
    success_threshold: Option<u32>,
}

#[derive(Debug, ToSchema)]
#[allow(dead_code)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ScaleWrite {
    #[schema(minimum = 1, maximum = 1000)]
    limit: Option<u32>,
    minimum_instances: Option<u32>,
    /// Scale on the messages no worker is processing instead of the storage service's count,
    /// which includes invisible (in-flight) messages (default false).
    visible_only: Option<bool>,
}

#[derive(Debug, ToSchema)]
#[allow(dead_code)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct IdentityWrite {
    #[schema(example = "SystemAssigned")]
    r#type: String,
    user_assigned_identities: Option<Vec<String>>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppList {
    pub items: Vec<AppListItem>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continuation_token: Option<String>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_apps))
        .routes(routes!(get_app, put_app, patch_app, delete_app))
}

/// The document a merge patch applies to: the stored spec plus raw settings.
pub(crate) fn written_document(record: &AppRecord) -> Value {
    record.written_document()
}

/// Re-validates what is stored and renders it; stored data always passed validation when
/// written, so a failure here is a bug (or rules tightened without a migration).
pub(crate) fn parse_stored(record: &AppRecord) -> Result<WrittenApp, ApiError> {
    AppSpec::parse(&record.name, &written_document(record)).map_err(|e| {
        ApiError::Internal(anyhow::anyhow!(
            "stored app {} no longer validates: {e}",
            record.name
        ))
    })
}

fn view(
    tenant: &TenantName,
    record: AppRecord,
    system_identity: Option<&PrincipalRecord>,
    show_values: bool,
) -> Result<App, ApiError> {
    let spec = parse_stored(&record)?.spec;
    let app_settings = record
        .settings
        .iter()
        .map(|s| {
            (
                s.name.clone(),
                if s.secret || !show_values {
                    MASK.to_string()
                } else {
                    s.value.clone()
                },
            )
        })
        .collect();
    Ok(App {
        tenant: tenant.to_string(),
        handler: spec.handler,
        app_settings,
        host_config: spec.host_config,
        scale: spec.scale,
        identity: app_identity::with_ids(spec.identity, system_identity),
        state: spec.state,
        webhooks: spec.webhooks,
        etag: record.etag.to_string(),
        created_at: record.created_at,
        updated_at: record.updated_at,
        name: record.name,
    })
}

/// List a tenant's apps, ordered by name. Items are apps without `hostConfig` (read an app for
/// it); `expand=status` adds each app's instances and health.
#[utoipa::path(get, path = "/v1/tenants/{tenant}/apps", tag = TAG_APPS,
    params(("tenant" = shoal_domain::names::TenantName, Path), AppListQuery),
    responses((status = 200, body = AppList), (status = 404, body = Problem), (status = 422, body = Problem)))]
pub async fn list_apps(
    State(state): State<AppState>,
    caller: Caller,
    TenantPath(tenant): TenantPath,
    Query(query): Query<AppListQuery>,
) -> Result<Json<AppList>, ApiError> {
    allow(
        &state.pool,
        &caller,
        actions::APPS_READ,
        &Scope::tenant(&tenant),
    )
    .await?;
    let expand_status = match query.expand.as_deref() {
        None => false,
        Some("status") => true,
        Some(_) => return Err(ApiError::validation("expand", "must be `status`")),
    };
    let page = ListQuery {
        limit: query.limit,
        continuation_token: query.continuation_token,
    }
    .page()?;
    let id = TenantId::new(tenant.clone());
    let mut tx = begin_tenant(&state.pool, &id).await?;
    if !shoal_store::tenants::exists(&mut tx, tenant.as_str()).await? {
        return Err(ApiError::NotFound);
    }
    let page = apps::list(&mut tx, &id, &state.cipher, &page).await?;
    let identities: HashMap<String, PrincipalRecord> =
        principals::list(&mut tx, &id, PrincipalKind::SystemAssignedIdentity)
            .await?
            .into_iter()
            .filter_map(|p| Some((p.app_name.clone()?, p)))
            .collect();
    let mut statuses = if expand_status {
        app_status::of_page(&mut tx, &id, &page.items).await?
    } else {
        HashMap::new()
    };
    shoal_store::commit(tx).await?;
    let items = page
        .items
        .into_iter()
        .map(|r| {
            let identity = identities.get(&r.name);
            let status = statuses.remove(&r.name);
            let show_values = setting_access::shows_values(&caller, &tenant, &r.name);
            view(&tenant, r, identity, show_values).map(|app| AppListItem::of(app, status))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Json(AppList {
        items,
        continuation_token: page.continuation_token,
    }))
}

/// Read an app.
#[utoipa::path(get, path = "/v1/tenants/{tenant}/apps/{app}", tag = TAG_APPS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path), ConditionalHeaders),
    responses((status = 200, body = App, headers(("ETag" = String))),
        (status = 304, description = "`If-None-Match` names the current `ETag`", headers(("ETag" = String))), (status = 412, body = Problem), (status = 401, body = Problem), (status = 404, body = Problem)))]
pub async fn get_app(
    State(state): State<AppState>,
    caller: Caller,
    AppPath(tenant, app): AppPath,
    Conditional(precondition): Conditional,
) -> Result<Response, ApiError> {
    allow(
        &state.pool,
        &caller,
        actions::APPS_READ,
        &Scope::app(&tenant, &app),
    )
    .await?;
    let id = TenantId::new(tenant.clone());
    let record = apps::read(&state.pool, &id, &state.cipher, app.as_str()).await?;
    let etag = record.etag;
    if let Some(not_modified) = conditional_read(&precondition, &etag)? {
        return Ok(not_modified);
    }
    // Only apps with a system-assigned identity pay for the second read.
    let system_identity =
        if app_identity::has_system_identity(&parse_stored(&record)?.spec.identity) {
            let mut tx = begin_tenant(&state.pool, &id).await?;
            let principal = principals::of_app(&mut tx, &id, app.as_str()).await?;
            shoal_store::commit(tx).await?;
            principal
        } else {
            None
        };
    Ok((
        resource_headers(&etag, None),
        Json(view(
            &tenant,
            record,
            system_identity.as_ref(),
            setting_access::shows_values(&caller, &tenant, app.as_str()),
        )?),
    )
        .into_response())
}

/// Create or replace an app (201 on create, 200 on replace). `If-Match` makes it conditional.
#[utoipa::path(put, path = "/v1/tenants/{tenant}/apps/{app}", tag = TAG_APPS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path), ConditionalHeaders), request_body = AppWriteDoc,
    responses((status = 200, body = App), (status = 201, body = App), (status = 404, body = Problem, description = "no such tenant"),
        (status = 409, body = Problem, description = "tenant quota"), (status = 412, body = Problem), (status = 422, body = Problem)))]
pub async fn put_app(
    State(state): State<AppState>,
    caller: Caller,
    AppPath(tenant, app): AppPath,
    Conditional(precondition): Conditional,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let authorized = authorize(
        &state,
        &caller,
        actions::APPS_WRITE,
        &Scope::app(&tenant, &app),
    )
    .await?;
    let written = AppSpec::parse(app.as_str(), &body)?;
    super::egress::check_app(&state, &tenant, &written.spec).await?;
    write(
        &authorized,
        &tenant,
        app.as_str(),
        written,
        precondition,
        None,
    )
    .await
}

/// Update an app with a JSON merge patch (RFC 7396); `null` removes a field or setting.
#[utoipa::path(patch, path = "/v1/tenants/{tenant}/apps/{app}", tag = TAG_APPS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path), ConditionalHeaders),
    request_body(content = AppWriteDoc, content_type = "application/merge-patch+json"),
    responses((status = 200, body = App), (status = 404, body = Problem), (status = 412, body = Problem), (status = 422, body = Problem)))]
pub async fn patch_app(
    State(state): State<AppState>,
    caller: Caller,
    AppPath(tenant, app): AppPath,
    Conditional(precondition): Conditional,
    JsonBody(patch): JsonBody,
) -> Result<Response, ApiError> {
    let authorized = authorize(
        &state,
        &caller,
        actions::APPS_WRITE,
        &Scope::app(&tenant, &app),
    )
    .await?;
    if !patch.is_object() {
        return Err(ApiError::validation(
            "",
            "a merge patch must be a JSON object",
        ));
    }
    let id = TenantId::new(tenant.clone());
    let mut tx = begin_tenant(&state.pool, &id).await?;
    let current = apps::get(&mut tx, &id, &state.cipher, app.as_str()).await?;
    drop(tx);
    precondition.check(Some(current.etag))?;
    let mut doc = written_document(&current);
    merge_patch(&mut doc, &patch);
    let written = AppSpec::parse(app.as_str(), &doc)?;
    super::egress::check_app(&state, &tenant, &written.spec).await?;
    // Conditional on what we read: a concurrent write in between answers 412.
    write(
        &authorized,
        &tenant,
        app.as_str(),
        written,
        Precondition::matches(current.etag),
        Some(current),
    )
    .await
}

async fn write(
    authorized: &Authorized<'_>,
    tenant: &TenantName,
    app: &str,
    written: WrittenApp,
    precondition: Precondition,
    current: Option<AppRecord>,
) -> Result<Response, ApiError> {
    let state = authorized.state();
    let id = TenantId::new(tenant.clone());
    let mut write = authorized.begin(&id).await?;
    let tx = &mut write.tx;
    let routes_written = written
        .spec
        .app_settings
        .keys()
        .any(|name| secret_routes::may_route(name));
    let needs_current = routes_written || written.spec.app_settings.values().any(|v| v == MASK);
    let current = match current {
        Some(current) => Some(current),
        None if needs_current => match apps::get(tx, &id, &state.cipher, app).await {
            Ok(record) => Some(record),
            Err(shoal_store::StoreError::NotFound) => None,
            Err(e) => return Err(e.into()),
        },
        None => None,
    };
    let current_settings = current.as_ref().map_or(&[][..], |c| &c.settings[..]);
    let settings = settings_to_store(&written.spec.app_settings, current_settings)?;
    let creating = current.is_none() && !apps::exists(tx, &id, app).await?;
    super::quotas::check_app(state, tx, &id, &written.spec, settings.len(), creating).await?;
    if routes_written {
        setting_access::check_secret_routes(authorized, tenant, app, current_settings, &settings)?;
        super::egress::check_authorities(state, &mut *tx, tenant, &written.spec.app_settings)
            .await?;
    }
    let (record, outcome) = apps::put(
        tx,
        &id,
        &state.cipher,
        app,
        &written.stored,
        &settings,
        precondition,
    )
    .await?;
    let system_identity = app_identity::sync(tx, &id, app, &written.spec.identity).await?;
    let location = format!("/v1/tenants/{tenant}/apps/{app}");
    write.commit(&location).await?;
    let status = if outcome == Written::Created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let location = (outcome == Written::Created).then_some(location);
    let headers = resource_headers(&record.etag, location.as_deref());
    Ok((
        status,
        headers,
        Json(view(
            tenant,
            record,
            system_identity.as_ref(),
            setting_access::shows_values(authorized.caller(), tenant, app),
        )?),
    )
        .into_response())
}

/// Delete an app with its settings and functions.
#[utoipa::path(delete, path = "/v1/tenants/{tenant}/apps/{app}", tag = TAG_APPS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path), ConditionalHeaders),
    responses((status = 204), (status = 404, body = Problem), (status = 412, body = Problem)))]
pub async fn delete_app(
    State(state): State<AppState>,
    caller: Caller,
    AppPath(tenant, app): AppPath,
    Conditional(precondition): Conditional,
) -> Result<StatusCode, ApiError> {
    let authorized = authorize(
        &state,
        &caller,
        actions::APPS_DELETE,
        &Scope::app(&tenant, &app),
    )
    .await?;
    let id = TenantId::new(tenant.clone());
    let mut write = authorized.begin(&id).await?;
    apps::delete(&mut write.tx, &id, app.as_str(), precondition).await?;
    write
        .commit(&format!("/v1/tenants/{tenant}/apps/{app}"))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
