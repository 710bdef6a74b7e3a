//! Where each timer-triggered function's schedule stands (migration 0019): Azure's
//! `ScheduleStatus` kept in Postgres, shared by every worker hosting the function, and the
//! compare-and-set that makes one worker, and only one, fire each occurrence.
//!
//! Azure keeps the status in a blob and fires from one host through a singleton lock
//! (`Listeners/TimerListener.cs`, `Scheduling/StorageScheduleMonitor.cs` in
//! azure-webjobs-sdk-extensions' `Extensions/Timers`). Here a worker moves the status on
//! ([`advance`]) from the one it read to the one after the invocation it is about to make: the
//! worker whose update finds the status as it read it fires, any other finds it moved and
//! fires nothing. Only a worker holding a claim on one of the app's instances under a lease the
//! database still counts live may move it, so a worker that was paused or cut off while the
//! instance moved to another cannot fire when it wakes.

use chrono::{DateTime, Utc};
use shoal_domain::timer_trigger::ScheduleStatus;
use sqlx::Row;

use crate::breakers::FunctionRef;
use crate::metrics::{Operation, measured};
use crate::{StoreError, Tx};

/// The condition that worker `$4` holds a claim on one of app `$1`/`$2`'s instances under a
/// lease the database counts live; true without a worker (`$4` null: a worker hosting every app
/// by itself, with no scheduler and no claims).
macro_rules! holds_instance {
    () => {
        "($4::text is null or exists (
             select from instance_claims c join workers w on w.name = c.worker
             where c.tenant_id = $1 and c.app_name = $2 and c.worker = $4
               and w.state <> 'stopped'
               and w.heartbeat_at + make_interval(secs => w.lease_ttl_ms / 1000.0) > now()))"
    };
}

/// The function's status as stored, None when none is.
pub async fn get(tx: &mut Tx, f: FunctionRef<'_>) -> Result<Option<ScheduleStatus>, StoreError> {
    measured(Operation::TimerSchedulesGet, async {
        let row = sqlx::query(
            "select last_occurrence, next_occurrence, last_updated from timer_schedules
             where tenant_id = $1 and app_name = $2 and function_name = $3",
        )
        .bind(f.tenant.as_str())
        .bind(f.app)
        .bind(f.function)
        .fetch_optional(&mut **tx)
        .await?;
        row.map(|row| -> Result<ScheduleStatus, StoreError> {
            Ok(ScheduleStatus {
                last: row.try_get::<Option<DateTime<Utc>>, _>("last_occurrence")?,
                next: row.try_get("next_occurrence")?,
                last_updated: row.try_get("last_updated")?,
            })
        })
        .transpose()
    })
    .await
}

/// Moves the function's status from `read` (None: nothing was stored) to `next`, for `worker`:
/// true when this worker moved it, and so is the one to act on the move (fire the occurrence
/// it stands for). False when the status is no longer `read` (another worker moved it, or the
/// function is gone), or `worker` holds no claim on any of the app's instances under a lease
/// the database counts live. `worker` None: a worker hosting every app by itself, which holds
/// no claims.
pub async fn advance(
    tx: &mut Tx,
    f: FunctionRef<'_>,
    worker: Option<&str>,
    read: Option<&ScheduleStatus>,
    next: &ScheduleStatus,
) -> Result<bool, StoreError> {
    measured(Operation::TimerSchedulesAdvance, async {
        let moved = match read {
            None => {
                sqlx::query(concat!(
                    "insert into timer_schedules (tenant_id, app_name, function_name,
                            last_occurrence, next_occurrence, last_updated)
                     select $1, $2, $3, $5, $6, $7
                     where exists (select from functions
                                   where tenant_id = $1 and app_name = $2 and name = $3)
                       and ",
                    holds_instance!(),
                    " on conflict (tenant_id, app_name, function_name) do nothing"
                ))
                .bind(f.tenant.as_str())
                .bind(f.app)
                .bind(f.function)
                .bind(worker)
                .bind(next.last)
                .bind(next.next)
                .bind(next.last_updated)
                .execute(&mut **tx)
                .await?
            }
            Some(read) => {
                sqlx::query(concat!(
                    "update timer_schedules
                     set last_occurrence = $5, next_occurrence = $6, last_updated = $7
                     where tenant_id = $1 and app_name = $2 and function_name = $3
                       and last_occurrence is not distinct from $8
                       and next_occurrence = $9 and last_updated = $10
                       and ",
                    holds_instance!()
                ))
                .bind(f.tenant.as_str())
                .bind(f.app)
                .bind(f.function)
                .bind(worker)
                .bind(next.last)
                .bind(next.next)
                .bind(next.last_updated)
                .bind(read.last)
                .bind(read.next)
                .bind(read.last_updated)
                .execute(&mut **tx)
                .await?
            }
        };
        Ok(moved.rows_affected() == 1)
    })
    .await
}
