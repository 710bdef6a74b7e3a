//! Scale samples (platform-written, tenant-read): what the scheduler saw of each app every
//! [`SAMPLE_INTERVAL`] — the summed trigger metric, the desired and the placed instances — kept
//! for [`KEPT_FOR`], so a chart can show the last hour and not only the decisions (which are
//! recorded when the desired count changes).
//!
//! The leader writes them in its fenced tick transaction, one row per app per interval, and
//! prunes by age now and then; the API reads them per tenant like every tenant-facing read.

use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::Row;

use crate::assignments::app_gone;
use crate::metrics::{Operation, measured};
use crate::scale::{count_i32, count_u32};
use crate::{StoreError, TenantId, Tx};

/// How often the leader records a sample of every app.
pub const SAMPLE_INTERVAL: Duration = Duration::from_secs(10);
/// How long samples are kept.
pub const KEPT_FOR: Duration = Duration::from_secs(3600);

/// One app's sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleRecord {
    pub tenant: String,
    pub app: String,
    /// Set by the database on write.
    pub at: DateTime<Utc>,
    /// The sum of the trigger functions' latest readings; None when none could be read.
    pub metric: Option<i64>,
    pub desired: u32,
    pub placed: u32,
}

/// Appends one sample per app. The caller has fenced the transaction.
pub async fn record(tx: &mut Tx, samples: &[SampleRecord]) -> Result<(), StoreError> {
    measured(Operation::ScaleSamplesRecord, async move {
        if samples.is_empty() {
            return Ok(());
        }
        let tenants: Vec<&str> = samples.iter().map(|s| s.tenant.as_str()).collect();
        let apps: Vec<&str> = samples.iter().map(|s| s.app.as_str()).collect();
        let metrics: Vec<Option<i64>> = samples.iter().map(|s| s.metric).collect();
        let desired: Vec<i32> = samples.iter().map(|s| count_i32(s.desired)).collect();
        let placed: Vec<i32> = samples.iter().map(|s| count_i32(s.placed)).collect();
        sqlx::query(
            "insert into scale_samples (tenant_id, app_name, metric, desired, placed)
             select * from unnest($1::text[], $2::text[], $3::bigint[], $4::int[], $5::int[])
             on conflict do nothing",
        )
        .bind(&tenants)
        .bind(&apps)
        .bind(&metrics)
        .bind(&desired)
        .bind(&placed)
        .execute(&mut **tx)
        .await
        .map_err(app_gone)?;
        Ok(())
    })
    .await
}

/// Deletes samples older than [`KEPT_FOR`].
pub async fn prune(tx: &mut Tx) -> Result<u64, StoreError> {
    measured(Operation::ScaleSamplesPrune, async move {
        Ok(
            sqlx::query("delete from scale_samples where at < now() - $1::double precision * interval '1 second'")
                .bind(KEPT_FOR.as_secs_f64())
                .execute(&mut **tx)
                .await?
                .rows_affected(),
        )
    })
    .await
}

/// An app's samples of the last `window` (at most [`KEPT_FOR`]), oldest first.
pub async fn of_app(
    tx: &mut Tx,
    tenant: &TenantId,
    app: &str,
    window: Duration,
) -> Result<Vec<SampleRecord>, StoreError> {
    measured(Operation::ScaleSamplesOfApp, async move {
        sqlx::query(
            "select tenant_id, app_name, at, metric, desired, placed from scale_samples
             where tenant_id = $1 and app_name = $2
               and at >= now() - $3::double precision * interval '1 second'
             order by at",
        )
        .bind(tenant.as_str())
        .bind(app)
        .bind(window.min(KEPT_FOR).as_secs_f64())
        .fetch_all(&mut **tx)
        .await?
        .iter()
        .map(|row| {
            Ok(SampleRecord {
                tenant: row.try_get("tenant_id")?,
                app: row.try_get("app_name")?,
                at: row.try_get("at")?,
                metric: row.try_get("metric")?,
                desired: count_u32(row.try_get("desired")?)?,
                placed: count_u32(row.try_get("placed")?)?,
            })
        })
        .collect()
    })
    .await
}
