//! Invocation telemetry (worker-written, tenant-read): per function and minute, each worker's
//! invocation attempts, failures and a duration histogram
//! ([`shoal_domain::invocation_stats`]), kept for [`KEPT_MINUTES_FOR`]; and the latest failed
//! attempts with their error and the handler's `Logs`, [`KEPT_FAILURES`] per function.
//!
//! Workers write in batches (one platform transaction per flush). A row per worker and minute
//! means no two workers update the same row; reads add them up. Rows of an app deleted
//! meanwhile are skipped, not an error (a foreign-key violation would lose the whole batch).

use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::Row;
use uuid::Uuid;

use crate::metrics::{Operation, measured};
use crate::{StoreError, TenantId, Tx};

/// How long per-minute aggregates are kept.
pub const KEPT_MINUTES_FOR: Duration = Duration::from_secs(24 * 3600);
/// How many failed attempts are kept per function.
pub const KEPT_FAILURES: i64 = 50;

/// One worker's counts for one function and minute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MinuteRecord {
    pub tenant: String,
    pub app: String,
    pub function: String,
    /// The minute's start.
    pub minute: DateTime<Utc>,
    pub worker: String,
    pub invocations: i64,
    pub failures: i64,
    /// Counts per bucket of `shoal_domain::invocation_stats::BUCKET_BOUNDS_MS`.
    pub duration_buckets: Vec<i64>,
}

/// A failed attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureRecord {
    pub tenant: String,
    pub app: String,
    pub function: String,
    pub at: DateTime<Utc>,
    pub invocation_id: Uuid,
    pub worker: String,
    pub duration_ms: i64,
    pub error: String,
    /// The handler's `Logs`, when it answered.
    pub logs: Vec<String>,
}

/// A function's counts for one minute, all workers added up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MinuteTotal {
    pub minute: DateTime<Utc>,
    pub invocations: i64,
    pub failures: i64,
    pub duration_buckets: Vec<i64>,
}

/// Row-level security shows `apps` only to a transaction scoped to their tenant: each row's
/// existence check runs with the row's tenant set (transaction-local), cleared afterwards.
async fn act_for(tx: &mut Tx, tenant: &str) -> Result<(), StoreError> {
    sqlx::query("select set_config('shoal.tenant_id', $1, true)")
        .bind(tenant)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Adds a flush's counts to the minutes and appends its failures (in the caller's platform
/// transaction).
pub async fn record(
    tx: &mut Tx,
    minutes: &[MinuteRecord],
    failures: &[FailureRecord],
) -> Result<(), StoreError> {
    measured(Operation::InvocationsRecord, async move {
        for m in minutes {
            act_for(tx, &m.tenant).await?;
            sqlx::query(
                "insert into invocation_minutes
                     (tenant_id, app_name, function_name, minute, worker, invocations, failures, duration_buckets)
                 select $1, $2, $3, $4, $5, $6, $7, $8
                 where exists (select from apps where tenant_id = $1 and name = $2)
                 on conflict (tenant_id, app_name, function_name, minute, worker) do update set
                     invocations = invocation_minutes.invocations + excluded.invocations,
                     failures = invocation_minutes.failures + excluded.failures,
                     duration_buckets = array(
                         select coalesce(a, 0) + coalesce(b, 0)
                         from unnest(invocation_minutes.duration_buckets, excluded.duration_buckets) as u(a, b))",
            )
            .bind(&m.tenant)
            .bind(&m.app)
            .bind(&m.function)
            .bind(m.minute)
            .bind(&m.worker)
            .bind(m.invocations)
            .bind(m.failures)
            .bind(&m.duration_buckets)
            .execute(&mut **tx)
            .await?;
        }
        for f in failures {
            act_for(tx, &f.tenant).await?;
            sqlx::query(
                "insert into invocation_failures
                     (tenant_id, app_name, function_name, at, invocation_id, worker, duration_ms, error, logs)
                 select $1, $2, $3, $4, $5, $6, $7, $8, $9
                 where exists (select from apps where tenant_id = $1 and name = $2)",
            )
            .bind(&f.tenant)
            .bind(&f.app)
            .bind(&f.function)
            .bind(f.at)
            .bind(f.invocation_id)
            .bind(&f.worker)
            .bind(f.duration_ms)
            .bind(&f.error)
            .bind(serde_json::json!(f.logs))
            .execute(&mut **tx)
            .await?;
        }
        act_for(tx, "").await
    })
    .await
}

/// Deletes minutes older than [`KEPT_MINUTES_FOR`] and all but the newest [`KEPT_FAILURES`]
/// failures of every function. Returns the rows deleted.
pub async fn prune(tx: &mut Tx) -> Result<u64, StoreError> {
    measured(Operation::InvocationsPrune, async move {
        let minutes = sqlx::query(
            "delete from invocation_minutes
             where minute < now() - $1::double precision * interval '1 second'",
        )
        .bind(KEPT_MINUTES_FOR.as_secs_f64())
        .execute(&mut **tx)
        .await?
        .rows_affected();
        let failures = sqlx::query(
            "delete from invocation_failures where id in (
                 select id from (
                     select id, row_number() over (
                         partition by tenant_id, app_name, function_name order by id desc) as n
                     from invocation_failures) ranked
                 where n > $1)",
        )
        .bind(KEPT_FAILURES)
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(minutes + failures)
    })
    .await
}

/// A function's minutes of the last `window`, oldest first, all workers added up.
pub async fn minutes(
    tx: &mut Tx,
    tenant: &TenantId,
    app: &str,
    function: &str,
    window: Duration,
) -> Result<Vec<MinuteTotal>, StoreError> {
    measured(Operation::InvocationsMinutes, async move {
        let rows = sqlx::query(
            "select minute, invocations, failures, duration_buckets from invocation_minutes
             where tenant_id = $1 and app_name = $2 and function_name = $3
               and minute >= now() - $4::double precision * interval '1 second'
             order by minute, worker",
        )
        .bind(tenant.as_str())
        .bind(app)
        .bind(function)
        .bind(window.min(KEPT_MINUTES_FOR).as_secs_f64())
        .fetch_all(&mut **tx)
        .await?;
        let mut totals: Vec<MinuteTotal> = Vec::new();
        for row in &rows {
            let minute: DateTime<Utc> = row.try_get("minute")?;
            let invocations: i64 = row.try_get("invocations")?;
            let failures: i64 = row.try_get("failures")?;
            let buckets: Vec<i64> = row.try_get("duration_buckets")?;
            match totals.last_mut() {
                Some(total) if total.minute == minute => {
                    total.invocations += invocations;
                    total.failures += failures;
                    shoal_domain::invocation_stats::add(&mut total.duration_buckets, &buckets);
                }
                _ => totals.push(MinuteTotal {
                    minute,
                    invocations,
                    failures,
                    duration_buckets: buckets,
                }),
            }
        }
        Ok(totals)
    })
    .await
}

/// A function's latest failed attempts, newest first.
pub async fn failures(
    tx: &mut Tx,
    tenant: &TenantId,
    app: &str,
    function: &str,
    limit: i64,
) -> Result<Vec<FailureRecord>, StoreError> {
    measured(Operation::InvocationsFailures, async move {
        sqlx::query(
            "select tenant_id, app_name, function_name, at, invocation_id, worker, duration_ms, error, logs
             from invocation_failures
             where tenant_id = $1 and app_name = $2 and function_name = $3
             order by id desc limit $4",
        )
        .bind(tenant.as_str())
        .bind(app)
        .bind(function)
        .bind(limit)
        .fetch_all(&mut **tx)
        .await?
        .iter()
        .map(|row| {
            let logs: serde_json::Value = row.try_get("logs")?;
            Ok(FailureRecord {
                tenant: row.try_get("tenant_id")?,
                app: row.try_get("app_name")?,
                function: row.try_get("function_name")?,
                at: row.try_get("at")?,
                invocation_id: row.try_get("invocation_id")?,
                worker: row.try_get("worker")?,
                duration_ms: row.try_get("duration_ms")?,
                error: row.try_get("error")?,
                logs: serde_json::from_value(logs)
                    .map_err(|e| StoreError::Corrupt(format!("invocation failure logs: {e}")))?,
            })
        })
        .collect()
    })
    .await
}
