//! `GET /v1/workers` (platform scope): the worker registry with each worker's liveness and
//! per-listener statistics from its latest heartbeat.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::Serialize;
use shoal_domain::workers::{ListenerReport, WorkerState};
use shoal_store::begin_platform;
use shoal_store::workers::{self, WorkerRecord};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::TAG_OPERATIONS;
use crate::auth::Caller;
use crate::error::{ApiError, Problem};
use crate::extract::{ListQuery, Query};
use crate::state::AppState;

/// A worker silent for longer than this is shown as not alive. Workers heartbeat every 5 s by
/// default, so three missed beats.
pub const LIVENESS_WINDOW: chrono::TimeDelta = chrono::TimeDelta::seconds(15);

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Worker {
    pub name: String,
    /// What the worker last reported.
    pub state: WorkerState,
    /// Heartbeat within the last 15 seconds and not stopped.
    pub alive: bool,
    pub version: String,
    pub started_at: DateTime<Utc>,
    pub last_heartbeat: DateTime<Utc>,
    pub listeners: Vec<ListenerReport>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerList {
    pub items: Vec<Worker>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continuation_token: Option<String>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_workers))
}

/// List workers with their health and listener statistics (platform administrators only).
#[utoipa::path(get, path = "/v1/workers", tag = TAG_OPERATIONS, params(ListQuery),
    responses((status = 200, body = WorkerList), (status = 401, body = Problem), (status = 403, body = Problem), (status = 422, body = Problem)))]
pub async fn list_workers(
    State(state): State<AppState>,
    Caller(caller): Caller,
    Query(query): Query<ListQuery>,
) -> Result<Json<WorkerList>, ApiError> {
    caller.authorize_platform()?;
    let page = query.page()?;
    let mut tx = begin_platform(&state.pool).await?;
    let now = workers::now(&mut tx).await?;
    let page = workers::list(&mut tx, &page).await?;
    shoal_store::commit(tx).await?;
    Ok(Json(WorkerList {
        items: page.items.into_iter().map(|w| view(w, now)).collect(),
        continuation_token: page.continuation_token,
    }))
}

fn view(record: WorkerRecord, now: DateTime<Utc>) -> Worker {
    Worker {
        alive: record.state != WorkerState::Stopped && now - record.heartbeat_at <= LIVENESS_WINDOW,
        name: record.name,
        state: record.state,
        version: record.version,
        started_at: record.started_at,
        last_heartbeat: record.heartbeat_at,
        listeners: record.listeners,
    }
}
