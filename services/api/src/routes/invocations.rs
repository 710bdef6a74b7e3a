//! `GET …/functions/{function}/invocations`: a function's invocation telemetry as its workers
//! recorded it — per minute, the attempts, the failures and duration percentiles — and the
//! latest failed attempts with their error and the handler's `Logs`.
//!
//! Readable by anyone who may read the function; another tenant's function is a 404.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use serde::{Deserialize, Serialize};
use shoal_domain::invocation_stats::percentile;
use shoal_store::invocation_telemetry::{self, KEPT_FAILURES, KEPT_MINUTES_FOR};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{TAG_FUNCTIONS, readable_function};
use crate::access::Caller;
use crate::error::{ApiError, Problem};
use crate::extract::{FunctionPath, Query, query_integer};
use crate::state::AppState;

/// A function's invocation telemetry.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Invocations {
    /// Every minute of the window, oldest first, ending with the current one: exactly
    /// `minutes` of them (more only when a worker's clock runs ahead). A minute without
    /// attempts is there with zero counts and no percentiles: the series has no gaps.
    pub minutes: Vec<InvocationMinute>,
    /// The latest failed attempts, newest first by `at` (when they failed).
    pub failures: Vec<FailedInvocation>,
}

/// One minute of a function's handler attempts, all workers added up. Each retry is an attempt
/// of its own. Percentiles are the upper bound of the duration bucket they fall in, not a
/// measured duration: buckets widen from 1 ms to 300000 ms (5 min; longer counts as 300000),
/// so a p95 of 4000 means the 95th percentile lies in the bucket above 2500 and up to 4000 ms.
/// Absent in a minute without attempts.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvocationMinute {
    /// The minute's start.
    pub minute: DateTime<Utc>,
    pub invocations: i64,
    pub failures: i64,
    pub p50_ms: Option<u64>,
    pub p95_ms: Option<u64>,
    pub p99_ms: Option<u64>,
}

/// A failed handler attempt.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailedInvocation {
    pub at: DateTime<Utc>,
    pub invocation_id: uuid::Uuid,
    pub worker: String,
    pub duration_ms: i64,
    /// Why it failed: the handler's status, a timeout, a connection error, a failed output.
    pub error: String,
    /// The handler's `Logs`, when it answered.
    pub logs: Vec<String>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct InvocationsQuery {
    /// How many minutes, the current one included, 1–1440 (default 60). Read as text so a bad
    /// value gets our 422.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 1440)]
    pub minutes: Option<String>,
    /// How many of the latest failures, 0–50 (default 20).
    #[param(value_type = Option<u32>, minimum = 0, maximum = 50)]
    pub failures: Option<String>,
}

impl InvocationsQuery {
    fn minutes(&self) -> Result<u64, ApiError> {
        query_integer(
            "minutes",
            self.minutes.as_deref(),
            60,
            (1, KEPT_MINUTES_FOR.as_secs() / 60),
        )
    }

    fn failures(&self) -> Result<i64, ApiError> {
        let max = u64::try_from(KEPT_FAILURES).unwrap_or(0);
        let n = query_integer("failures", self.failures.as_deref(), 20, (0, max))?;
        Ok(i64::try_from(n).unwrap_or(0))
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_invocations))
}

/// Read a function's invocations per minute (attempts, failures, duration percentiles) and its
/// latest failed attempts with their error and the handler's logs.
#[utoipa::path(get, path = "/v1/tenants/{tenant}/apps/{app}/functions/{function}/invocations", tag = TAG_FUNCTIONS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path),
        ("function" = shoal_domain::names::FunctionName, Path), InvocationsQuery),
    responses(
        (status = 200, body = Invocations, example = json!({
            "minutes": [{"minute": "2026-11-24T10:00:00Z", "invocations": 120, "failures": 3, "p50Ms": 25, "p95Ms": 250, "p99Ms": 400}],
            "failures": [{"at": "2026-11-24T10:00:41Z", "invocationId": "0193a5c0-7f1e-7c2a-9a41-2f5d8e1c0b7a", "worker": "worker-a",
                "durationMs": 212, "error": "handler answered 500", "logs": ["charging order 42", "card declined"]}]
        })),
        (status = 404, body = Problem, description = "No such tenant, app or function, or one the caller may not know exists"),
        (status = 422, body = Problem, description = "`minutes` or `failures` out of range, or a path parameter is not a valid name")))]
pub async fn get_invocations(
    State(state): State<AppState>,
    caller: Caller,
    FunctionPath(tenant, app, function): FunctionPath,
    Query(query): Query<InvocationsQuery>,
) -> Result<Json<Invocations>, ApiError> {
    let (id, mut tx) = readable_function(&state, &caller, tenant, &app, &function).await?;
    let minutes = query.minutes()?;
    let limit = query.failures()?;
    // The API's clock says which minute is current; the rows carry the workers' minutes.
    let last = Utc::now()
        .duration_trunc(TimeDelta::minutes(1))
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("the current minute: {e}")))?;
    let first = last - TimeDelta::minutes(i64::try_from(minutes).unwrap_or(1) - 1);
    let totals =
        invocation_telemetry::minutes(&mut tx, &id, app.as_str(), function.as_str(), first, last)
            .await?;
    let failed = if limit > 0 {
        invocation_telemetry::failures(&mut tx, &id, app.as_str(), function.as_str(), limit).await?
    } else {
        Vec::new()
    };
    shoal_store::commit(tx).await?;
    Ok(Json(Invocations {
        minutes: totals
            .into_iter()
            .map(|m| InvocationMinute {
                minute: m.minute,
                invocations: m.invocations,
                failures: m.failures,
                p50_ms: percentile(&m.duration_buckets, 0.50),
                p95_ms: percentile(&m.duration_buckets, 0.95),
                p99_ms: percentile(&m.duration_buckets, 0.99),
            })
            .collect(),
        failures: failed
            .into_iter()
            .map(|f| FailedInvocation {
                at: f.at,
                invocation_id: f.invocation_id,
                worker: f.worker,
                duration_ms: f.duration_ms,
                error: f.error,
                logs: f.logs,
            })
            .collect(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minutes_and_failures_are_bounded_with_defaults() {
        let q = |m: Option<&str>, f: Option<&str>| InvocationsQuery {
            minutes: m.map(str::to_owned),
            failures: f.map(str::to_owned),
        };
        assert_eq!(q(None, None).minutes().unwrap(), 60);
        assert_eq!(q(None, None).failures().unwrap(), 20);
        assert_eq!(q(Some("1440"), Some("0")).minutes().unwrap(), 1440);
        assert_eq!(q(Some("1440"), Some("0")).failures().unwrap(), 0);
        for bad in ["0", "1441", "x", "-3"] {
            assert!(
                matches!(q(Some(bad), None).minutes(), Err(ApiError::Validation(ref e)) if e[0].path == "minutes"),
                "{bad}"
            );
        }
        for bad in ["51", "y", "-1"] {
            assert!(
                matches!(q(None, Some(bad)).failures(), Err(ApiError::Validation(ref e)) if e[0].path == "failures"),
                "{bad}"
            );
        }
    }
}
