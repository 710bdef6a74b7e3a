//! The scheduler's leader lease (platform scope): one row naming the holder, its epoch and when
//! the lease lapses, all judged by the database's clock.
//!
//! The epoch rises by one whenever leadership changes hands and never otherwise, so it works as
//! a fencing token: [`fence`] locks the row and checks the caller still holds the epoch it
//! acquired, and a standby's takeover waits for that lock, so a deposed leader's write fails
//! instead of landing after its successor's.

use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::Row;

use crate::metrics::{Operation, measured};
use crate::{StoreError, Tx};

/// A lease held by the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    pub epoch: i64,
    pub expires_at: DateTime<Utc>,
}

/// The lease as any reader sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseState {
    pub holder: Option<String>,
    pub epoch: i64,
    pub expires_at: DateTime<Utc>,
    /// The database's clock when this was read.
    pub now: DateTime<Utc>,
}

impl LeaseState {
    /// How long until the lease lapses (zero when it has), on the database's clock.
    pub fn remaining(&self) -> Duration {
        (self.expires_at - self.now).to_std().unwrap_or_default()
    }
}

fn ttl_ms(ttl: Duration) -> i64 {
    i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX)
}

/// Extends the caller's lease, or takes it over with the next epoch if it has lapsed (or was
/// released). None when another holder's lease is still running.
pub async fn acquire_or_renew(
    tx: &mut Tx,
    holder: &str,
    ttl: Duration,
) -> Result<Option<Lease>, StoreError> {
    measured(Operation::LeadershipAcquireOrRenew, async move {
        let row = sqlx::query(
            "update scheduler_lease
             set epoch = case when holder = $1 and expires_at > now() then epoch else epoch + 1 end,
                 acquired_at = case when holder = $1 and expires_at > now() then acquired_at else now() end,
                 holder = $1,
                 expires_at = now() + make_interval(secs => $2::double precision / 1000)
             where singleton and (expires_at <= now() or holder = $1)
             returning epoch, expires_at",
        )
        .bind(holder)
        .bind(ttl_ms(ttl) as f64)
        .fetch_optional(&mut **tx)
        .await?;
        row.map(|r| -> Result<Lease, StoreError> {
            Ok(Lease {
                epoch: r.try_get("epoch")?,
                expires_at: r.try_get("expires_at")?,
            })
        })
        .transpose()
    })
    .await
}

/// Gives the lease up at once so a standby need not wait for it to lapse (on shutdown).
pub async fn release(tx: &mut Tx, holder: &str, epoch: i64) -> Result<(), StoreError> {
    measured(Operation::LeadershipRelease, async move {
        sqlx::query(
            "update scheduler_lease set expires_at = now()
             where singleton and holder = $1 and epoch = $2 and expires_at > now()",
        )
        .bind(holder)
        .bind(epoch)
        .execute(&mut **tx)
        .await?;
        Ok(())
    })
    .await
}

pub async fn current(tx: &mut Tx) -> Result<LeaseState, StoreError> {
    measured(Operation::LeadershipCurrent, async move {
        let row = sqlx::query(
            "select holder, epoch, expires_at, now() as now from scheduler_lease where singleton",
        )
        .fetch_one(&mut **tx)
        .await?;
        Ok(LeaseState {
            holder: row.try_get("holder")?,
            epoch: row.try_get("epoch")?,
            expires_at: row.try_get("expires_at")?,
            now: row.try_get("now")?,
        })
    })
    .await
}

/// Locks the lease row for the rest of the transaction and checks the caller still leads with
/// `epoch`; [`StoreError::Fenced`] otherwise. Call it first in every write a leader makes.
pub async fn fence(tx: &mut Tx, holder: &str, epoch: i64) -> Result<(), StoreError> {
    measured(Operation::LeadershipFence, async move {
        let held: Option<i64> = sqlx::query_scalar(
            "select epoch from scheduler_lease
             where singleton and holder = $1 and epoch = $2 and expires_at > clock_timestamp()
             for update",
        )
        .bind(holder)
        .bind(epoch)
        .fetch_optional(&mut **tx)
        .await?;
        match held {
            Some(_) => Ok(()),
            None => Err(StoreError::Fenced { epoch }),
        }
    })
    .await
}
