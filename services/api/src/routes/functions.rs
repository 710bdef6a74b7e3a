//! `/v1/tenants/{tenant}/apps/{app}/functions`: an app's functions and their bindings.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use shoal_domain::bindings::Binding;
use shoal_domain::circuit_breaker::CircuitBreaker;
use shoal_domain::functions::{FunctionSpec, WrittenFunction};
use shoal_domain::host_config::RetryPolicy;
use shoal_domain::merge_patch::merge_patch;
use shoal_domain::stream_trigger::DeadLetterTarget;
use shoal_store::functions::{self, FunctionRecord};
use shoal_store::{Precondition, TenantId, Written, begin_tenant};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{Authorized, TAG_FUNCTIONS, authorize, conditional_read, resource_headers};
use crate::access::Caller;
use crate::access::allow;
use crate::error::{ApiError, Problem};
use crate::extract::{
    AppPath, Conditional, ConditionalHeaders, FunctionPath, JsonBody, ListQuery, Query,
};
use crate::state::AppState;
use shoal_domain::rbac::{Scope, actions};

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Function {
    pub name: String,
    pub app: String,
    /// The `function.json` bindings array; exactly one trigger.
    pub bindings: Vec<Binding>,
    /// The trigger binding's type (computed).
    pub trigger_type: String,
    pub disabled: bool,
    /// Not loaded at all (no listener, webhook 404), as Azure treats `excluded`. Default false.
    pub excluded: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetryPolicy>,
    /// The function's circuit breaker settings (a Shoal extension of `function.json`), every
    /// default filled in; its state is at `…/breaker`.
    pub circuit_breaker: CircuitBreaker,
    /// Where a stream trigger's events whose final attempt failed go (a Shoal extension of
    /// `function.json`); absent: the topic `<topic>-poison` on the trigger's brokers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dead_letter: Option<DeadLetterDoc>,
    /// At most this many calls of the handler for this function in flight at once, across every
    /// instance on every worker (a Shoal extension of `function.json`); absent: no cap.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 10000)]
    pub max_concurrency: Option<u32>,
    /// Stored as written; no effect (Shoal calls the app's handler, it loads no code).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub script_file: Option<String>,
    /// Stored as written; no effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry_point: Option<String>,
    /// Stored as written; no effect (`attributes` or `config`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub configuration_source: Option<String>,
    /// Stored as written; no effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generated_by: Option<String>,
    pub etag: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, ToSchema)]
#[schema(as = FunctionWrite)]
#[allow(dead_code)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FunctionWriteDoc {
    bindings: Vec<Binding>,
    disabled: Option<bool>,
    excluded: Option<bool>,
    retry: Option<RetryPolicy>,
    circuit_breaker: Option<CircuitBreakerWrite>,
    dead_letter: Option<DeadLetterDoc>,
    /// At most this many calls of the handler in flight at once across every instance, from 1
    /// to 10000; not for HTTP-triggered functions. Instances that could get no slot are not
    /// scaled out to. See docs/triggers.md, "Capping concurrency".
    #[schema(minimum = 1, maximum = 10000)]
    max_concurrency: Option<u32>,
    script_file: Option<String>,
    entry_point: Option<String>,
    #[schema(pattern = "^(attributes|config)$")]
    configuration_source: Option<String>,
    generated_by: Option<String>,
}

/// `circuitBreaker` as written; every field is optional (defaults: enabled, more than 100
/// final failures within `00:00:30`, half-open after `00:01:00`, no operator webhook).
#[derive(Debug, ToSchema)]
#[schema(as = CircuitBreakerWrite)]
#[allow(dead_code)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CircuitBreakerWrite {
    enabled: Option<bool>,
    #[schema(minimum = 1, maximum = 1000000)]
    failure_threshold: Option<u32>,
    /// `hh:mm:ss`, 1 s to 1 h.
    #[schema(example = "00:00:30")]
    window: Option<String>,
    half_open: Option<bool>,
    /// `hh:mm:ss`, 1 s to 7 days.
    #[schema(example = "00:01:00")]
    cooldown: Option<String>,
    /// Absolute http(s) URL.
    #[schema(example = "https://ops.example/hooks/shoal")]
    notify_url: Option<String>,
}

/// `deadLetter`, for `kafkaTrigger` and `eventHubTrigger` functions only: either `topic` (on
/// the trigger's own brokers; a `%Setting%` reference is resolved) or `queueName` with an
/// optional `connection` (a Storage queue; absent means `AzureWebJobsStorage`). Without
/// `deadLetter` the target is the topic `<topic>-poison`. A target topic or queue that does not
/// exist is created before the first write, a topic with the trigger topic's partition count;
/// while it can be neither written nor created, the partition waits and the listener's status
/// says why.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeadLetterDoc {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "orders-failed")]
    pub topic: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection: Option<String>,
}

impl From<DeadLetterTarget> for DeadLetterDoc {
    fn from(target: DeadLetterTarget) -> DeadLetterDoc {
        match target {
            DeadLetterTarget::Topic(topic) => DeadLetterDoc {
                topic: Some(topic),
                queue_name: None,
                connection: None,
            },
            DeadLetterTarget::StorageQueue {
                queue_name,
                connection,
            } => DeadLetterDoc {
                topic: None,
                queue_name: Some(queue_name.as_str().to_owned()),
                connection,
            },
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FunctionList {
    pub items: Vec<Function>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continuation_token: Option<String>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_functions))
        .routes(routes!(
            get_function,
            put_function,
            patch_function,
            delete_function
        ))
}

pub(crate) fn parse_stored(record: &FunctionRecord) -> Result<WrittenFunction, ApiError> {
    FunctionSpec::parse(&record.name, &record.spec).map_err(|e| {
        ApiError::Internal(anyhow::anyhow!(
            "stored function {} no longer validates: {e}",
            record.name
        ))
    })
}

fn view(record: FunctionRecord) -> Result<Function, ApiError> {
    let spec = parse_stored(&record)?.spec;
    let breaker = spec.breaker();
    let trigger_type = spec
        .trigger()
        .map(|t| t.type_name().to_string())
        .unwrap_or_default();
    Ok(Function {
        name: record.name,
        app: record.app,
        bindings: spec.bindings,
        trigger_type,
        disabled: spec.disabled,
        excluded: spec.excluded,
        circuit_breaker: breaker,
        dead_letter: spec.dead_letter.map(|d| d.0.into()),
        max_concurrency: spec.max_concurrency,
        retry: spec.retry,
        script_file: spec.script_file,
        entry_point: spec.entry_point,
        configuration_source: spec.configuration_source,
        generated_by: spec.generated_by,
        etag: record.etag.to_string(),
        created_at: record.created_at,
        updated_at: record.updated_at,
    })
}

/// List an app's functions, ordered by name.
#[utoipa::path(get, path = "/v1/tenants/{tenant}/apps/{app}/functions", tag = TAG_FUNCTIONS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path), ListQuery),
    responses((status = 200, body = FunctionList), (status = 404, body = Problem), (status = 422, body = Problem)))]
pub async fn list_functions(
    State(state): State<AppState>,
    caller: Caller,
    AppPath(tenant, app): AppPath,
    Query(query): Query<ListQuery>,
) -> Result<Json<FunctionList>, ApiError> {
    allow(
        &state.pool,
        &caller,
        actions::FUNCTIONS_READ,
        &Scope::app(&tenant, &app),
    )
    .await?;
    let page = query.page()?;
    let id = TenantId::new(tenant);
    let mut tx = begin_tenant(&state.pool, &id).await?;
    if !shoal_store::apps::exists(&mut tx, &id, app.as_str()).await? {
        return Err(ApiError::NotFound);
    }
    let page = functions::list(&mut tx, &id, app.as_str(), &page).await?;
    shoal_store::commit(tx).await?;
    let items = page
        .items
        .into_iter()
        .map(view)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Json(FunctionList {
        items,
        continuation_token: page.continuation_token,
    }))
}

/// Read a function.
#[utoipa::path(get, path = "/v1/tenants/{tenant}/apps/{app}/functions/{function}", tag = TAG_FUNCTIONS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path), ("function" = shoal_domain::names::FunctionName, Path), ConditionalHeaders),
    responses((status = 200, body = Function, headers(("ETag" = String))),
        (status = 304, description = "`If-None-Match` names the current `ETag`", headers(("ETag" = String))), (status = 412, body = Problem), (status = 404, body = Problem)))]
pub async fn get_function(
    State(state): State<AppState>,
    caller: Caller,
    FunctionPath(tenant, app, function): FunctionPath,
    Conditional(precondition): Conditional,
) -> Result<Response, ApiError> {
    allow(
        &state.pool,
        &caller,
        actions::FUNCTIONS_READ,
        &Scope::function(&tenant, &app, &function),
    )
    .await?;
    let id = TenantId::new(tenant);
    let mut tx = begin_tenant(&state.pool, &id).await?;
    let record = functions::get(&mut tx, &id, app.as_str(), function.as_str()).await?;
    shoal_store::commit(tx).await?;
    let etag = record.etag;
    if let Some(not_modified) = conditional_read(&precondition, &etag)? {
        return Ok(not_modified);
    }
    Ok((resource_headers(&etag, None), Json(view(record)?)).into_response())
}

/// Create or replace a function (201 on create, 200 on replace). The app must exist.
#[utoipa::path(put, path = "/v1/tenants/{tenant}/apps/{app}/functions/{function}", tag = TAG_FUNCTIONS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path), ("function" = shoal_domain::names::FunctionName, Path), ConditionalHeaders), request_body = FunctionWriteDoc,
    responses((status = 200, body = Function), (status = 201, body = Function), (status = 404, body = Problem),
        (status = 412, body = Problem), (status = 422, body = Problem)))]
pub async fn put_function(
    State(state): State<AppState>,
    caller: Caller,
    FunctionPath(tenant, app, function): FunctionPath,
    Conditional(precondition): Conditional,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let authorized = authorize(
        &state,
        &caller,
        actions::FUNCTIONS_WRITE,
        &Scope::function(&tenant, &app, &function),
    )
    .await?;
    let written = FunctionSpec::parse(function.as_str(), &body)?;
    super::egress::check_function(&state, &written.spec)?;
    write(
        &authorized,
        TenantId::new(tenant),
        app.as_str(),
        function.as_str(),
        &written.stored,
        precondition,
    )
    .await
}

/// Update a function with a JSON merge patch (RFC 7396). Arrays such as `bindings` are
/// replaced whole, as the RFC specifies.
#[utoipa::path(patch, path = "/v1/tenants/{tenant}/apps/{app}/functions/{function}", tag = TAG_FUNCTIONS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path), ("function" = shoal_domain::names::FunctionName, Path), ConditionalHeaders),
    request_body(content = FunctionWriteDoc, content_type = "application/merge-patch+json"),
    responses((status = 200, body = Function), (status = 404, body = Problem), (status = 412, body = Problem), (status = 422, body = Problem)))]
pub async fn patch_function(
    State(state): State<AppState>,
    caller: Caller,
    FunctionPath(tenant, app, function): FunctionPath,
    Conditional(precondition): Conditional,
    JsonBody(patch): JsonBody,
) -> Result<Response, ApiError> {
    let authorized = authorize(
        &state,
        &caller,
        actions::FUNCTIONS_WRITE,
        &Scope::function(&tenant, &app, &function),
    )
    .await?;
    if !patch.is_object() {
        return Err(ApiError::validation(
            "",
            "a merge patch must be a JSON object",
        ));
    }
    let id = TenantId::new(tenant);
    let mut tx = begin_tenant(&state.pool, &id).await?;
    let current = functions::get(&mut tx, &id, app.as_str(), function.as_str()).await?;
    drop(tx);
    precondition.check(Some(current.etag))?;
    let mut doc: Value = current.spec.clone();
    merge_patch(&mut doc, &patch);
    let written = FunctionSpec::parse(function.as_str(), &doc)?;
    super::egress::check_function(&state, &written.spec)?;
    write(
        &authorized,
        id,
        app.as_str(),
        function.as_str(),
        &written.stored,
        Precondition::matches(current.etag),
    )
    .await
}

async fn write(
    authorized: &Authorized<'_>,
    id: TenantId,
    app: &str,
    function: &str,
    stored: &Value,
    precondition: Precondition,
) -> Result<Response, ApiError> {
    let mut write = authorized.begin(&id).await?;
    // The app is missing: say so rather than a bare 404 on a PUT.
    let missing = |e: ApiError| match e {
        ApiError::NotFound => {
            ApiError::NotFoundDetail(format!("app {app} does not exist in tenant {id}"))
        }
        other => other,
    };
    super::quotas::check_function(authorized.state(), &mut write.tx, &id, app, function)
        .await
        .map_err(missing)?;
    let (record, outcome) = functions::put(&mut write.tx, &id, app, function, stored, precondition)
        .await
        .map_err(|e| missing(e.into()))?;
    let location = format!("/v1/tenants/{id}/apps/{app}/functions/{function}");
    write.commit(&location).await?;
    let status = if outcome == Written::Created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let location = (outcome == Written::Created).then_some(location);
    let headers = resource_headers(&record.etag, location.as_deref());
    Ok((status, headers, Json(view(record)?)).into_response())
}

/// Delete a function.
#[utoipa::path(delete, path = "/v1/tenants/{tenant}/apps/{app}/functions/{function}", tag = TAG_FUNCTIONS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path), ("function" = shoal_domain::names::FunctionName, Path), ConditionalHeaders),
    responses((status = 204), (status = 404, body = Problem), (status = 412, body = Problem)))]
pub async fn delete_function(
    State(state): State<AppState>,
    caller: Caller,
    FunctionPath(tenant, app, function): FunctionPath,
    Conditional(precondition): Conditional,
) -> Result<StatusCode, ApiError> {
    let authorized = authorize(
        &state,
        &caller,
        actions::FUNCTIONS_DELETE,
        &Scope::function(&tenant, &app, &function),
    )
    .await?;
    let id = TenantId::new(tenant);
    let mut write = authorized.begin(&id).await?;
    functions::delete(
        &mut write.tx,
        &id,
        app.as_str(),
        function.as_str(),
        precondition,
    )
    .await?;
    let resource = format!("/v1/tenants/{id}/apps/{app}/functions/{function}");
    write.commit(&resource).await?;
    Ok(StatusCode::NO_CONTENT)
}
