//! The slots of a function's `maxConcurrency` that each instance holds (migration 0017); the
//! rule a renewal applies is `shoal_domain::concurrency::allot`.

use std::time::Duration;

use shoal_domain::concurrency::{Allotment, OtherHolder, OwnState, allot};
use sqlx::Row;

use crate::breakers::FunctionRef;
use crate::metrics::{Operation, measured};
use crate::{StoreError, Tx};

/// One run of an instance's listener holding slots: the worker it runs on, the instance's index
/// and the run (a restart drains the old run while the new one starts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Holder<'a> {
    pub worker: &'a str,
    pub instance: u32,
    pub generation: uuid::Uuid,
}

/// What the renewing instance asks with.
#[derive(Clone, Copy, Debug)]
pub struct Renewal {
    /// The function's `maxConcurrency`.
    pub cap: u32,
    /// Its calls in flight now.
    pub in_use: u32,
    /// How long the renewed lease lasts.
    pub lease: Duration,
    /// The longest a call started before the lease ends can run on (the handler's timeout):
    /// the holder's slots stay taken that much longer if it stops renewing.
    pub longest_call: Duration,
}

/// Renews `holder`'s slots of the function and moves them towards its fair share; None when
/// the function no longer exists. Renewals of one function are serialised by an advisory lock
/// in `tx`, and rows whose calls have surely ended are removed first.
pub async fn renew(
    tx: &mut Tx,
    f: FunctionRef<'_>,
    holder: Holder<'_>,
    renewal: Renewal,
) -> Result<Option<Allotment>, StoreError> {
    measured(Operation::ConcurrencySlotsRenew, async move {
        lock(tx, f).await?;
        let exists: bool = sqlx::query_scalar(
            "select exists (select from functions
                            where tenant_id = $1 and app_name = $2 and name = $3)",
        )
        .bind(f.tenant.as_str())
        .bind(f.app)
        .bind(f.function)
        .fetch_one(&mut **tx)
        .await?;
        if !exists {
            return Ok(None);
        }
        sqlx::query(
            "delete from concurrency_slots
             where tenant_id = $1 and app_name = $2 and function_name = $3
               and calls_end_by < now()",
        )
        .bind(f.tenant.as_str())
        .bind(f.app)
        .bind(f.function)
        .execute(&mut **tx)
        .await?;
        let rows = sqlx::query(
            "select worker, instance, generation, slots, lease_until > now() as live
             from concurrency_slots
             where tenant_id = $1 and app_name = $2 and function_name = $3",
        )
        .bind(f.tenant.as_str())
        .bind(f.app)
        .bind(f.function)
        .fetch_all(&mut **tx)
        .await?;
        let mut own = OwnState {
            held: 0,
            in_use: renewal.in_use,
        };
        let mut others = Vec::with_capacity(rows.len());
        for row in rows {
            let worker: String = row.try_get("worker")?;
            let instance = u32::try_from(row.try_get::<i32, _>("instance")?).unwrap_or(0);
            let slots = u32::try_from(row.try_get::<i32, _>("slots")?).unwrap_or(0);
            let other = Holder {
                worker: &worker,
                instance,
                generation: row.try_get("generation")?,
            };
            if other == holder {
                own.held = slots;
            } else {
                others.push(OtherHolder {
                    slots,
                    live: row.try_get("live")?,
                    before: other < holder,
                });
            }
        }
        let allotment = allot(renewal.cap, own, &others);
        sqlx::query(
            "insert into concurrency_slots
                    (tenant_id, app_name, function_name, worker, instance, generation, slots,
                     lease_until, calls_end_by)
             values ($1, $2, $3, $4, $5, $9, $6,
                     now() + make_interval(secs => $7), now() + make_interval(secs => $7 + $8))
             on conflict (tenant_id, app_name, function_name, worker, instance, generation)
             do update set slots = excluded.slots, lease_until = excluded.lease_until,
                           calls_end_by = excluded.calls_end_by",
        )
        .bind(f.tenant.as_str())
        .bind(f.app)
        .bind(f.function)
        .bind(holder.worker)
        .bind(holder.instance as i32)
        .bind(allotment.hold as i32)
        .bind(renewal.lease.as_secs_f64())
        .bind(renewal.longest_call.as_secs_f64())
        .bind(holder.generation)
        .execute(&mut **tx)
        .await?;
        Ok(Some(allotment))
    })
    .await
}

/// Gives up every slot `holder` has of the function (its instance stopped and its calls ended).
pub async fn release(
    tx: &mut Tx,
    f: FunctionRef<'_>,
    holder: Holder<'_>,
) -> Result<(), StoreError> {
    measured(Operation::ConcurrencySlotsRelease, async move {
        lock(tx, f).await?;
        sqlx::query(
            "delete from concurrency_slots
             where tenant_id = $1 and app_name = $2 and function_name = $3
               and worker = $4 and instance = $5 and generation = $6",
        )
        .bind(f.tenant.as_str())
        .bind(f.app)
        .bind(f.function)
        .bind(holder.worker)
        .bind(holder.instance as i32)
        .bind(holder.generation)
        .execute(&mut **tx)
        .await?;
        Ok(())
    })
    .await
}

/// Serialises the function's renewals and releases for the rest of `tx`.
async fn lock(tx: &mut Tx, f: FunctionRef<'_>) -> Result<(), StoreError> {
    sqlx::query(
        "select pg_advisory_xact_lock(hashtext('shoal.concurrency_slots'),
                                      hashtext($1 || '/' || $2 || '/' || $3))",
    )
    .bind(f.tenant.as_str())
    .bind(f.app)
    .bind(f.function)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
