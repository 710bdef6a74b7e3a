//! Queue messages parked for a far-off retry (migration 0018): where each one's retries
//! stand, for whichever worker receives it when it is due (`shoal_domain::durable_retry`).

use std::time::Duration;

use chrono::{DateTime, Utc};
use shoal_domain::durable_retry::RetryState;
use sqlx::Row;

use crate::breakers::FunctionRef;
use crate::held_messages;
use crate::metrics::{Operation, measured};
use crate::{StoreError, Tx};

/// A parked message's retries and when the next one is due.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParkedRetry {
    pub state: RetryState,
    pub due_at: DateTime<Utc>,
}

/// Parks `message_id`: records where its retries stand and when the next is due, and counts
/// the receive that brought it as a hold (it raises no dequeue count, see `held_messages`).
/// Rows of the tenant's expired messages go. Nothing is recorded for a function that no
/// longer exists.
pub async fn park(
    tx: &mut Tx,
    f: FunctionRef<'_>,
    message_id: &str,
    parked: &ParkedRetry,
    expires_at: DateTime<Utc>,
) -> Result<(), StoreError> {
    measured(Operation::ParkedRetriesPark, async {
        let retries = i32::try_from(parked.state.retries).unwrap_or(i32::MAX);
        let backoff = i64::try_from(parked.state.backoff.as_millis()).unwrap_or(i64::MAX);
        sqlx::query(
            "insert into parked_retries (tenant_id, app_name, function_name, message_id,
                    retries, previous_failure, backoff_ms, due_at, expires_at)
             select $1, $2, $3, $4, $5, $6, $7, $8, $9
             where exists (select from functions
                           where tenant_id = $1 and app_name = $2 and name = $3)
             on conflict (tenant_id, app_name, function_name, message_id)
             do update set retries = excluded.retries,
                           previous_failure = excluded.previous_failure,
                           backoff_ms = excluded.backoff_ms,
                           due_at = excluded.due_at,
                           expires_at = excluded.expires_at",
        )
        .bind(f.tenant.as_str())
        .bind(f.app)
        .bind(f.function)
        .bind(message_id)
        .bind(retries.max(1))
        .bind(parked.state.previous_failure.as_deref())
        .bind(backoff)
        .bind(parked.due_at)
        .bind(expires_at)
        .execute(&mut **tx)
        .await?;
        sqlx::query("delete from parked_retries where tenant_id = $1 and expires_at < now()")
            .bind(f.tenant.as_str())
            .execute(&mut **tx)
            .await?;
        Ok::<_, StoreError>(())
    })
    .await?;
    held_messages::hold(tx, f, message_id, expires_at).await
}

/// Where `message_id`'s retries stand, if it was parked.
pub async fn get(
    tx: &mut Tx,
    f: FunctionRef<'_>,
    message_id: &str,
) -> Result<Option<ParkedRetry>, StoreError> {
    measured(Operation::ParkedRetriesGet, async move {
        let row = sqlx::query(
            "select retries, previous_failure, backoff_ms, due_at from parked_retries
             where tenant_id = $1 and app_name = $2 and function_name = $3 and message_id = $4",
        )
        .bind(f.tenant.as_str())
        .bind(f.app)
        .bind(f.function)
        .bind(message_id)
        .fetch_optional(&mut **tx)
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let retries: i32 = row.try_get("retries")?;
        let backoff: i64 = row.try_get("backoff_ms")?;
        Ok(Some(ParkedRetry {
            state: RetryState {
                retries: u32::try_from(retries).unwrap_or(0),
                previous_failure: row.try_get("previous_failure")?,
                backoff: Duration::from_millis(u64::try_from(backoff).unwrap_or(0)),
            },
            due_at: row.try_get("due_at")?,
        }))
    })
    .await
}

/// Forgets `message_id`'s retries: it was settled after resuming them.
pub async fn unpark(tx: &mut Tx, f: FunctionRef<'_>, message_id: &str) -> Result<(), StoreError> {
    measured(Operation::ParkedRetriesUnpark, async move {
        sqlx::query(
            "delete from parked_retries
             where tenant_id = $1 and app_name = $2 and function_name = $3 and message_id = $4",
        )
        .bind(f.tenant.as_str())
        .bind(f.app)
        .bind(f.function)
        .bind(message_id)
        .execute(&mut **tx)
        .await?;
        Ok(())
    })
    .await
}
