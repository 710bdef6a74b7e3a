//! `GET /v1/workers` (platform scope): the worker registry with each worker's liveness, its
//! capacity, the app instances the scheduler placed on it and per-listener statistics from its
//! latest heartbeat.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::Serialize;
use shoal_domain::workers::{ListenerReport, WorkerState};
use shoal_store::assignments::{self, AssignmentRecord};
use shoal_store::begin_platform;
use shoal_store::workers::{self, WorkerRecord};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::TAG_OPERATIONS;
use crate::access::Caller;
use crate::access::allow;
use crate::error::{ApiError, Problem};
use crate::extract::{ListQuery, Query};
use crate::state::AppState;
use shoal_domain::rbac::{Scope, actions};

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Worker {
    pub name: String,
    /// What the worker last reported.
    pub state: WorkerState,
    /// Not stopped, and its last heartbeat is within its lease TTL (judged on the database's
    /// clock, as the scheduler judges it: a worker that is not alive gets no instances and
    /// loses those it had).
    pub alive: bool,
    /// Most app instances the scheduler may place on it.
    pub capacity: u32,
    /// How long after its last heartbeat the worker counts as dead.
    #[schema(example = 10.0)]
    pub lease_ttl_seconds: f64,
    pub version: String,
    pub started_at: DateTime<Utc>,
    pub last_heartbeat: DateTime<Utc>,
    /// The app instances the scheduler placed on it, by tenant, app and instance.
    pub assignments: Vec<WorkerAssignment>,
    pub listeners: Vec<ListenerReport>,
}

/// An app instance placed on a worker.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerAssignment {
    pub tenant: String,
    pub app: String,
    pub instance: u32,
    /// The epoch of the scheduler leader that wrote or last confirmed it; the worker acts only
    /// on assignments of the current epoch.
    pub epoch: i64,
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
    caller: Caller,
    Query(query): Query<ListQuery>,
) -> Result<Json<WorkerList>, ApiError> {
    allow(&state.pool, &caller, actions::WORKERS_READ, &Scope::root()).await?;
    let page = query.page()?;
    let mut tx = begin_platform(&state.pool).await?;
    let page = workers::list(&mut tx, &page).await?;
    let names: Vec<String> = page.items.iter().map(|w| w.name.clone()).collect();
    let placed = assignments::of_workers(&mut tx, &names).await?;
    shoal_store::commit(tx).await?;
    let mut by_worker: BTreeMap<String, Vec<AssignmentRecord>> = BTreeMap::new();
    for assignment in placed {
        by_worker
            .entry(assignment.worker.clone())
            .or_default()
            .push(assignment);
    }
    Ok(Json(WorkerList {
        items: page
            .items
            .into_iter()
            .map(|w| {
                let own = by_worker.remove(&w.name).unwrap_or_default();
                view(w, own)
            })
            .collect(),
        continuation_token: page.continuation_token,
    }))
}

fn view(record: WorkerRecord, assignments: Vec<AssignmentRecord>) -> Worker {
    Worker {
        alive: record.alive,
        capacity: record.capacity,
        lease_ttl_seconds: record.lease_ttl.as_secs_f64(),
        name: record.name,
        state: record.state,
        version: record.version,
        started_at: record.started_at,
        last_heartbeat: record.heartbeat_at,
        assignments: assignments
            .into_iter()
            .map(|a| WorkerAssignment {
                tenant: a.tenant,
                app: a.app,
                instance: a.instance,
                epoch: a.epoch,
            })
            .collect(),
        listeners: record.listeners,
    }
}
