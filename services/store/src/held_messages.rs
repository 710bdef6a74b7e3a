//! Queue messages a function's circuit breaker gave back without invoking them (migration
//! 0015): the worker records each hold and subtracts them from the message's dequeue count, so
//! a pause costs no attempt and the message keeps its id.

use chrono::{DateTime, Utc};

use crate::breakers::FunctionRef;
use crate::metrics::{Operation, measured};
use crate::{StoreError, Tx};

/// Adds one hold of `message_id`, which expires at `expires_at`, and removes the tenant's rows
/// whose messages have expired. Nothing is recorded for a function that no longer exists.
pub async fn hold(
    tx: &mut Tx,
    f: FunctionRef<'_>,
    message_id: &str,
    expires_at: DateTime<Utc>,
) -> Result<(), StoreError> {
    measured(Operation::HeldMessagesHold, async move {
        sqlx::query(
            "insert into held_queue_messages
                    (tenant_id, app_name, function_name, message_id, holds, expires_at)
             select $1, $2, $3, $4, 1, $5
             where exists (select from functions
                           where tenant_id = $1 and app_name = $2 and name = $3)
             on conflict (tenant_id, app_name, function_name, message_id)
             do update set holds = held_queue_messages.holds + 1",
        )
        .bind(f.tenant.as_str())
        .bind(f.app)
        .bind(f.function)
        .bind(message_id)
        .bind(expires_at)
        .execute(&mut **tx)
        .await?;
        sqlx::query("delete from held_queue_messages where tenant_id = $1 and expires_at < now()")
            .bind(f.tenant.as_str())
            .execute(&mut **tx)
            .await?;
        Ok(())
    })
    .await
}

/// How many times `message_id` was held back for the function (0 when never).
pub async fn holds(tx: &mut Tx, f: FunctionRef<'_>, message_id: &str) -> Result<u32, StoreError> {
    measured(Operation::HeldMessagesHolds, async move {
        let holds: Option<i32> = sqlx::query_scalar(
            "select holds from held_queue_messages
             where tenant_id = $1 and app_name = $2 and function_name = $3 and message_id = $4",
        )
        .bind(f.tenant.as_str())
        .bind(f.app)
        .bind(f.function)
        .bind(message_id)
        .fetch_optional(&mut **tx)
        .await?;
        Ok(holds.map_or(0, |h| u32::try_from(h).unwrap_or(0)))
    })
    .await
}
