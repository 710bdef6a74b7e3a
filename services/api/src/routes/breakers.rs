//! `…/functions/{function}/breaker`, `…/pause`, `…/resume`: a function's circuit breaker —
//! its state, the failures that opened it, the history of its transitions — and opening or
//! closing it by hand. Pausing stops every listener of the function within about a second
//! (messages stay in their queue; in-flight ones finish and settle); resuming lets them
//! receive again. Both are audited and posted to the function's operator webhook.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::Serialize;
use shoal_domain::circuit_breaker::{BreakerCause, BreakerState, CircuitBreaker};
use shoal_domain::names::{AppName, FunctionName, TenantName};
use shoal_store::breakers::{self, BreakerRecord, FunctionRef, Transition};
use shoal_store::{TenantId, begin_tenant, functions as stored_functions, signing_secrets};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::functions::parse_stored;
use super::{TAG_FUNCTIONS, authorize};
use crate::access::{Caller, allow};
use crate::error::{ApiError, Problem};
use crate::extract::FunctionPath;
use crate::state::AppState;
use shoal_domain::rbac::{Scope, actions};

/// How many transitions a breaker read returns (the history keeps as many).
const HISTORY_SHOWN: u32 = breakers::HISTORY as u32;

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Breaker {
    pub state: BreakerState,
    /// Why it is in this state (absent while it never moved).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<BreakerCause>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed_at: Option<DateTime<Utc>>,
    /// While half-open: the worker probing with one message, and until when its claim holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe_by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe_until: Option<DateTime<Utc>>,
    /// Open: the final failures that opened it; closed: the latest ones. Newest first, at
    /// most 10.
    pub failures: Vec<Failure>,
    /// The function's `circuitBreaker` settings, defaults filled in.
    pub settings: CircuitBreaker,
    /// The latest transitions, newest first (at most 100 are kept).
    pub transitions: Vec<BreakerTransition>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Failure {
    pub at: DateTime<Utc>,
    pub reason: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BreakerTransition {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub from: BreakerState,
    pub to: BreakerState,
    pub cause: BreakerCause,
    /// The principal who paused or resumed, or the worker that counted, half-opened or probed.
    pub actor: String,
    /// For an opening: the failures that opened it.
    pub failures: Vec<Failure>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_breaker))
        .routes(routes!(pause_function))
        .routes(routes!(resume_function))
}

/// Read a function's circuit breaker: state, the failures that opened it, settings, history.
#[utoipa::path(get, path = "/v1/tenants/{tenant}/apps/{app}/functions/{function}/breaker", tag = TAG_FUNCTIONS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path), ("function" = shoal_domain::names::FunctionName, Path)),
    responses((status = 200, body = Breaker), (status = 403, body = Problem), (status = 404, body = Problem)))]
pub async fn get_breaker(
    State(state): State<AppState>,
    caller: Caller,
    FunctionPath(tenant, app, function): FunctionPath,
) -> Result<Json<Breaker>, ApiError> {
    allow(
        &state.pool,
        &caller,
        actions::FUNCTIONS_READ,
        &Scope::function(&tenant, &app, &function),
    )
    .await?;
    let id = TenantId::new(tenant);
    let mut tx = begin_tenant(&state.pool, &id).await?;
    let view = read(&mut tx, &id, &app, &function).await?;
    shoal_store::commit(tx).await?;
    Ok(Json(view))
}

/// Pause a function: open its circuit breaker by hand. Every listener of the function stops
/// receiving within about a second; messages stay in their queue, in-flight ones finish and
/// settle. It stays open until resumed (a paused breaker never half-opens by itself). Pausing
/// a paused function changes nothing. Audited; posted to the operator webhook.
#[utoipa::path(post, path = "/v1/tenants/{tenant}/apps/{app}/functions/{function}/pause", tag = TAG_FUNCTIONS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path), ("function" = shoal_domain::names::FunctionName, Path)),
    responses((status = 200, body = Breaker), (status = 403, body = Problem), (status = 404, body = Problem)))]
pub async fn pause_function(
    State(state): State<AppState>,
    caller: Caller,
    FunctionPath(tenant, app, function): FunctionPath,
) -> Result<Json<Breaker>, ApiError> {
    by_hand(state, caller, tenant, app, function, BreakerCause::Paused).await
}

/// Resume a function: close its circuit breaker, whether it was paused by hand or opened by
/// failures. Failures are counted afresh from now. Resuming a closed breaker changes nothing.
/// Audited; posted to the operator webhook.
#[utoipa::path(post, path = "/v1/tenants/{tenant}/apps/{app}/functions/{function}/resume", tag = TAG_FUNCTIONS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path), ("function" = shoal_domain::names::FunctionName, Path)),
    responses((status = 200, body = Breaker), (status = 403, body = Problem), (status = 404, body = Problem)))]
pub async fn resume_function(
    State(state): State<AppState>,
    caller: Caller,
    FunctionPath(tenant, app, function): FunctionPath,
) -> Result<Json<Breaker>, ApiError> {
    by_hand(state, caller, tenant, app, function, BreakerCause::Resumed).await
}

async fn by_hand(
    state: AppState,
    caller: Caller,
    tenant: TenantName,
    app: AppName,
    function: FunctionName,
    cause: BreakerCause,
) -> Result<Json<Breaker>, ApiError> {
    let action = match cause {
        BreakerCause::Paused => actions::FUNCTIONS_PAUSE,
        _ => actions::FUNCTIONS_RESUME,
    };
    let authorized = authorize(
        &state,
        &caller,
        action,
        &Scope::function(&tenant, &app, &function),
    )
    .await?;
    let id = TenantId::new(tenant);
    let mut write = authorized.begin(&id).await?;
    let f = FunctionRef {
        tenant: &id,
        app: app.as_str(),
        function: function.as_str(),
    };
    let transition =
        breakers::set_by_hand(&mut write.tx, f, cause, &caller.principal.subject()).await?;
    let view = read(&mut write.tx, &id, &app, &function).await?;
    let secret = match (&transition, &view.settings.notify_url) {
        (Some(_), Some(_)) => Some(
            signing_secrets::get_or_create(&mut write.tx, &id, &state.cipher, app.as_str()).await?,
        ),
        _ => None,
    };
    let resource = format!(
        "/v1/tenants/{id}/apps/{app}/functions/{function}/{}",
        if cause == BreakerCause::Paused {
            "pause"
        } else {
            "resume"
        }
    );
    write.commit(&resource).await?;
    if let (Some(t), Some(url), Some(secret)) =
        (transition, view.settings.notify_url.clone(), secret)
    {
        let event = t.event(id.as_str());
        let webhook_id = event.webhook_id();
        let body = serde_json::to_vec(&event.body()).unwrap_or_default();
        let invoker = state.webhooks.invoker().clone();
        tokio::spawn(async move {
            invoker
                .deliver_event(&url, &secret, &webhook_id, body)
                .await;
        });
    }
    Ok(Json(view))
}

async fn read(
    tx: &mut shoal_store::Tx,
    id: &TenantId,
    app: &AppName,
    function: &FunctionName,
) -> Result<Breaker, ApiError> {
    let record = stored_functions::get(tx, id, app.as_str(), function.as_str()).await?;
    let settings = parse_stored(&record)?.spec.breaker();
    let f = FunctionRef {
        tenant: id,
        app: app.as_str(),
        function: function.as_str(),
    };
    let breaker = breakers::get(tx, f).await?;
    let transitions = breakers::transitions(tx, f, None, HISTORY_SHOWN).await?;
    Ok(view(breaker, settings, transitions))
}

fn view(record: BreakerRecord, settings: CircuitBreaker, transitions: Vec<Transition>) -> Breaker {
    let failures = |samples: Vec<shoal_store::breakers::FailureSample>| {
        samples
            .into_iter()
            .map(|s| Failure {
                at: s.at,
                reason: s.reason,
            })
            .collect()
    };
    Breaker {
        state: record.state,
        cause: record.cause,
        changed_at: record.changed_at,
        probe_by: record.probe_by,
        probe_until: record.probe_until,
        failures: failures(record.failures),
        settings,
        transitions: transitions
            .into_iter()
            .map(|t| BreakerTransition {
                id: t.id,
                at: t.at,
                from: t.from,
                to: t.to,
                cause: t.cause,
                actor: t.actor,
                failures: failures(t.failures),
            })
            .collect(),
    }
}
