//! `GET …/apps/{app}/scale`: how many instances an app runs and wants, where they are placed,
//! and the scheduler's latest decisions with the inputs that led to them.
//!
//! Readable by anyone who may read the app. The scheduler writes this state (platform scope);
//! the read filters on the caller's tenant like every tenant route, so another tenant's app is
//! a 404.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use shoal_domain::scale::{FunctionVerdict, ScaleMode};
use shoal_store::scale::{self, DecisionRecord, KEPT_DECISIONS};
use shoal_store::{TenantId, apps, begin_tenant};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::TAG_APPS;
use crate::access::Caller;
use crate::access::allow;
use crate::error::{ApiError, Problem};
use crate::extract::{AppPath, Query, query_integer};
use crate::state::AppState;
use shoal_domain::rbac::{Scope, actions};

/// Decisions returned when `?decisions=` is absent.
pub const DEFAULT_DECISIONS: u32 = 20;

/// An app's scale status.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScaleStatus {
    /// Instances placed on workers now (the rows of `placement`).
    pub current_instances: u32,
    /// The scheduler's latest decision; 0 until it has decided for this app.
    pub desired_instances: u32,
    /// Why fewer instances are placed than desired, as the scheduler last placed them;
    /// absent while every desired instance is placed. When workers are short, each tenant gets
    /// a share of their slots by its `limits.maxInstances`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(
        example = "waiting for capacity: tenant share used (tenant contoso holds 5 of its share of 5 of 10 slots; its apps want 12)"
    )]
    pub waiting: Option<String>,
    /// The app's scale mode, computed from `TARGET_BASED_SCALING_ENABLED` as the app read shows
    /// it (the mode each decision was taken in is on the decision).
    pub mode: ScaleMode,
    /// Which worker runs each instance, by instance.
    pub placement: Vec<InstancePlacement>,
    /// The latest decisions that changed the desired count, newest first.
    pub decisions: Vec<RecordedDecision>,
}

/// One app instance and the worker it is placed on.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstancePlacement {
    pub instance: u32,
    #[schema(example = "worker-7d9f")]
    pub worker: String,
}

/// A decision that changed the app's desired instances.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordedDecision {
    pub at: DateTime<Utc>,
    /// Desired instances before the decision.
    pub from: u32,
    /// Desired instances after it.
    pub to: u32,
    #[schema(example = "scale out: ship queueLength 1000 / 16 per instance = 63; +4 per decision")]
    pub reason: String,
    /// The mode the decision was taken in.
    pub mode: ScaleMode,
    /// The decision's inputs: how each trigger function was judged. Passed through as the
    /// scheduler recorded them, so a read never fails on the shape of older decisions.
    #[schema(value_type = Vec<FunctionVerdict>)]
    pub metrics: serde_json::Value,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ScaleQuery {
    /// How many of the latest decisions to return, 1–50 (default 20). Read as text so a bad
    /// value gets our 422.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 50)]
    pub decisions: Option<String>,
}

impl ScaleQuery {
    fn decisions(&self) -> Result<u32, ApiError> {
        let max = u64::try_from(KEPT_DECISIONS).unwrap_or(u64::MAX);
        let decisions = query_integer(
            "decisions",
            self.decisions.as_deref(),
            u64::from(DEFAULT_DECISIONS),
            (1, max),
        )?;
        Ok(u32::try_from(decisions).unwrap_or(u32::MAX))
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_scale))
}

/// Read an app's current and desired instances, its placement on workers and the latest scale
/// decisions with their inputs.
#[utoipa::path(get, path = "/v1/tenants/{tenant}/apps/{app}/scale", tag = TAG_APPS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path), ScaleQuery),
    responses(
        (status = 200, body = ScaleStatus, examples(
            ("scaledOut" = (summary = "A target-based app the scheduler scaled out", value = json!({
                "currentInstances": 2,
                "desiredInstances": 2,
                "mode": "target",
                "placement": [{"instance": 0, "worker": "worker-a"}, {"instance": 1, "worker": "worker-b"}],
                "decisions": [{
                    "at": "2026-11-21T10:15:30Z",
                    "from": 1,
                    "to": 2,
                    "reason": "scale out: ship queueLength 40 / 32 per instance = 2",
                    "mode": "target",
                    "metrics": [{"function": "ship", "mode": "target", "metric": 40, "queueTimeMs": 1200, "target": 2, "perInstance": 32}]
                }]
            }))),
            ("waitingForCapacity" = (summary = "Workers are short and the tenant holds its share of them", value = json!({
                "currentInstances": 1,
                "desiredInstances": 2,
                "waiting": "waiting for capacity: tenant share used (tenant contoso holds 5 of its share of 5 of 10 slots; its apps want 12)",
                "mode": "target",
                "placement": [{"instance": 0, "worker": "worker-a"}],
                "decisions": [{
                    "at": "2026-11-21T10:15:30Z",
                    "from": 1,
                    "to": 2,
                    "reason": "scale out: ship queueLength 40 / 32 per instance = 2",
                    "mode": "target",
                    "metrics": [{"function": "ship", "mode": "target", "metric": 40, "queueTimeMs": 1200, "target": 2, "perInstance": 32}]
                }]
            }))),
            ("neverDecided" = (summary = "An app the scheduler has not decided for yet", value = json!({
                "currentInstances": 0,
                "desiredInstances": 0,
                "mode": "incremental",
                "placement": [],
                "decisions": []
            })))
        )),
        (status = 404, body = Problem, description = "No such tenant or app, or one the caller may not know exists"),
        (status = 422, body = Problem, description = "`decisions` is not an integer from 1 to 50, or a path parameter is not a valid name")))]
pub async fn get_scale(
    State(state): State<AppState>,
    caller: Caller,
    AppPath(tenant, app): AppPath,
    Query(query): Query<ScaleQuery>,
) -> Result<Json<ScaleStatus>, ApiError> {
    allow(
        &state.pool,
        &caller,
        actions::APP_SCALE_READ,
        &Scope::app(&tenant, &app),
    )
    .await?;
    let decisions = query.decisions()?;
    let id = TenantId::new(tenant);
    let mut tx = begin_tenant(&state.pool, &id).await?;
    let record = apps::get(&mut tx, &id, &state.cipher, app.as_str()).await?;
    let status = scale::status(&mut tx, &id, app.as_str(), i64::from(decisions)).await?;
    shoal_store::commit(tx).await?;

    let mode = super::apps::parse_stored(&record)?.spec.scale.mode;
    Ok(Json(ScaleStatus {
        current_instances: u32::try_from(status.placement.len()).unwrap_or(u32::MAX),
        desired_instances: status.desired.map_or(0, |d| d.desired),
        waiting: status.waiting,
        mode,
        placement: status
            .placement
            .into_iter()
            .map(|(instance, worker)| InstancePlacement { instance, worker })
            .collect(),
        decisions: status
            .decisions
            .into_iter()
            .map(decision_view)
            .collect::<Result<_, _>>()?,
    }))
}

fn decision_view(record: DecisionRecord) -> Result<RecordedDecision, ApiError> {
    let mode =
        serde_json::from_value(serde_json::Value::String(record.mode.clone())).map_err(|_| {
            ApiError::Internal(anyhow::anyhow!(
                "scale decision of {}/{} has mode {:?}",
                record.tenant,
                record.app,
                record.mode
            ))
        })?;
    Ok(RecordedDecision {
        at: record.at,
        from: record.from,
        to: record.to,
        reason: record.reason,
        mode,
        metrics: record.metrics,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_default_to_twenty_and_accept_one_to_fifty() {
        let q = |d: Option<&str>| {
            ScaleQuery {
                decisions: d.map(str::to_owned),
            }
            .decisions()
        };
        assert_eq!(q(None).unwrap(), DEFAULT_DECISIONS);
        assert_eq!(q(Some("1")).unwrap(), 1);
        assert_eq!(q(Some("50")).unwrap(), 50);
        for bad in ["0", "51", "-1", "", "ten", "1.5", "99999999999"] {
            assert!(
                matches!(q(Some(bad)), Err(ApiError::Validation(ref e)) if e[0].path == "decisions"),
                "{bad}"
            );
        }
    }
}
