//! The worker registry (platform scope): one row per worker name, rewritten by each heartbeat
//! with the worker's state and listener statistics. A worker whose heartbeat is older than the
//! liveness window is considered dead (the scheduler moves its instances).

use chrono::{DateTime, Utc};
use shoal_domain::workers::{ListenerReport, WorkerState};
use sqlx::Row;

use crate::page::{Page, PageRequest};
use crate::{StoreError, Tx};

#[derive(Debug, Clone, PartialEq)]
pub struct WorkerRecord {
    pub name: String,
    pub state: WorkerState,
    pub version: String,
    pub started_at: DateTime<Utc>,
    pub heartbeat_at: DateTime<Utc>,
    pub listeners: Vec<ListenerReport>,
}

/// What a heartbeat writes.
#[derive(Debug, Clone)]
pub struct Heartbeat<'a> {
    pub name: &'a str,
    pub state: WorkerState,
    pub version: &'a str,
    pub started_at: DateTime<Utc>,
    pub listeners: &'a [ListenerReport],
}

/// Registers the worker or records its heartbeat (the database's clock stamps it, so workers
/// with skewed clocks are judged alike).
pub async fn heartbeat(tx: &mut Tx, beat: &Heartbeat<'_>) -> Result<(), StoreError> {
    let listeners = serde_json::to_value(beat.listeners)
        .map_err(|e| StoreError::Corrupt(format!("listener statistics: {e}")))?;
    sqlx::query(
        "insert into workers (name, state, version, started_at, heartbeat_at, listeners)
         values ($1, $2, $3, $4, now(), $5)
         on conflict (name) do update set state = excluded.state, version = excluded.version,
             started_at = excluded.started_at, heartbeat_at = now(), listeners = excluded.listeners",
    )
    .bind(beat.name)
    .bind(beat.state.as_str())
    .bind(beat.version)
    .bind(beat.started_at)
    .bind(listeners)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub async fn list(tx: &mut Tx, page: &PageRequest) -> Result<Page<WorkerRecord>, StoreError> {
    let rows = sqlx::query(
        "select name, state, version, started_at, heartbeat_at, listeners from workers
         where ($1::text is null or name > $1) order by name limit $2",
    )
    .bind(page.after.as_deref())
    .bind(i64::from(page.limit) + 1)
    .fetch_all(&mut **tx)
    .await?;
    let items = rows.iter().map(from_row).collect::<Result<Vec<_>, _>>()?;
    Ok(Page::from_rows(items, page.limit, |w| &w.name))
}

/// The database's clock, to judge heartbeats against the same clock that stamped them.
pub async fn now(tx: &mut Tx) -> Result<DateTime<Utc>, StoreError> {
    Ok(sqlx::query_scalar("select now()")
        .fetch_one(&mut **tx)
        .await?)
}

fn from_row(row: &sqlx::postgres::PgRow) -> Result<WorkerRecord, StoreError> {
    let state: String = row.try_get("state")?;
    let listeners: serde_json::Value = row.try_get("listeners")?;
    Ok(WorkerRecord {
        state: WorkerState::parse(&state)
            .ok_or_else(|| StoreError::Corrupt(format!("worker state {state:?}")))?,
        listeners: serde_json::from_value(listeners)
            .map_err(|e| StoreError::Corrupt(format!("listener statistics: {e}")))?,
        name: row.try_get("name")?,
        version: row.try_get("version")?,
        started_at: row.try_get("started_at")?,
        heartbeat_at: row.try_get("heartbeat_at")?,
    })
}
