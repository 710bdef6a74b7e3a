//! Scale state (platform-written, tenant-read): each app's desired instances and the decisions
//! that changed them, with their inputs and reason.
//!
//! The leader writes these in its fenced tick transaction. The API reads them per tenant
//! through [`status`], which takes a [`TenantId`] like every tenant-facing read.

use chrono::{DateTime, Utc};
use sqlx::Row;

use crate::assignments::app_gone;
use crate::metrics::{Operation, measured};
use crate::{StoreError, TenantId, Tx};

/// How many decisions are kept per app; older ones are deleted as new ones arrive.
pub const KEPT_DECISIONS: i64 = 50;

/// An app's latest desired instance count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesiredRecord {
    pub tenant: String,
    pub app: String,
    pub desired: u32,
    pub mode: String,
}

/// A decision that changed an app's desired instances.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionRecord {
    pub tenant: String,
    pub app: String,
    pub at: DateTime<Utc>,
    pub from: u32,
    pub to: u32,
    pub mode: String,
    pub reason: String,
    /// The decision's inputs: the per-function metrics, targets and votes.
    pub metrics: serde_json::Value,
    pub epoch: i64,
}

/// What `GET …/apps/{app}/scale` shows.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaleStatus {
    pub desired: Option<DesiredRecord>,
    /// Why fewer instances are placed than desired, as the leader last placed them.
    pub waiting: Option<String>,
    /// `(instance, worker)`, by instance.
    pub placement: Vec<(u32, String)>,
    /// Newest first.
    pub decisions: Vec<DecisionRecord>,
}

/// Every app's desired count, for a new leader to start from.
pub async fn all_desired(tx: &mut Tx) -> Result<Vec<DesiredRecord>, StoreError> {
    measured(Operation::ScaleAllDesired, async move {
        let rows = sqlx::query("select tenant_id, app_name, desired, mode from app_scale")
            .fetch_all(&mut **tx)
            .await?;
        rows.iter().map(desired_from_row).collect()
    })
    .await
}

/// Records decisions: updates each app's desired count and appends the decision (see
/// [`prune_decisions`]). The caller has fenced the transaction.
pub async fn record(tx: &mut Tx, decisions: &[DecisionRecord]) -> Result<(), StoreError> {
    measured(Operation::ScaleRecord, async move {
        if decisions.is_empty() {
            return Ok(());
        }
        let tenants: Vec<&str> = decisions.iter().map(|d| d.tenant.as_str()).collect();
        let apps: Vec<&str> = decisions.iter().map(|d| d.app.as_str()).collect();
        let from: Vec<i32> = decisions.iter().map(|d| count_i32(d.from)).collect();
        let to: Vec<i32> = decisions.iter().map(|d| count_i32(d.to)).collect();
        let modes: Vec<&str> = decisions.iter().map(|d| d.mode.as_str()).collect();
        let reasons: Vec<&str> = decisions.iter().map(|d| d.reason.as_str()).collect();
        let metrics: Vec<serde_json::Value> = decisions.iter().map(|d| d.metrics.clone()).collect();
        let epochs: Vec<i64> = decisions.iter().map(|d| d.epoch).collect();
        sqlx::query(
            "insert into app_scale (tenant_id, app_name, desired, mode, decided_at)
             select t, n, d, m, now() from unnest($1::text[], $2::text[], $3::int[], $4::text[]) as u(t, n, d, m)
             on conflict (tenant_id, app_name) do update
                 set desired = excluded.desired, mode = excluded.mode, decided_at = now()",
        )
        .bind(&tenants)
        .bind(&apps)
        .bind(&to)
        .bind(&modes)
        .execute(&mut **tx)
        .await
        .map_err(app_gone)?;
        sqlx::query(
            "insert into scale_decisions (tenant_id, app_name, from_count, to_count, mode, reason, metrics, epoch)
             select * from unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::text[], $6::text[], $7::jsonb[], $8::bigint[])",
        )
        .bind(&tenants)
        .bind(&apps)
        .bind(&from)
        .bind(&to)
        .bind(&modes)
        .bind(&reasons)
        .bind(&metrics)
        .bind(&epochs)
        .execute(&mut **tx)
        .await
        .map_err(app_gone)?;
        Ok(())
    })
    .await
}

/// Sets why each listed app waits for instances (`None`: it no longer waits). Apps without a
/// desired count yet are skipped. The caller has fenced the transaction.
pub async fn set_waiting(
    tx: &mut Tx,
    waiting: &[(String, String, Option<String>)],
) -> Result<(), StoreError> {
    measured(Operation::ScaleSetWaiting, async move {
        if waiting.is_empty() {
            return Ok(());
        }
        let tenants: Vec<&str> = waiting.iter().map(|w| w.0.as_str()).collect();
        let apps: Vec<&str> = waiting.iter().map(|w| w.1.as_str()).collect();
        let why: Vec<Option<&str>> = waiting.iter().map(|w| w.2.as_deref()).collect();
        sqlx::query(
            "update app_scale s set waiting = u.w
             from unnest($1::text[], $2::text[], $3::text[]) as u(t, n, w)
             where s.tenant_id = u.t and s.app_name = u.n",
        )
        .bind(&tenants)
        .bind(&apps)
        .bind(&why)
        .execute(&mut **tx)
        .await?;
        Ok(())
    })
    .await
}

/// Forgets every app's waiting reason: a new leader writes its own from its first placement.
pub async fn clear_waiting(tx: &mut Tx) -> Result<u64, StoreError> {
    measured(Operation::ScaleSetWaiting, async move {
        Ok(
            sqlx::query("update app_scale set waiting = null where waiting is not null")
                .execute(&mut **tx)
                .await?
                .rows_affected(),
        )
    })
    .await
}

/// Deletes all but the newest [`KEPT_DECISIONS`] of every app's decisions. The leader runs it
/// now and then rather than with every write, so a tick that changes many apps stays cheap.
pub async fn prune_decisions(tx: &mut Tx) -> Result<u64, StoreError> {
    measured(Operation::ScalePruneDecisions, async move {
        Ok(sqlx::query(
            "delete from scale_decisions where id in (
                 select id from (
                     select id, row_number() over (partition by tenant_id, app_name order by id desc) as n
                     from scale_decisions) ranked
                 where n > $1)",
        )
        .bind(KEPT_DECISIONS)
        .execute(&mut **tx)
        .await?
        .rows_affected())
    })
    .await
}

/// An app's scale status: desired count, placement and the `decisions` newest ones.
pub async fn status(
    tx: &mut Tx,
    tenant: &TenantId,
    app: &str,
    decisions: i64,
) -> Result<ScaleStatus, StoreError> {
    measured(Operation::ScaleStatus, async move {
        let row = sqlx::query(
            "select tenant_id, app_name, desired, mode, waiting from app_scale
             where tenant_id = $1 and app_name = $2",
        )
        .bind(tenant.as_str())
        .bind(app)
        .fetch_optional(&mut **tx)
        .await?;
        let desired = row.as_ref().map(desired_from_row).transpose()?;
        let waiting: Option<String> = match &row {
            Some(row) => row.try_get("waiting")?,
            None => None,
        };
        let placement = sqlx::query(
            "select instance, worker from assignments where tenant_id = $1 and app_name = $2
             order by instance",
        )
        .bind(tenant.as_str())
        .bind(app)
        .fetch_all(&mut **tx)
        .await?
        .iter()
        .map(|r| -> Result<(u32, String), StoreError> {
            let instance: i32 = r.try_get("instance")?;
            Ok((count_u32(instance)?, r.try_get("worker")?))
        })
        .collect::<Result<Vec<_>, _>>()?;
        let decisions = sqlx::query(
            "select tenant_id, app_name, at, from_count, to_count, mode, reason, metrics, epoch
             from scale_decisions where tenant_id = $1 and app_name = $2 order by id desc limit $3",
        )
        .bind(tenant.as_str())
        .bind(app)
        .bind(decisions)
        .fetch_all(&mut **tx)
        .await?
        .iter()
        .map(decision_from_row)
        .collect::<Result<Vec<_>, _>>()?;
        Ok(ScaleStatus {
            desired,
            waiting,
            placement,
            decisions,
        })
    })
    .await
}

/// An app's instances as the apps list shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InstanceCounts {
    /// The scheduler's latest decision; 0 until it has decided for the app.
    pub desired: u32,
    /// Instances placed on workers now.
    pub placed: u32,
}

/// The instance counts of some apps of a tenant, by app name (apps the scheduler has neither
/// decided for nor placed are absent): one query for a page of the apps list, where
/// [`status`] would be one per app.
pub async fn instances_of_apps(
    tx: &mut Tx,
    tenant: &TenantId,
    apps: &[String],
) -> Result<std::collections::HashMap<String, InstanceCounts>, StoreError> {
    measured(Operation::ScaleInstancesOfApps, async move {
        let rows = sqlx::query(
            "select app_name, max(desired) as desired, max(placed) as placed from (
                 select app_name, desired, 0::bigint as placed from app_scale
                 where tenant_id = $1 and app_name = any($2)
                 union all
                 select app_name, 0, count(*) from assignments
                 where tenant_id = $1 and app_name = any($2) group by app_name
             ) counts group by app_name",
        )
        .bind(tenant.as_str())
        .bind(apps)
        .fetch_all(&mut **tx)
        .await?;
        rows.iter()
            .map(|row| {
                let placed: i64 = row.try_get("placed")?;
                Ok((
                    row.try_get("app_name")?,
                    InstanceCounts {
                        desired: count_u32(row.try_get("desired")?)?,
                        placed: u32::try_from(placed).unwrap_or(u32::MAX),
                    },
                ))
            })
            .collect()
    })
    .await
}

fn desired_from_row(row: &sqlx::postgres::PgRow) -> Result<DesiredRecord, StoreError> {
    Ok(DesiredRecord {
        tenant: row.try_get("tenant_id")?,
        app: row.try_get("app_name")?,
        desired: count_u32(row.try_get("desired")?)?,
        mode: row.try_get("mode")?,
    })
}

fn decision_from_row(row: &sqlx::postgres::PgRow) -> Result<DecisionRecord, StoreError> {
    Ok(DecisionRecord {
        tenant: row.try_get("tenant_id")?,
        app: row.try_get("app_name")?,
        at: row.try_get("at")?,
        from: count_u32(row.try_get("from_count")?)?,
        to: count_u32(row.try_get("to_count")?)?,
        mode: row.try_get("mode")?,
        reason: row.try_get("reason")?,
        metrics: row.try_get("metrics")?,
        epoch: row.try_get("epoch")?,
    })
}

pub(crate) fn count_i32(count: u32) -> i32 {
    i32::try_from(count).unwrap_or(i32::MAX)
}

pub(crate) fn count_u32(count: i32) -> Result<u32, StoreError> {
    u32::try_from(count).map_err(|_| StoreError::Corrupt(format!("instance count {count}")))
}
