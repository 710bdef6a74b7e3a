//! Searching a function's invocation log: newest first by start, keyset-paged on
//! `(started_at, id)` so a page stays put while workers add newer invocations above it.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use sqlx::Row;
use uuid::Uuid;

use super::{Status, TraceIds};
use crate::metrics::{Operation, measured};
use crate::{StoreError, TenantId, Tx};

/// Where a page ends: the last invocation's start and id. Opaque to clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    pub started_at: DateTime<Utc>,
    pub id: i64,
}

impl Cursor {
    pub fn encode(&self) -> String {
        let text = format!("{}.{}", self.started_at.timestamp_micros(), self.id);
        URL_SAFE_NO_PAD.encode(text.as_bytes())
    }

    /// Decodes a token [`Cursor::encode`] made; None for anything else.
    pub fn decode(token: &str) -> Option<Cursor> {
        let bytes = URL_SAFE_NO_PAD.decode(token).ok()?;
        let text = std::str::from_utf8(&bytes).ok()?;
        let (micros, id) = text.split_once('.')?;
        Some(Cursor {
            started_at: DateTime::from_timestamp_micros(micros.parse().ok()?)?,
            id: id.parse().ok()?,
        })
    }
}

/// What to look for; every filter given must hold.
#[derive(Debug, Clone, Default)]
pub struct Search {
    pub status: Option<Status>,
    /// The source's message id, or the delivery key (for triggers without message ids).
    pub message_id: Option<String>,
    /// Any attempt's invocation id.
    pub invocation_id: Option<Uuid>,
    /// Any attempt's trace id (32 lowercase hex digits, as stored).
    pub trace_id: Option<String>,
    /// Started at or after.
    pub from: Option<DateTime<Utc>>,
    /// Started before.
    pub to: Option<DateTime<Utc>>,
    /// Only invocations after this cursor (older ones).
    pub after: Option<Cursor>,
    pub limit: u32,
}

/// One handler attempt of an invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub invocation_id: Uuid,
    pub at: DateTime<Utc>,
    pub retry_count: i32,
    pub delivery_count: Option<i64>,
    pub worker: String,
    pub duration_ms: i64,
    pub status: Status,
    pub error: Option<String>,
    pub logs: Vec<String>,
    /// None for attempts recorded before trace ids were.
    pub trace: Option<TraceIds>,
}

/// An invocation with its kept attempts, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub id: i64,
    pub delivery_key: String,
    pub message_id: Option<String>,
    pub started_at: DateTime<Utc>,
    pub last_at: DateTime<Utc>,
    pub status: Status,
    /// Every attempt made, also those no longer kept.
    pub attempt_count: i32,
    pub payload_preview: Option<String>,
    pub payload_truncated: bool,
    pub attempts: Vec<Attempt>,
}

#[derive(Debug, Clone)]
pub struct SearchPage {
    pub items: Vec<Invocation>,
    /// Set when there may be more: pass it as [`Search::after`].
    pub next: Option<Cursor>,
}

fn status_of(text: &str) -> Result<Status, StoreError> {
    Status::parse(text).ok_or_else(|| StoreError::Corrupt(format!("invocation status {text:?}")))
}

/// A function's invocations matching `search`, newest first, with their attempts.
pub async fn search(
    tx: &mut Tx,
    tenant: &TenantId,
    app: &str,
    function: &str,
    search: &Search,
) -> Result<SearchPage, StoreError> {
    measured(Operation::InvocationLogSearch, async move {
        let limit = i64::from(search.limit);
        let rows = sqlx::query(
            "select id, delivery_key, message_id, started_at, last_at, status, attempts,
                 payload_preview, payload_truncated
             from invocations
             where tenant_id = $1 and app_name = $2 and function_name = $3
                 and ($4::text is null or status = $4)
                 and ($5::text is null or message_id = $5 or delivery_key = $5)
                 and ($6::uuid is null or id in (select invocation from invocation_attempts
                                                 where tenant_id = $1 and invocation_id = $6))
                 and ($7::timestamptz is null or started_at >= $7)
                 and ($8::timestamptz is null or started_at < $8)
                 and ($9::timestamptz is null or (started_at, id) < ($9, $10))
                 and ($12::text is null or id in (select invocation from invocation_attempts
                                                  where tenant_id = $1 and trace_id = $12))
             order by started_at desc, id desc
             limit $11",
        )
        .bind(tenant.as_str())
        .bind(app)
        .bind(function)
        .bind(search.status.map(Status::as_str))
        .bind(search.message_id.as_deref())
        .bind(search.invocation_id)
        .bind(search.from)
        .bind(search.to)
        .bind(search.after.map(|c| c.started_at))
        .bind(search.after.map_or(0, |c| c.id))
        .bind(limit + 1)
        .bind(search.trace_id.as_deref())
        .fetch_all(&mut **tx)
        .await?;
        let mut items = rows
            .iter()
            .map(|row| {
                let status: String = row.try_get("status")?;
                Ok(Invocation {
                    id: row.try_get("id")?,
                    delivery_key: row.try_get("delivery_key")?,
                    message_id: row.try_get("message_id")?,
                    started_at: row.try_get("started_at")?,
                    last_at: row.try_get("last_at")?,
                    status: status_of(&status)?,
                    attempt_count: row.try_get("attempts")?,
                    payload_preview: row.try_get("payload_preview")?,
                    payload_truncated: row.try_get("payload_truncated")?,
                    attempts: Vec::new(),
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        let more = items.len() > search.limit as usize;
        items.truncate(search.limit as usize);
        attach_attempts(tx, tenant, &mut items).await?;
        let next = more
            .then(|| {
                items.last().map(|i| Cursor {
                    started_at: i.started_at,
                    id: i.id,
                })
            })
            .flatten();
        Ok(SearchPage { items, next })
    })
    .await
}

/// Reads the page's attempts in one query and hands each invocation its own.
async fn attach_attempts(
    tx: &mut Tx,
    tenant: &TenantId,
    items: &mut [Invocation],
) -> Result<(), StoreError> {
    if items.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = items.iter().map(|i| i.id).collect();
    let index: std::collections::HashMap<i64, usize> =
        ids.iter().enumerate().map(|(n, id)| (*id, n)).collect();
    let rows = sqlx::query(
        "select invocation, invocation_id, at, retry_count, delivery_count, worker, duration_ms,
             status, error, logs, trace_id, span_id
         from invocation_attempts
         where tenant_id = $1 and invocation = any($2)
         order by invocation, at, id",
    )
    .bind(tenant.as_str())
    .bind(&ids)
    .fetch_all(&mut **tx)
    .await?;
    for row in &rows {
        let invocation: i64 = row.try_get("invocation")?;
        let status: String = row.try_get("status")?;
        let logs: serde_json::Value = row.try_get("logs")?;
        let trace_id: Option<String> = row.try_get("trace_id")?;
        let span_id: Option<String> = row.try_get("span_id")?;
        let attempt = Attempt {
            invocation_id: row.try_get("invocation_id")?,
            at: row.try_get("at")?,
            retry_count: row.try_get("retry_count")?,
            delivery_count: row.try_get("delivery_count")?,
            worker: row.try_get("worker")?,
            duration_ms: row.try_get("duration_ms")?,
            status: status_of(&status)?,
            error: row.try_get("error")?,
            logs: serde_json::from_value(logs)
                .map_err(|e| StoreError::Corrupt(format!("invocation attempt logs: {e}")))?,
            // Written together by the worker; the migration adds both nullable for older rows.
            trace: trace_id
                .zip(span_id)
                .map(|(trace_id, span_id)| TraceIds { trace_id, span_id }),
        };
        if let Some(&n) = index.get(&invocation) {
            items[n].attempts.push(attempt);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_foreign_tokens_are_refused() {
        let cursor = Cursor {
            started_at: "2026-11-24T10:00:30.123456Z".parse().unwrap(),
            id: 42,
        };
        assert_eq!(Cursor::decode(&cursor.encode()), Some(cursor));
        for foreign in ["", "!!!", "YWJj", "MTIzNA", "eC40Mg"] {
            assert_eq!(Cursor::decode(foreign), None, "{foreign}");
        }
    }
}
