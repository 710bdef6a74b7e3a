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
use crate::tenant::act_for;
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
/// failures of every function (by when they failed, as [`failures`] reads them). Returns the
/// rows deleted.
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
                         partition by tenant_id, app_name, function_name order by at desc, id desc) as n
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

/// A function's minutes from `first` to `last` (minute starts), oldest first, all workers
/// added up, with every minute of the range present: one without attempts has zero counts and
/// no buckets, so a chart of it shows the idle minutes rather than joining the busy ones. A
/// worker whose clock runs ahead may have written a minute after `last`: the series then runs
/// on to it rather than hiding what was recorded.
pub async fn minutes(
    tx: &mut Tx,
    tenant: &TenantId,
    app: &str,
    function: &str,
    first: DateTime<Utc>,
    last: DateTime<Utc>,
) -> Result<Vec<MinuteTotal>, StoreError> {
    measured(Operation::InvocationsMinutes, async move {
        let rows = sqlx::query(
            "select minute, invocations, failures, duration_buckets from invocation_minutes
             where tenant_id = $1 and app_name = $2 and function_name = $3 and minute >= $4
             order by minute, worker",
        )
        .bind(tenant.as_str())
        .bind(app)
        .bind(function)
        .bind(first)
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
        Ok(zero_filled(totals, first, last))
    })
    .await
}

/// `totals` (oldest first, minute starts) with a zero minute wherever `first..=last` has none;
/// minutes after `last` are kept after it.
pub fn zero_filled(
    totals: Vec<MinuteTotal>,
    first: DateTime<Utc>,
    last: DateTime<Utc>,
) -> Vec<MinuteTotal> {
    let step = chrono::TimeDelta::minutes(1);
    let end = totals.last().map_or(last, |t| t.minute.max(last));
    let mut filled = Vec::new();
    let mut recorded = totals.into_iter().peekable();
    let mut minute = first;
    while minute <= end {
        // A row off the minute grid (never written so) is kept in order, not lost.
        while let Some(total) = recorded.next_if(|t| t.minute < minute) {
            filled.push(total);
        }
        match recorded.next_if(|t| t.minute == minute) {
            Some(total) => filled.push(total),
            None => filled.push(MinuteTotal {
                minute,
                invocations: 0,
                failures: 0,
                duration_buckets: Vec::new(),
            }),
        }
        minute += step;
    }
    filled.extend(recorded);
    filled
}

/// A function's latest failed attempts, newest first by when they failed. Not by row id:
/// each worker writes what it gathered every few seconds, so one worker's batch can land after
/// another's later failures.
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
             order by at desc, id desc limit $4",
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

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn at(minute: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 24, 10, minute, 0).unwrap()
    }

    fn total(minute: u32, invocations: i64) -> MinuteTotal {
        MinuteTotal {
            minute: at(minute),
            invocations,
            failures: 0,
            duration_buckets: vec![invocations],
        }
    }

    #[test]
    fn every_minute_of_the_range_is_present_and_idle_ones_are_zero() {
        // (recorded minutes with their counts, first, last) → every minute's count
        // (minute, invocations) pairs.
        type Counts = &'static [(u32, i64)];
        let cases: [(Counts, u32, u32, Counts); 5] = [
            (&[], 0, 2, &[(0, 0), (1, 0), (2, 0)]),
            (&[(1, 39)], 0, 3, &[(0, 0), (1, 39), (2, 0), (3, 0)]),
            (
                &[(0, 39), (4, 500)],
                0,
                4,
                &[(0, 39), (1, 0), (2, 0), (3, 0), (4, 500)],
            ),
            (&[(2, 7)], 2, 2, &[(2, 7)]),
            // A worker's clock ahead of the reader's: its minute is kept, the gap filled.
            (&[(1, 1), (4, 2)], 1, 2, &[(1, 1), (2, 0), (3, 0), (4, 2)]),
        ];
        for (recorded, first, last, expected) in cases {
            let totals = recorded.iter().map(|&(m, n)| total(m, n)).collect();
            let filled = zero_filled(totals, at(first), at(last));
            let got: Vec<(DateTime<Utc>, i64)> =
                filled.iter().map(|t| (t.minute, t.invocations)).collect();
            let want: Vec<(DateTime<Utc>, i64)> =
                expected.iter().map(|&(m, n)| (at(m), n)).collect();
            assert_eq!(got, want, "{recorded:?} from {first} to {last}");
            for t in filled.iter().filter(|t| t.invocations == 0) {
                assert!(t.duration_buckets.is_empty() && t.failures == 0);
            }
        }
    }

    #[test]
    fn a_minute_off_the_grid_is_kept_in_order() {
        let odd = MinuteTotal {
            minute: at(1) + chrono::TimeDelta::seconds(30),
            ..total(1, 5)
        };
        let filled = zero_filled(vec![odd.clone()], at(0), at(2));
        let minutes: Vec<DateTime<Utc>> = filled.iter().map(|t| t.minute).collect();
        assert_eq!(minutes, vec![at(0), at(1), odd.minute, at(2)]);
    }
}
