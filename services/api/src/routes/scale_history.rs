//! `GET …/apps/{app}/scale/history`: what the scheduler saw of an app over the last hour at
//! most — the summed trigger metric (queue length, active messages), the desired and the placed
//! instances, sampled every few seconds — for a chart beside the decision log.
//!
//! Readable by anyone who may read the app's scale status; another tenant's app is a 404.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use shoal_store::scale_samples::{self, KEPT_FOR, SAMPLE_INTERVAL};
use shoal_store::{TenantId, apps, begin_tenant};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::TAG_APPS;
use crate::access::{Caller, allow};
use crate::error::{ApiError, Problem};
use crate::extract::{AppPath, Query, query_integer};
use crate::state::AppState;
use shoal_domain::rbac::{Scope, actions};

/// An app's recent scale samples.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScaleHistory {
    /// Seconds between samples.
    #[schema(example = 10)]
    pub interval_seconds: u64,
    /// Oldest first.
    pub samples: Vec<ScaleSample>,
}

/// What the scheduler saw of the app at one moment.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScaleSample {
    pub at: DateTime<Utc>,
    /// The sum of the trigger functions' latest readings (queue length, active messages);
    /// absent when none could be read.
    #[schema(example = 1000)]
    pub metric: Option<i64>,
    pub desired_instances: u32,
    /// Instances placed on workers.
    pub placed_instances: u32,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct HistoryQuery {
    /// How far back, in minutes, 1–60 (default 60). Read as text so a bad value gets our 422.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 60)]
    pub minutes: Option<String>,
}

impl HistoryQuery {
    fn minutes(&self) -> Result<u64, ApiError> {
        let max = KEPT_FOR.as_secs() / 60;
        query_integer("minutes", self.minutes.as_deref(), max, (1, max))
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_scale_history))
}

/// Read what the scheduler saw of an app over the last hour at most: the summed trigger metric,
/// the desired and the placed instances, oldest first.
#[utoipa::path(get, path = "/v1/tenants/{tenant}/apps/{app}/scale/history", tag = TAG_APPS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path), HistoryQuery),
    responses(
        (status = 200, body = ScaleHistory, example = json!({
            "intervalSeconds": 10,
            "samples": [
                {"at": "2026-11-21T10:15:20Z", "metric": 0, "desiredInstances": 1, "placedInstances": 1},
                {"at": "2026-11-21T10:15:30Z", "metric": 1000, "desiredInstances": 5, "placedInstances": 1}
            ]
        })),
        (status = 404, body = Problem, description = "No such tenant or app, or one the caller may not know exists"),
        (status = 422, body = Problem, description = "`minutes` is not an integer from 1 to 60, or a path parameter is not a valid name")))]
pub async fn get_scale_history(
    State(state): State<AppState>,
    caller: Caller,
    AppPath(tenant, app): AppPath,
    Query(query): Query<HistoryQuery>,
) -> Result<Json<ScaleHistory>, ApiError> {
    allow(
        &state.pool,
        &caller,
        actions::APP_SCALE_READ,
        &Scope::app(&tenant, &app),
    )
    .await?;
    let minutes = query.minutes()?;
    let id = TenantId::new(tenant);
    let mut tx = begin_tenant(&state.pool, &id).await?;
    // A 404 for an app that does not exist, rather than an empty history.
    apps::get(&mut tx, &id, &state.cipher, app.as_str()).await?;
    let samples = scale_samples::of_app(
        &mut tx,
        &id,
        app.as_str(),
        std::time::Duration::from_secs(minutes * 60),
    )
    .await?;
    shoal_store::commit(tx).await?;
    Ok(Json(ScaleHistory {
        interval_seconds: SAMPLE_INTERVAL.as_secs(),
        samples: samples
            .into_iter()
            .map(|s| ScaleSample {
                at: s.at,
                metric: s.metric,
                desired_instances: s.desired,
                placed_instances: s.placed,
            })
            .collect(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minutes_default_to_the_hour_kept_and_accept_one_to_sixty() {
        let q = |m: Option<&str>| {
            HistoryQuery {
                minutes: m.map(str::to_owned),
            }
            .minutes()
        };
        assert_eq!(q(None).unwrap(), 60);
        assert_eq!(q(Some("1")).unwrap(), 1);
        assert_eq!(q(Some("60")).unwrap(), 60);
        for bad in ["0", "61", "-1", "", "an hour", "1.5"] {
            assert!(
                matches!(q(Some(bad)), Err(ApiError::Validation(ref e)) if e[0].path == "minutes"),
                "{bad}"
            );
        }
    }
}
