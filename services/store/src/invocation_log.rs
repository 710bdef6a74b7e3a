//! The invocation log (worker-written, tenant-read): every delivery of a message, event or
//! occurrence to a function's handler, successes too, each with its attempts, for the
//! dashboard's explorer to search ([`search`]).
//!
//! An invocation is one delivery key — the `webhook-id`, stable across the retry policy's
//! attempts and the source's redeliveries — so a message that fails five times is one
//! invocation with five attempts. Each attempt keeps its own invocation id (fresh per attempt,
//! as Azure's), RetryCount, DequeueCount/DeliveryCount where the trigger has one, worker,
//! duration, outcome, error, the handler's `Logs`, and its place in the trace (the trace id
//! and span id of the `traceparent` the handler received), so an invocation is found from a
//! trace and a trace from an invocation.
//!
//! Capped rather than sampled, so that what is shown is exact for the recent past: a function
//! keeps its newest [`KEPT_INVOCATIONS`] invocations (by when they started), an invocation its
//! newest [`KEPT_ATTEMPTS`] attempts (an infinite retry policy would grow one without end);
//! both are pruned in the flush that adds to them, for the functions and invocations it
//! touched. Workers write in batches (one platform transaction per flush, one statement per
//! tenant); rows of a function deleted meanwhile are skipped, not an error.

mod search;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::metrics::{Operation, measured};
use crate::tenant::act_for;
use crate::{StoreError, Tx};

pub use search::{Attempt, Cursor, Invocation, Search, SearchPage, search};

/// How many invocations a function keeps: its newest by start.
pub const KEPT_INVOCATIONS: i64 = 1000;
/// How many attempts an invocation keeps: its newest (the count of all is kept apart).
pub const KEPT_ATTEMPTS: i64 = 20;

/// How an attempt ended; an invocation's is its latest attempt's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Succeeded,
    Failed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Succeeded => "succeeded",
            Status::Failed => "failed",
        }
    }

    /// The status named `text` (as [`Status::as_str`] spells it).
    pub fn parse(text: &str) -> Option<Status> {
        match text {
            "succeeded" => Some(Status::Succeeded),
            "failed" => Some(Status::Failed),
            _ => None,
        }
    }
}

/// Where an attempt is in its trace: W3C ids as lowercase hex, as `traceparent` spells them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceIds {
    /// 32 hex digits: the delivery's trace, the same for every attempt at one message.
    pub trace_id: String,
    /// 16 hex digits: the attempt's own span, the parent of the handler's.
    pub span_id: String,
}

/// One handler attempt as a worker records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptRecord {
    pub tenant: String,
    pub app: String,
    pub function: String,
    /// The delivery's `webhook-id`: what groups attempts into an invocation.
    pub delivery_key: String,
    /// The source's message id, when it has one.
    pub message_id: Option<String>,
    /// This attempt's `X-Shoal-Invocation-Id`.
    pub invocation_id: Uuid,
    pub at: DateTime<Utc>,
    pub retry_count: i32,
    /// DequeueCount (Storage Queue) or DeliveryCount (Service Bus).
    pub delivery_count: Option<i64>,
    pub worker: String,
    pub duration_ms: i64,
    pub status: Status,
    pub error: Option<String>,
    /// The handler's `Logs`, when it answered (cut short by the worker).
    pub logs: Vec<String>,
    /// The attempt's trace context, as the `traceparent` the handler received.
    pub trace: Option<TraceIds>,
    /// The trigger's data as text (cut short by the worker); kept from the first attempt that
    /// has one.
    pub payload_preview: Option<String>,
    pub payload_truncated: bool,
}

/// Adds a flush's attempts to their invocations (in the caller's platform transaction) and
/// prunes what the flush touched beyond the caps.
pub async fn record(tx: &mut Tx, attempts: &[AttemptRecord]) -> Result<(), StoreError> {
    if attempts.is_empty() {
        return Ok(());
    }
    measured(Operation::InvocationLogRecord, async move {
        let mut by_tenant: BTreeMap<&str, Vec<&AttemptRecord>> = BTreeMap::new();
        for a in attempts {
            by_tenant.entry(a.tenant.as_str()).or_default().push(a);
        }
        for (tenant, rows) in by_tenant {
            act_for(tx, tenant).await?;
            let touched = insert(tx, tenant, &rows).await?;
            prune_attempts(tx, &touched).await?;
            prune_invocations(tx, tenant, &rows).await?;
        }
        act_for(tx, "").await
    })
    .await
}

/// One statement for a tenant's rows: invocations upserted by delivery key (grouped first, so
/// no row is touched twice), then their attempts. Returns the invocations touched.
async fn insert(
    tx: &mut Tx,
    tenant: &str,
    rows: &[&AttemptRecord],
) -> Result<Vec<i64>, StoreError> {
    let col = |f: fn(&AttemptRecord) -> String| rows.iter().map(|r| f(r)).collect::<Vec<_>>();
    let logs: Vec<String> = rows
        .iter()
        .map(|r| serde_json::json!(r.logs).to_string())
        .collect();
    let touched: Vec<i64> = sqlx::query_scalar(
        "with rows as (
             select * from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::uuid[],
                 $7::timestamptz[], $8::int[], $9::bigint[], $10::text[], $11::bigint[], $12::text[],
                 $13::text[], $14::text[], $15::text[], $16::bool[], $17::text[], $18::text[])
             with ordinality as r(app, function, key, message_id, invocation_id, at, retry_count,
                 delivery_count, worker, duration_ms, status, error, logs, payload, truncated,
                 trace_id, span_id, ord)
         ),
         grouped as (
             select app, function, key,
                 (array_agg(message_id order by ord) filter (where message_id is not null))[1] as message_id,
                 min(at) as started_at, max(at) as last_at,
                 (array_agg(status order by at desc, ord desc))[1] as status,
                 count(*)::int as attempts,
                 (array_agg(payload order by ord) filter (where payload is not null))[1] as payload,
                 coalesce((array_agg(truncated order by ord) filter (where payload is not null))[1], false) as truncated
             from rows
             where exists (select from functions f
                           where f.tenant_id = $1 and f.app_name = rows.app and f.name = rows.function)
             group by app, function, key
         ),
         upserted as (
             insert into invocations as i (tenant_id, app_name, function_name, delivery_key, message_id,
                 started_at, last_at, status, attempts, payload_preview, payload_truncated)
             select $1, app, function, key, message_id, started_at, last_at, status, attempts, payload, truncated
             from grouped
             on conflict (tenant_id, app_name, function_name, delivery_key) do update set
                 message_id = coalesce(i.message_id, excluded.message_id),
                 started_at = least(i.started_at, excluded.started_at),
                 last_at = greatest(i.last_at, excluded.last_at),
                 status = case when excluded.last_at >= i.last_at then excluded.status else i.status end,
                 attempts = i.attempts + excluded.attempts,
                 payload_truncated = case when i.payload_preview is null
                     then excluded.payload_truncated else i.payload_truncated end,
                 payload_preview = coalesce(i.payload_preview, excluded.payload_preview)
             returning id, app_name, function_name, delivery_key
         ),
         attempts as (
             insert into invocation_attempts (invocation, tenant_id, invocation_id, at, retry_count,
                 delivery_count, worker, duration_ms, status, error, logs, trace_id, span_id)
             select u.id, $1, r.invocation_id, r.at, r.retry_count, r.delivery_count, r.worker,
                 r.duration_ms, r.status, r.error, r.logs::jsonb, r.trace_id, r.span_id
             from rows r join upserted u
                 on u.app_name = r.app and u.function_name = r.function and u.delivery_key = r.key
         )
         select id from upserted",
    )
    .bind(tenant)
    .bind(col(|r| r.app.clone()))
    .bind(col(|r| r.function.clone()))
    .bind(col(|r| r.delivery_key.clone()))
    .bind(rows.iter().map(|r| r.message_id.clone()).collect::<Vec<_>>())
    .bind(rows.iter().map(|r| r.invocation_id).collect::<Vec<_>>())
    .bind(rows.iter().map(|r| r.at).collect::<Vec<_>>())
    .bind(rows.iter().map(|r| r.retry_count).collect::<Vec<_>>())
    .bind(rows.iter().map(|r| r.delivery_count).collect::<Vec<_>>())
    .bind(col(|r| r.worker.clone()))
    .bind(rows.iter().map(|r| r.duration_ms).collect::<Vec<_>>())
    .bind(col(|r| r.status.as_str().to_owned()))
    .bind(rows.iter().map(|r| r.error.clone()).collect::<Vec<_>>())
    .bind(logs)
    .bind(rows.iter().map(|r| r.payload_preview.clone()).collect::<Vec<_>>())
    .bind(rows.iter().map(|r| r.payload_truncated).collect::<Vec<_>>())
    .bind(rows.iter().map(|r| r.trace.as_ref().map(|t| t.trace_id.clone())).collect::<Vec<_>>())
    .bind(rows.iter().map(|r| r.trace.as_ref().map(|t| t.span_id.clone())).collect::<Vec<_>>())
    .fetch_all(&mut **tx)
    .await?;
    Ok(touched)
}

/// Keeps the newest [`KEPT_ATTEMPTS`] attempts of each invocation in `touched`: everything at
/// or before the first one past the cap goes.
async fn prune_attempts(tx: &mut Tx, touched: &[i64]) -> Result<(), StoreError> {
    sqlx::query(
        "delete from invocation_attempts a using (
             select t.inv, edge.at, edge.id from unnest($1::bigint[]) as t(inv)
             cross join lateral (select at, id from invocation_attempts
                 where invocation = t.inv order by at desc, id desc offset $2 limit 1) edge
         ) e
         where a.invocation = e.inv and (a.at, a.id) <= (e.at, e.id)",
    )
    .bind(touched)
    .bind(KEPT_ATTEMPTS)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Keeps the newest [`KEPT_INVOCATIONS`] invocations of each function the flush wrote to
/// (found through the explorer's own index, so the cost is the cap's, not the table's).
async fn prune_invocations(
    tx: &mut Tx,
    tenant: &str,
    rows: &[&AttemptRecord],
) -> Result<(), StoreError> {
    let mut functions: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r.app.as_str(), r.function.as_str()))
        .collect();
    functions.sort_unstable();
    functions.dedup();
    sqlx::query(
        "delete from invocations i using (
             select f.app, f.function, edge.started_at, edge.id
             from unnest($2::text[], $3::text[]) as f(app, function)
             cross join lateral (select started_at, id from invocations
                 where tenant_id = $1 and app_name = f.app and function_name = f.function
                 order by started_at desc, id desc offset $4 limit 1) edge
         ) e
         where i.tenant_id = $1 and i.app_name = e.app and i.function_name = e.function
             and (i.started_at, i.id) <= (e.started_at, e.id)",
    )
    .bind(tenant)
    .bind(functions.iter().map(|f| f.0).collect::<Vec<_>>())
    .bind(functions.iter().map(|f| f.1).collect::<Vec<_>>())
    .bind(KEPT_INVOCATIONS)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
