//! The worker registry (platform scope): one row per worker name, rewritten by each heartbeat
//! with the worker's state, its limits and listener statistics. A worker whose heartbeat is
//! older than the lease TTL it wrote is dead (the scheduler moves its instances), judged on the
//! database's clock.

use std::time::Duration;

use chrono::{DateTime, Utc};
use shoal_domain::workers::{ListenerReport, WorkerState};
use sqlx::Row;

use crate::metrics::{Operation, measured};
use crate::page::{Page, PageRequest};
use crate::{StoreError, TenantId, Tx};

#[derive(Debug, Clone, PartialEq)]
pub struct WorkerRecord {
    pub name: String,
    pub state: WorkerState,
    pub version: String,
    pub started_at: DateTime<Utc>,
    pub heartbeat_at: DateTime<Utc>,
    pub listeners: Vec<ListenerReport>,
    /// Most app instances the scheduler may place on it.
    pub capacity: u32,
    /// How long after its last heartbeat the worker counts as dead.
    pub lease_ttl: Duration,
    /// Its lease is current and it has not stopped.
    pub alive: bool,
}

/// A worker the scheduler may place instances on: alive and running (not draining).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveWorker {
    pub name: String,
    pub capacity: u32,
    /// Messages one of its listeners holds unacknowledged at once; None when it reports none.
    pub hold_limit: Option<u16>,
}

/// What a heartbeat writes.
#[derive(Debug, Clone)]
pub struct Heartbeat<'a> {
    pub name: &'a str,
    pub state: WorkerState,
    pub version: &'a str,
    pub started_at: DateTime<Utc>,
    pub listeners: &'a [ListenerReport],
    pub capacity: u32,
    pub lease_ttl: Duration,
    /// Messages one of its listeners holds unacknowledged at once (what its held-bytes limit
    /// holds of its largest messages); None reports no limit.
    pub hold_limit: Option<u16>,
}

/// Registers the worker or records its heartbeat (the database's clock stamps it, so workers
/// with skewed clocks are judged alike).
pub async fn heartbeat(tx: &mut Tx, beat: &Heartbeat<'_>) -> Result<(), StoreError> {
    measured(Operation::WorkersHeartbeat, async move {
        let listeners = serde_json::to_value(beat.listeners)
            .map_err(|e| StoreError::Corrupt(format!("listener statistics: {e}")))?;
        sqlx::query(
            "insert into workers (name, state, version, started_at, heartbeat_at, listeners, capacity, lease_ttl_ms,
                 listener_hold_limit)
             values ($1, $2, $3, $4, now(), $5, $6, $7, $8)
             on conflict (name) do update set state = excluded.state, version = excluded.version,
                 started_at = excluded.started_at, heartbeat_at = now(), listeners = excluded.listeners,
                 capacity = excluded.capacity, lease_ttl_ms = excluded.lease_ttl_ms,
                 listener_hold_limit = excluded.listener_hold_limit",
        )
        .bind(beat.name)
        .bind(beat.state.as_str())
        .bind(beat.version)
        .bind(beat.started_at)
        .bind(listeners)
        .bind(i32::try_from(beat.capacity).unwrap_or(i32::MAX))
        .bind(i32::try_from(beat.lease_ttl.as_millis()).unwrap_or(i32::MAX).max(1))
        .bind(beat.hold_limit.map(|l| i32::from(l.max(1))))
        .execute(&mut **tx)
        .await?;
        Ok(())
    })
    .await
}

pub async fn list(tx: &mut Tx, page: &PageRequest) -> Result<Page<WorkerRecord>, StoreError> {
    measured(Operation::WorkersList, async move {
        let rows = sqlx::query(
            "select name, state, version, started_at, heartbeat_at, listeners, capacity, lease_ttl_ms,
                 state <> 'stopped' and heartbeat_at + make_interval(secs => lease_ttl_ms / 1000.0) > now() as alive
             from workers where ($1::text is null or name > $1) order by name limit $2",
        )
        .bind(page.after.as_deref())
        .bind(i64::from(page.limit) + 1)
        .fetch_all(&mut **tx)
        .await?;
        let items = rows.iter().map(from_row).collect::<Result<Vec<_>, _>>()?;
        Ok(Page::from_rows(items, page.limit, |w| &w.name))
    })
    .await
}

/// The workers instances may be placed on: running, with a current lease.
pub async fn live(tx: &mut Tx) -> Result<Vec<LiveWorker>, StoreError> {
    measured(Operation::WorkersLive, async move {
        let rows = sqlx::query(
            "select name, capacity, listener_hold_limit from workers
             where state = 'running' and heartbeat_at + make_interval(secs => lease_ttl_ms / 1000.0) > now()
             order by name",
        )
        .fetch_all(&mut **tx)
        .await?;
        rows.iter()
            .map(|r| {
                let capacity: i32 = r.try_get("capacity")?;
                let hold_limit: Option<i32> = r.try_get("listener_hold_limit")?;
                Ok(LiveWorker {
                    name: r.try_get("name")?,
                    capacity: u32::try_from(capacity).unwrap_or(0),
                    // The column's check keeps it within 1..=65535.
                    hold_limit: hold_limit.and_then(|l| u16::try_from(l).ok()),
                })
            })
            .collect()
    })
    .await
}

/// The listener statistics of every live worker (for scaling on visible messages only).
pub async fn live_listeners(tx: &mut Tx) -> Result<Vec<ListenerReport>, StoreError> {
    measured(Operation::WorkersLiveListeners, async move {
        let rows: Vec<serde_json::Value> = sqlx::query_scalar(
            "select listeners from workers
             where state <> 'stopped' and heartbeat_at + make_interval(secs => lease_ttl_ms / 1000.0) > now()",
        )
        .fetch_all(&mut **tx)
        .await?;
        let mut reports = Vec::new();
        for listeners in rows {
            let batch: Vec<ListenerReport> = serde_json::from_value(listeners)
                .map_err(|e| StoreError::Corrupt(format!("listener statistics: {e}")))?;
            reports.extend(batch);
        }
        Ok(reports)
    })
    .await
}

/// The listener statistics the live workers report for one app of one tenant (for its
/// diagnostics). The registry is platform scoped, so the tenant is filtered here.
pub async fn live_listeners_of_app(
    tx: &mut Tx,
    tenant: &TenantId,
    app: &str,
) -> Result<Vec<ListenerReport>, StoreError> {
    measured(Operation::WorkersLiveListenersOfApp, async move {
        let mut reports = live_listeners(tx).await?;
        reports.retain(|r| r.tenant == tenant.as_str() && r.app.eq_ignore_ascii_case(app));
        Ok(reports)
    })
    .await
}

/// Forgets workers that stopped or went silent more than `after` ago, so the registry does not
/// grow with every worker that ever ran.
pub async fn prune(tx: &mut Tx, after: Duration) -> Result<u64, StoreError> {
    measured(Operation::WorkersPrune, async move {
        Ok(sqlx::query(
            "delete from workers
             where heartbeat_at + make_interval(secs => lease_ttl_ms / 1000.0)
                 + make_interval(secs => $1::double precision) < now()",
        )
        .bind(after.as_secs_f64())
        .execute(&mut **tx)
        .await?
        .rows_affected())
    })
    .await
}

/// The database's clock, to judge heartbeats against the same clock that stamped them.
pub async fn now(tx: &mut Tx) -> Result<DateTime<Utc>, StoreError> {
    measured(Operation::WorkersNow, async move {
        Ok(sqlx::query_scalar("select now()")
            .fetch_one(&mut **tx)
            .await?)
    })
    .await
}

fn from_row(row: &sqlx::postgres::PgRow) -> Result<WorkerRecord, StoreError> {
    let state: String = row.try_get("state")?;
    let listeners: serde_json::Value = row.try_get("listeners")?;
    let capacity: i32 = row.try_get("capacity")?;
    let lease_ttl_ms: i32 = row.try_get("lease_ttl_ms")?;
    Ok(WorkerRecord {
        state: WorkerState::parse(&state)
            .ok_or_else(|| StoreError::Corrupt(format!("worker state {state:?}")))?,
        listeners: serde_json::from_value(listeners)
            .map_err(|e| StoreError::Corrupt(format!("listener statistics: {e}")))?,
        name: row.try_get("name")?,
        version: row.try_get("version")?,
        started_at: row.try_get("started_at")?,
        heartbeat_at: row.try_get("heartbeat_at")?,
        capacity: u32::try_from(capacity).unwrap_or(0),
        lease_ttl: Duration::from_millis(u64::try_from(lease_ttl_ms).unwrap_or(0)),
        alive: row.try_get("alive")?,
    })
}
