//! Functions' circuit breakers (migration 0009): the shared state, the failure counts workers
//! add in batches, and the bounded history of transitions.
//!
//! Every transition happens in one conditional `UPDATE` of the breaker's row, so two workers
//! (or a worker and a `resume`) racing for the same move cannot both make it; the row's
//! trigger announces the new state on `shoal_breakers`. A function without a row is closed.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use shoal_domain::circuit_breaker::{BreakerCause, BreakerState, CircuitBreaker, TransitionEvent};
use sqlx::Row;

use crate::metrics::{Operation, measured};
use crate::{StoreError, TenantId, Tx};

pub mod handler;

/// How many failures a breaker keeps to show why it opened, and how many transitions of each
/// function the history keeps.
pub const FAILURE_SAMPLES: usize = 10;
pub const HISTORY: i64 = 100;

/// One final failure as the breaker shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FailureSample {
    pub at: DateTime<Utc>,
    pub reason: String,
}

/// A function's breaker row (or the closed default when it has none).
#[derive(Clone, Debug, PartialEq)]
pub struct BreakerRecord {
    pub app: String,
    pub function: String,
    pub state: BreakerState,
    pub cause: Option<BreakerCause>,
    pub changed_at: Option<DateTime<Utc>>,
    pub probe_by: Option<String>,
    pub probe_until: Option<DateTime<Utc>>,
    /// The latest final failures, newest first (while closed), or those that opened it.
    pub failures: Vec<FailureSample>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub app: String,
    pub function: String,
    pub from: BreakerState,
    pub to: BreakerState,
    pub cause: BreakerCause,
    pub actor: String,
    pub failures: Vec<FailureSample>,
}

impl Transition {
    /// The transition as the operator webhook receives it.
    pub fn event<'a>(&'a self, tenant: &'a str) -> TransitionEvent<'a> {
        TransitionEvent {
            tenant,
            app: &self.app,
            function: &self.function,
            id: self.id,
            at: self.at,
            from: self.from,
            to: self.to,
            cause: self.cause,
            actor: &self.actor,
            failures: serde_json::to_value(&self.failures).unwrap_or_default(),
        }
    }
}

macro_rules! breaker_columns {
    () => {
        "app_name, function_name, state, cause, changed_at, probe_by, probe_until, failures"
    };
}

fn breaker(row: &sqlx::postgres::PgRow) -> Result<BreakerRecord, StoreError> {
    let state: String = row.try_get("state")?;
    let cause: Option<String> = row.try_get("cause")?;
    Ok(BreakerRecord {
        app: row.try_get("app_name")?,
        function: row.try_get("function_name")?,
        state: BreakerState::parse(&state)
            .ok_or_else(|| StoreError::Corrupt(format!("breaker state {state:?}")))?,
        cause: cause.as_deref().and_then(BreakerCause::parse),
        changed_at: row.try_get("changed_at")?,
        probe_by: row.try_get("probe_by")?,
        probe_until: row.try_get("probe_until")?,
        failures: samples(row.try_get("failures")?)?,
    })
}

fn samples(value: serde_json::Value) -> Result<Vec<FailureSample>, StoreError> {
    serde_json::from_value(value).map_err(|e| StoreError::Corrupt(format!("breaker failures: {e}")))
}

fn transition(row: &sqlx::postgres::PgRow) -> Result<Transition, StoreError> {
    let state = |column: &str| -> Result<BreakerState, StoreError> {
        let s: String = row.try_get(column)?;
        BreakerState::parse(&s).ok_or_else(|| StoreError::Corrupt(format!("breaker state {s:?}")))
    };
    let cause: String = row.try_get("cause")?;
    Ok(Transition {
        id: row.try_get("id")?,
        at: row.try_get("at")?,
        app: row.try_get("app_name")?,
        function: row.try_get("function_name")?,
        from: state("from_state")?,
        to: state("to_state")?,
        cause: BreakerCause::parse(&cause)
            .ok_or_else(|| StoreError::Corrupt(format!("breaker cause {cause:?}")))?,
        actor: row.try_get("actor")?,
        failures: samples(row.try_get("failures")?)?,
    })
}

/// The function a breaker call is about.
#[derive(Clone, Copy, Debug)]
pub struct FunctionRef<'a> {
    pub tenant: &'a TenantId,
    pub app: &'a str,
    pub function: &'a str,
}

/// Makes sure the function has a breaker row (closed); false when the function is gone.
async fn ensure(tx: &mut Tx, f: FunctionRef<'_>) -> Result<bool, StoreError> {
    let exists = sqlx::query(
        "insert into function_breakers (tenant_id, app_name, function_name)
         select tenant_id, app_name, name from functions
          where tenant_id = $1 and app_name = $2 and name = $3
         on conflict do nothing",
    )
    .bind(f.tenant.as_str())
    .bind(f.app)
    .bind(f.function)
    .execute(&mut **tx)
    .await?;
    if exists.rows_affected() == 1 {
        return Ok(true);
    }
    Ok(sqlx::query_scalar::<_, bool>(
        "select exists (select from functions where tenant_id = $1 and app_name = $2 and name = $3)",
    )
    .bind(f.tenant.as_str())
    .bind(f.app)
    .bind(f.function)
    .fetch_one(&mut **tx)
    .await?)
}

/// Adds `count` final failures (with the latest of them as `recent`, newest first) to the
/// current second's bucket, and opens the breaker when it is closed and the window now holds
/// more than the threshold. Returns the transition when this call opened it. A function that
/// was deleted meanwhile is ignored.
pub async fn record_failures(
    tx: &mut Tx,
    f: FunctionRef<'_>,
    settings: &CircuitBreaker,
    count: u32,
    recent: &[FailureSample],
    actor: &str,
) -> Result<Option<Transition>, StoreError> {
    measured(Operation::BreakersRecordFailures, async move {
        if count == 0 || !ensure(tx, f).await? {
            return Ok(None);
        }
        sqlx::query(
            "insert into function_breaker_failures
                    (tenant_id, app_name, function_name, second, failures)
             values ($1, $2, $3, date_trunc('second', now()), $4)
             on conflict (tenant_id, app_name, function_name, second)
             do update set failures = function_breaker_failures.failures + excluded.failures",
        )
        .bind(f.tenant.as_str())
        .bind(f.app)
        .bind(f.function)
        .bind(i32::try_from(count).unwrap_or(i32::MAX))
        .execute(&mut **tx)
        .await?;
        // Buckets older than the longest window allowed count for nothing any more.
        sqlx::query(
            "delete from function_breaker_failures
              where tenant_id = $1 and app_name = $2 and function_name = $3
                and second < now() - interval '61 minutes'",
        )
        .bind(f.tenant.as_str())
        .bind(f.app)
        .bind(f.function)
        .execute(&mut **tx)
        .await?;
        let recent =
            serde_json::to_value(recent).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        // Locks the row: counting and opening are one step for every worker.
        let row = sqlx::query(
            "update function_breakers
                set failures = jsonb_path_query_array($4::jsonb || failures, '$[0 to 9]')
              where tenant_id = $1 and app_name = $2 and function_name = $3 and state = 'closed'
             returning counting_since",
        )
        .bind(f.tenant.as_str())
        .bind(f.app)
        .bind(f.function)
        .bind(&recent)
        .fetch_optional(&mut **tx)
        .await?;
        let Some(row) = row else {
            // Open or half-open already: nothing more to count towards.
            return Ok(None);
        };
        let since: DateTime<Utc> = row.try_get("counting_since")?;
        let in_window: i64 = sqlx::query_scalar(
            "select coalesce(sum(failures), 0)::bigint from function_breaker_failures
              where tenant_id = $1 and app_name = $2 and function_name = $3
                and second >= greatest(date_trunc('second', $4::timestamptz),
                                       date_trunc('second', now() - make_interval(secs => $5)))",
        )
        .bind(f.tenant.as_str())
        .bind(f.app)
        .bind(f.function)
        .bind(since)
        .bind(settings.window.as_duration().as_secs_f64())
        .fetch_one(&mut **tx)
        .await?;
        if !settings.trips(u64::try_from(in_window).unwrap_or(0)) {
            return Ok(None);
        }
        move_to(
            tx,
            f,
            &[BreakerState::Closed],
            BreakerCause::Failures,
            actor,
            None,
        )
        .await
    })
    .await
}

/// The breakers of the tenant that are not closed.
pub async fn open_of_tenant(
    tx: &mut Tx,
    tenant: &TenantId,
) -> Result<Vec<BreakerRecord>, StoreError> {
    measured(Operation::BreakersOpenOfTenant, async move {
        let rows = sqlx::query(concat!(
            "select ",
            breaker_columns!(),
            " from function_breakers where tenant_id = $1 and state <> 'closed'"
        ))
        .bind(tenant.as_str())
        .fetch_all(&mut **tx)
        .await?;
        rows.iter().map(breaker).collect()
    })
    .await
}

/// The function's breaker; closed with nothing recorded when it has no row. `NotFound` when
/// the function does not exist.
pub async fn get(tx: &mut Tx, f: FunctionRef<'_>) -> Result<BreakerRecord, StoreError> {
    measured(Operation::BreakersGet, async move {
        let row = sqlx::query(concat!(
            "select ",
            breaker_columns!(),
            " from function_breakers where tenant_id = $1 and app_name = $2 and function_name = $3"
        ))
        .bind(f.tenant.as_str())
        .bind(f.app)
        .bind(f.function)
        .fetch_optional(&mut **tx)
        .await?;
        match row {
            Some(row) => breaker(&row),
            None if crate::functions::get(tx, f.tenant, f.app, f.function)
                .await
                .is_ok() =>
            {
                Ok(BreakerRecord {
                    app: f.app.to_owned(),
                    function: f.function.to_owned(),
                    state: BreakerState::Closed,
                    cause: None,
                    changed_at: None,
                    probe_by: None,
                    probe_until: None,
                    failures: Vec::new(),
                })
            }
            None => Err(StoreError::NotFound),
        }
    })
    .await
}

/// The function's transitions, newest first, older than `before` (an id) when given.
pub async fn transitions(
    tx: &mut Tx,
    f: FunctionRef<'_>,
    before: Option<i64>,
    limit: u32,
) -> Result<Vec<Transition>, StoreError> {
    measured(Operation::BreakersTransitions, async move {
        let rows = sqlx::query(
            "select id, at, app_name, function_name, from_state, to_state, cause, actor, failures
               from function_breaker_transitions
              where tenant_id = $1 and app_name = $2 and function_name = $3
                and ($4::bigint is null or id < $4)
              order by id desc limit $5",
        )
        .bind(f.tenant.as_str())
        .bind(f.app)
        .bind(f.function)
        .bind(before)
        .bind(i64::from(limit))
        .fetch_all(&mut **tx)
        .await?;
        rows.iter().map(transition).collect()
    })
    .await
}

/// Half-opens the breaker for `worker` when it has been open (by failures, a failed probe or
/// a persistent throttle) for `cooldown`, or takes over a probe whose holder's claim lapsed;
/// renews the claim when `worker` holds it already. True when `worker` holds the probe afterwards.
pub async fn claim_probe(
    tx: &mut Tx,
    f: FunctionRef<'_>,
    worker: &str,
    cooldown: std::time::Duration,
    lease: std::time::Duration,
) -> Result<(bool, Option<Transition>), StoreError> {
    measured(Operation::BreakersClaimProbe, async move {
        let renewed = sqlx::query(
            "update function_breakers
                set probe_until = now() + make_interval(secs => $5), probe_by = $4
              where tenant_id = $1 and app_name = $2 and function_name = $3 and state = 'halfOpen'
                and (probe_by = $4 or probe_until < now())",
        )
        .bind(f.tenant.as_str())
        .bind(f.app)
        .bind(f.function)
        .bind(worker)
        .bind(lease.as_secs_f64())
        .execute(&mut **tx)
        .await?;
        if renewed.rows_affected() == 1 {
            return Ok((true, None));
        }
        let due: Option<bool> = sqlx::query_scalar(
            "select changed_at + make_interval(secs => $4) <= now() from function_breakers
              where tenant_id = $1 and app_name = $2 and function_name = $3
                and state = 'open' and cause in ('failures', 'probeFailed', 'throttled')",
        )
        .bind(f.tenant.as_str())
        .bind(f.app)
        .bind(f.function)
        .bind(cooldown.as_secs_f64())
        .fetch_optional(&mut **tx)
        .await?;
        if due != Some(true) {
            return Ok((false, None));
        }
        let moved = move_to(
            tx,
            f,
            &[BreakerState::Open],
            BreakerCause::Cooldown,
            worker,
            Some(lease),
        )
        .await?;
        Ok((moved.is_some(), moved))
    })
    .await
}

/// The probe's outcome, from the worker holding it: success closes the breaker, failure opens
/// it again for another cooldown. None when the worker no longer holds the probe.
pub async fn probe_result(
    tx: &mut Tx,
    f: FunctionRef<'_>,
    worker: &str,
    succeeded: bool,
) -> Result<Option<Transition>, StoreError> {
    measured(Operation::BreakersProbeResult, async move {
        let holds: Option<String> = sqlx::query_scalar(
            "select probe_by from function_breakers
              where tenant_id = $1 and app_name = $2 and function_name = $3 and state = 'halfOpen'
              for update",
        )
        .bind(f.tenant.as_str())
        .bind(f.app)
        .bind(f.function)
        .fetch_optional(&mut **tx)
        .await?
        .flatten();
        if holds.as_deref() != Some(worker) {
            return Ok(None);
        }
        let cause = if succeeded {
            BreakerCause::ProbeSucceeded
        } else {
            BreakerCause::ProbeFailed
        };
        move_to(tx, f, &[BreakerState::HalfOpen], cause, worker, None).await
    })
    .await
}

/// Pauses (opens, by hand) or resumes (closes) the breaker from whatever state it is in. A
/// pause of a breaker already paused, or a resume of a closed one, changes nothing and returns
/// None. `NotFound` when the function does not exist.
pub async fn set_by_hand(
    tx: &mut Tx,
    f: FunctionRef<'_>,
    cause: BreakerCause,
    actor: &str,
) -> Result<Option<Transition>, StoreError> {
    measured(Operation::BreakersSet, async move {
        if !ensure(tx, f).await? {
            return Err(StoreError::NotFound);
        }
        let from: &[BreakerState] = match cause {
            BreakerCause::Paused => {
                // Pausing a breaker that opened by itself makes it a pause: it no longer
                // half-opens by itself.
                let current: (String, Option<String>) = sqlx::query_as(
                    "select state, cause from function_breakers
                      where tenant_id = $1 and app_name = $2 and function_name = $3 for update",
                )
                .bind(f.tenant.as_str())
                .bind(f.app)
                .bind(f.function)
                .fetch_one(&mut **tx)
                .await?;
                if current.0 == "open" && current.1.as_deref() == Some("paused") {
                    return Ok(None);
                }
                &[
                    BreakerState::Closed,
                    BreakerState::Open,
                    BreakerState::HalfOpen,
                ]
            }
            _ => &[BreakerState::Open, BreakerState::HalfOpen],
        };
        move_to(tx, f, from, cause, actor, None).await
    })
    .await
}

/// Moves the breaker to `cause.leads_to()` if it is in one of `from`, records the transition
/// (with the failures that opened it) and trims the history. None when it was in none of them.
async fn move_to(
    tx: &mut Tx,
    f: FunctionRef<'_>,
    from: &[BreakerState],
    cause: BreakerCause,
    actor: &str,
    probe_lease: Option<std::time::Duration>,
) -> Result<Option<Transition>, StoreError> {
    let to = cause.leads_to();
    let from: Vec<&str> = from.iter().map(|s| s.as_str()).collect();
    // `old` reads the row before the update in the same statement (a self-join on the key).
    let row = sqlx::query(
        "update function_breakers b
            set state = $5, cause = $6, changed_at = now(),
                counting_since = case when $5 = 'closed' then now() else b.counting_since end,
                failures = case when $5 = 'closed' then '[]'::jsonb else b.failures end,
                probe_by = case when $5 = 'halfOpen' then $7 else null end,
                probe_until = case when $5 = 'halfOpen' then now() + make_interval(secs => $8)
                                   else null end
           from function_breakers old
          where b.tenant_id = $1 and b.app_name = $2 and b.function_name = $3
            and old.tenant_id = b.tenant_id and old.app_name = b.app_name
            and old.function_name = b.function_name and b.state = any($4)
         returning old.state as from_state, old.failures as failures",
    )
    .bind(f.tenant.as_str())
    .bind(f.app)
    .bind(f.function)
    .bind(&from)
    .bind(to.as_str())
    .bind(cause.as_str())
    .bind(actor)
    .bind(probe_lease.unwrap_or_default().as_secs_f64())
    .fetch_optional(&mut **tx)
    .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    let from_state: String = row.try_get("from_state")?;
    // The failures that opened it travel with an opening; other moves carry none.
    let failures: serde_json::Value = if to == BreakerState::Open {
        row.try_get("failures")?
    } else {
        serde_json::Value::Array(Vec::new())
    };
    let recorded = sqlx::query(
        "insert into function_breaker_transitions
                (tenant_id, app_name, function_name, from_state, to_state, cause, actor, failures)
         values ($1, $2, $3, $4, $5, $6, $7, $8)
         returning id, at, app_name, function_name, from_state, to_state, cause, actor, failures",
    )
    .bind(f.tenant.as_str())
    .bind(f.app)
    .bind(f.function)
    .bind(&from_state)
    .bind(to.as_str())
    .bind(cause.as_str())
    .bind(actor)
    .bind(&failures)
    .fetch_one(&mut **tx)
    .await?;
    sqlx::query(
        "delete from function_breaker_transitions
          where tenant_id = $1 and app_name = $2 and function_name = $3
            and id <= (select id from function_breaker_transitions
                        where tenant_id = $1 and app_name = $2 and function_name = $3
                        order by id desc offset $4 limit 1)",
    )
    .bind(f.tenant.as_str())
    .bind(f.app)
    .bind(f.function)
    .bind(HISTORY)
    .execute(&mut **tx)
    .await?;
    Ok(Some(transition(&recorded)?))
}
