//! App instances placed on workers, and the claims workers hold while acting on them
//! (platform scope).
//!
//! `assignments` is the scheduler's intent, rewritten by the leader each tick it changes and
//! stamped with the leader's epoch. `instance_claims` is what workers are doing: a worker takes
//! an instance's claim before its listeners start and gives it back after they have drained,
//! and takes a claim over only from a worker whose lease has lapsed. Triggers on both tables
//! notify [`crate::listen::ASSIGNMENTS`] so workers react at once (see migration 0004).

use sqlx::Row;

use crate::error::{Violation, on_violation};
use crate::metrics::{Operation, measured};
use crate::{StoreError, Tx};

/// One app instance on one worker.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AssignmentRecord {
    pub tenant: String,
    pub app: String,
    pub instance: u32,
    pub worker: String,
    pub epoch: i64,
}

/// An instance's identity, as claims name it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstanceKey {
    pub tenant: String,
    pub app: String,
    pub instance: u32,
}

fn from_row(row: &sqlx::postgres::PgRow) -> Result<AssignmentRecord, StoreError> {
    let instance: i32 = row.try_get("instance")?;
    Ok(AssignmentRecord {
        tenant: row.try_get("tenant_id")?,
        app: row.try_get("app_name")?,
        instance: u32::try_from(instance)
            .map_err(|_| StoreError::Corrupt(format!("instance index {instance}")))?,
        worker: row.try_get("worker")?,
        epoch: row.try_get("epoch")?,
    })
}

/// Every assignment, for the leader to start from when it takes over.
pub async fn all(tx: &mut Tx) -> Result<Vec<AssignmentRecord>, StoreError> {
    measured(Operation::AssignmentsAll, async move {
        let rows = sqlx::query(
            "select tenant_id, app_name, instance, worker, epoch from assignments
             order by tenant_id, app_name, instance",
        )
        .fetch_all(&mut **tx)
        .await?;
        rows.iter().map(from_row).collect()
    })
    .await
}

/// A worker's assignments with the current leader's epoch: the worker acts only on those whose
/// epoch equals it.
pub async fn of_worker(
    tx: &mut Tx,
    worker: &str,
) -> Result<(i64, Vec<AssignmentRecord>), StoreError> {
    measured(Operation::AssignmentsOfWorker, async move {
        let epoch: i64 = sqlx::query_scalar("select epoch from scheduler_lease where singleton")
            .fetch_one(&mut **tx)
            .await?;
        let rows = sqlx::query(
            "select tenant_id, app_name, instance, worker, epoch from assignments
             where worker = $1 order by tenant_id, app_name, instance",
        )
        .bind(worker)
        .fetch_all(&mut **tx)
        .await?;
        let assignments = rows.iter().map(from_row).collect::<Result<Vec<_>, _>>()?;
        Ok((epoch, assignments))
    })
    .await
}

/// The assignments of several workers, of any epoch, ordered by worker, tenant, app and
/// instance: one query for a page of the workers view rather than one per worker.
pub async fn of_workers(
    tx: &mut Tx,
    workers: &[String],
) -> Result<Vec<AssignmentRecord>, StoreError> {
    measured(Operation::AssignmentsOfWorkers, async move {
        if workers.is_empty() {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(
            "select tenant_id, app_name, instance, worker, epoch from assignments
             where worker = any($1) order by worker, tenant_id, app_name, instance",
        )
        .bind(workers)
        .fetch_all(&mut **tx)
        .await?;
        rows.iter().map(from_row).collect()
    })
    .await
}

/// Writes the leader's changes: `upserts` (new or moved instances) and `removals`, all stamped
/// with `epoch`. The caller has fenced the transaction.
pub async fn apply(
    tx: &mut Tx,
    epoch: i64,
    upserts: &[AssignmentRecord],
    removals: &[InstanceKey],
) -> Result<(), StoreError> {
    measured(Operation::AssignmentsApply, async move {
        if !removals.is_empty() {
            let (tenants, apps, instances) = columns(removals.iter());
            sqlx::query(
                "delete from assignments a using unnest($1::text[], $2::text[], $3::int[]) as r(t, n, i)
                 where a.tenant_id = r.t and a.app_name = r.n and a.instance = r.i",
            )
            .bind(tenants)
            .bind(apps)
            .bind(instances)
            .execute(&mut **tx)
            .await?;
        }
        if !upserts.is_empty() {
            let keys: Vec<InstanceKey> = upserts.iter().map(AssignmentRecord::key).collect();
            let (tenants, apps, instances) = columns(keys.iter());
            let workers: Vec<&str> = upserts.iter().map(|a| a.worker.as_str()).collect();
            sqlx::query(
                "insert into assignments (tenant_id, app_name, instance, worker, epoch)
                 select t, n, i, w, $5 from unnest($1::text[], $2::text[], $3::int[], $4::text[]) as u(t, n, i, w)
                 on conflict (tenant_id, app_name, instance) do update
                     set worker = excluded.worker, epoch = excluded.epoch, assigned_at = now()
                     where assignments.worker <> excluded.worker or assignments.epoch <> excluded.epoch",
            )
            .bind(tenants)
            .bind(apps)
            .bind(instances)
            .bind(workers)
            .bind(epoch)
            .execute(&mut **tx)
            .await
            .map_err(app_gone)?;
        }
        Ok(())
    })
    .await
}

/// Stamps every assignment with a new leader's epoch, confirming its predecessor's placement
/// for the workers (which ignore rows of older epochs).
pub async fn confirm_all(tx: &mut Tx, epoch: i64) -> Result<u64, StoreError> {
    measured(Operation::AssignmentsConfirmAll, async move {
        Ok(
            sqlx::query("update assignments set epoch = $1 where epoch <> $1")
                .bind(epoch)
                .execute(&mut **tx)
                .await?
                .rows_affected(),
        )
    })
    .await
}

/// Takes the claim on an instance for `worker`: succeeds if nobody holds it, `worker` already
/// does, or its holder's lease has lapsed (or the holder stopped).
pub async fn claim(tx: &mut Tx, key: &InstanceKey, worker: &str) -> Result<bool, StoreError> {
    measured(Operation::AssignmentsClaim, async move {
        let claimed = sqlx::query(
            "insert into instance_claims as c (tenant_id, app_name, instance, worker)
             values ($1, $2, $3, $4)
             on conflict (tenant_id, app_name, instance) do update
                 set worker = excluded.worker, claimed_at = now()
                 where c.worker = excluded.worker or not exists (
                     select from workers w where w.name = c.worker and w.state <> 'stopped'
                         and w.heartbeat_at + make_interval(secs => w.lease_ttl_ms / 1000.0) > now())
             returning worker",
        )
        .bind(&key.tenant)
        .bind(&key.app)
        .bind(instance_i32(key.instance))
        .bind(worker)
        .fetch_optional(&mut **tx)
        .await?;
        Ok(claimed.is_some())
    })
    .await
}

/// Gives an instance's claim back (only if `worker` still holds it).
pub async fn release(tx: &mut Tx, key: &InstanceKey, worker: &str) -> Result<(), StoreError> {
    measured(Operation::AssignmentsRelease, async move {
        sqlx::query(
            "delete from instance_claims
             where tenant_id = $1 and app_name = $2 and instance = $3 and worker = $4",
        )
        .bind(&key.tenant)
        .bind(&key.app)
        .bind(instance_i32(key.instance))
        .bind(worker)
        .execute(&mut **tx)
        .await?;
        Ok(())
    })
    .await
}

/// Gives back every claim of a worker (on start, for claims a previous run of the same name
/// left behind, and on shutdown after the drain).
pub async fn release_all(tx: &mut Tx, worker: &str) -> Result<(), StoreError> {
    measured(Operation::AssignmentsReleaseAll, async move {
        sqlx::query("delete from instance_claims where worker = $1")
            .bind(worker)
            .execute(&mut **tx)
            .await?;
        Ok(())
    })
    .await
}

impl AssignmentRecord {
    pub fn key(&self) -> InstanceKey {
        InstanceKey {
            tenant: self.tenant.clone(),
            app: self.app.clone(),
            instance: self.instance,
        }
    }
}

fn instance_i32(instance: u32) -> i32 {
    i32::try_from(instance).unwrap_or(i32::MAX)
}

fn columns<'a>(
    keys: impl Iterator<Item = &'a InstanceKey>,
) -> (Vec<&'a str>, Vec<&'a str>, Vec<i32>) {
    let mut tenants = Vec::new();
    let mut apps = Vec::new();
    let mut instances = Vec::new();
    for k in keys {
        tenants.push(k.tenant.as_str());
        apps.push(k.app.as_str());
        instances.push(instance_i32(k.instance));
    }
    (tenants, apps, instances)
}

/// An assignment for an app deleted since the leader read it: the tick is dropped and the next
/// one, reading the apps again, writes without it.
pub(crate) fn app_gone(err: sqlx::Error) -> StoreError {
    on_violation(err, Violation::ForeignKey, || {
        StoreError::Conflict("an app was deleted while its instances were placed".into())
    })
}
