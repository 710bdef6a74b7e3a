//! Breaker moves that speak for the app's handler rather than for one function's messages:
//! the handler takes no connections (every function of the app opens, and closes again when a
//! probe of the handler is answered), or it kept asking Shoal to slow down (the function
//! pauses like a breaker opened by failures, and half-opens after its cooldown).

use shoal_domain::circuit_breaker::{BreakerCause, BreakerState};

use super::{FailureSample, FunctionRef, Transition, ensure, move_to};
use crate::metrics::{Operation, measured};
use crate::{StoreError, TenantId, Tx};

/// Opens every closed breaker of `app` because its handler is unreachable, keeping `why` (the
/// first connection failure of the run) as the failure that opened it. The transitions made;
/// none when every function was open already.
pub async fn handler_unreachable(
    tx: &mut Tx,
    tenant: &TenantId,
    app: &str,
    why: &FailureSample,
    actor: &str,
) -> Result<Vec<Transition>, StoreError> {
    measured(Operation::BreakersSet, async move {
        let functions: Vec<String> = sqlx::query_scalar(
            "select name from functions where tenant_id = $1 and app_name = $2 order by name",
        )
        .bind(tenant.as_str())
        .bind(app)
        .fetch_all(&mut **tx)
        .await?;
        let mut made = Vec::new();
        for function in &functions {
            let f = FunctionRef {
                tenant,
                app,
                function,
            };
            if let Some(t) = open_with(tx, f, BreakerCause::HandlerUnreachable, why, actor).await? {
                made.push(t);
            }
        }
        Ok(made)
    })
    .await
}

/// Closes every breaker of `app` that its handler's unreachability opened (not one paused by
/// hand or opened by failures meanwhile).
pub async fn handler_reachable(
    tx: &mut Tx,
    tenant: &TenantId,
    app: &str,
    actor: &str,
) -> Result<Vec<Transition>, StoreError> {
    measured(Operation::BreakersSet, async move {
        let functions: Vec<String> = sqlx::query_scalar(
            "select function_name from function_breakers
              where tenant_id = $1 and app_name = $2 and state = 'open'
                and cause = 'handlerUnreachable'
              order by function_name for update",
        )
        .bind(tenant.as_str())
        .bind(app)
        .fetch_all(&mut **tx)
        .await?;
        let mut made = Vec::new();
        for function in &functions {
            let f = FunctionRef {
                tenant,
                app,
                function,
            };
            let moved = move_to(
                tx,
                f,
                &[BreakerState::Open],
                BreakerCause::HandlerReachable,
                actor,
                None,
            )
            .await?;
            made.extend(moved);
        }
        Ok(made)
    })
    .await
}

/// Pauses the function because its handler kept answering 429 or 503 (`why`, the first of
/// them) for longer than the breaker's window. None when it was not closed.
pub async fn throttled(
    tx: &mut Tx,
    f: FunctionRef<'_>,
    why: &FailureSample,
    actor: &str,
) -> Result<Option<Transition>, StoreError> {
    measured(Operation::BreakersSet, async move {
        open_with(tx, f, BreakerCause::Throttled, why, actor).await
    })
    .await
}

/// Opens a closed breaker for `cause`, with `why` as the failure it opened for.
async fn open_with(
    tx: &mut Tx,
    f: FunctionRef<'_>,
    cause: BreakerCause,
    why: &FailureSample,
    actor: &str,
) -> Result<Option<Transition>, StoreError> {
    if !ensure(tx, f).await? {
        return Ok(None);
    }
    let why = serde_json::to_value([why]).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let closed = sqlx::query(
        "update function_breakers set failures = $4
          where tenant_id = $1 and app_name = $2 and function_name = $3 and state = 'closed'",
    )
    .bind(f.tenant.as_str())
    .bind(f.app)
    .bind(f.function)
    .bind(&why)
    .execute(&mut **tx)
    .await?;
    if closed.rows_affected() == 0 {
        return Ok(None);
    }
    move_to(tx, f, &[BreakerState::Closed], cause, actor, None).await
}
