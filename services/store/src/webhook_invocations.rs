//! Webhook invocations accepted with `?mode=async` (tenant scope; migration 0006): the sealed
//! custom-handler request, its status and attempts, the claim of the dispatcher delivering it,
//! and the sealed response once there is one. An enqueue notifies
//! [`crate::listen::WEBHOOK_INVOCATIONS`], on which dispatchers listen.
//!
//! The API enqueues and reads them in tenant-scoped transactions. The dispatcher claims due
//! ones across tenants through `shoal_claim_webhook_invocations` (the one platform-scoped
//! read, in a single statement) and records each outcome in a tenant-scoped transaction,
//! fenced by the attempt it claimed: a dispatcher whose claim lapsed and was taken over cannot
//! overwrite the newer attempt's outcome.

use std::time::Duration;

use chrono::{DateTime, Utc};
use shoal_domain::async_invocation::InvocationStatus;
use shoal_domain::names::TenantName;
use sqlx::Row;
use uuid::Uuid;

use crate::crypto::Cipher;
use crate::error::{Violation, on_violation};
use crate::metrics::{Operation, measured};
use crate::{StoreError, TenantId, Tx};

fn aad(tenant: &TenantId, id: Uuid, part: &str) -> String {
    format!("webhook-invocation/{tenant}/{id}/{part}")
}

/// An invocation to queue.
pub struct NewInvocation<'a> {
    pub app: &'a str,
    pub function: &'a str,
    pub id: Uuid,
    /// The custom-handler request body, in the clear (sealed here).
    pub payload: &'a [u8],
    pub request_id: Option<&'a str>,
}

/// What the status endpoint shows.
#[derive(Debug, Clone, PartialEq)]
pub struct InvocationRecord {
    pub id: Uuid,
    pub status: InvocationStatus,
    pub attempts: u32,
    pub created_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
    /// The response as stored (`{statusCode, headers, body}`), opened.
    pub response: Option<serde_json::Value>,
    pub error: Option<String>,
}

/// An invocation a dispatcher claimed: deliver it as attempt `attempt`.
#[derive(Debug, Clone)]
pub struct ClaimedInvocation {
    pub tenant: TenantId,
    pub app: String,
    pub function: String,
    pub id: Uuid,
    pub attempt: u32,
    pub payload: Vec<u8>,
    pub request_id: Option<String>,
    pub created_at: DateTime<Utc>,
}

pub async fn enqueue(
    tx: &mut Tx,
    tenant: &TenantId,
    cipher: &Cipher,
    new: &NewInvocation<'_>,
) -> Result<(), StoreError> {
    measured(Operation::WebhookInvocationsEnqueue, async move {
        let sealed = cipher.encrypt(new.payload, &aad(tenant, new.id, "payload"))?;
        sqlx::query(
            "insert into webhook_invocations (tenant_id, app_name, function_name, id, payload, request_id)
             values ($1, $2, $3, $4, $5, $6)",
        )
        .bind(tenant.as_str())
        .bind(new.app)
        .bind(new.function)
        .bind(new.id)
        .bind(sealed)
        .bind(new.request_id)
        .execute(&mut **tx)
        .await
        // The app was deleted in between.
        .map_err(|e| on_violation(e, Violation::ForeignKey, || StoreError::NotFound))?;
        Ok(())
    })
    .await
}

/// One invocation of `app`'s `function` (its name in any case, as URLs match function names);
/// NotFound for any other.
pub async fn get(
    tx: &mut Tx,
    tenant: &TenantId,
    cipher: &Cipher,
    app: &str,
    function: &str,
    id: Uuid,
) -> Result<InvocationRecord, StoreError> {
    measured(Operation::WebhookInvocationsGet, async move {
        let row = sqlx::query(
            "select status, attempts, created_at, completed_at, response, error
             from webhook_invocations
             where tenant_id = $1 and id = $2 and app_name = $3 and lower(function_name) = lower($4)",
        )
        .bind(tenant.as_str())
        .bind(id)
        .bind(app)
        .bind(function)
        .fetch_optional(&mut **tx)
        .await?
        .ok_or(StoreError::NotFound)?;
        let status: String = row.try_get("status")?;
        let status = InvocationStatus::parse(&status)
            .ok_or_else(|| StoreError::Corrupt(format!("invocation status {status}")))?;
        let response = match row.try_get::<Option<Vec<u8>>, _>("response")? {
            None => None,
            Some(sealed) => {
                let opened = cipher.decrypt(&sealed, &aad(tenant, id, "response"))?;
                Some(serde_json::from_slice(&opened).map_err(|e| {
                    StoreError::Corrupt(format!("stored webhook response is not JSON: {e}"))
                })?)
            }
        };
        Ok(InvocationRecord {
            id,
            status,
            attempts: attempts(row.try_get("attempts")?),
            created_at: row.try_get("created_at")?,
            completed_at: row.try_get("completed_at")?,
            response,
            error: row.try_get("error")?,
        })
    })
    .await
}

/// Claims up to `limit` due invocations (queued and due, or running with a lapsed claim) for
/// `claimant` for `lease`, each as its next attempt. Platform scope: every tenant's.
pub async fn claim(
    pool: &sqlx::PgPool,
    cipher: &Cipher,
    claimant: &str,
    lease: Duration,
    limit: u32,
) -> Result<Vec<ClaimedInvocation>, StoreError> {
    measured(Operation::WebhookInvocationsClaim, async move {
        let rows = sqlx::query("select * from shoal_claim_webhook_invocations($1, $2, $3)")
            .bind(claimant)
            .bind(millis_i32(lease))
            .bind(i32::try_from(limit).unwrap_or(i32::MAX))
            .fetch_all(pool)
            .await?;
        rows.iter()
            .map(|row| {
                let tenant: String = row.try_get("tenant_id")?;
                let tenant = TenantName::parse(&tenant)
                    .map(TenantId::new)
                    .map_err(|e| StoreError::Corrupt(format!("tenant of an invocation: {e}")))?;
                let id: Uuid = row.try_get("id")?;
                let sealed: Vec<u8> = row.try_get("payload")?;
                Ok(ClaimedInvocation {
                    payload: cipher.decrypt(&sealed, &aad(&tenant, id, "payload"))?,
                    app: row.try_get("app_name")?,
                    function: row.try_get("function_name")?,
                    attempt: attempts(row.try_get("attempts")?),
                    request_id: row.try_get("request_id")?,
                    created_at: row.try_get("created_at")?,
                    tenant,
                    id,
                })
            })
            .collect()
    })
    .await
}

/// Holds the claim of attempt `attempt` for another `lease`; false if it is no longer ours.
pub async fn extend(
    tx: &mut Tx,
    tenant: &TenantId,
    id: Uuid,
    attempt: u32,
    lease: Duration,
) -> Result<bool, StoreError> {
    measured(Operation::WebhookInvocationsExtend, async move {
        let updated = sqlx::query(
            "update webhook_invocations
                set claimed_until = now() + $4 * interval '1 millisecond'
              where tenant_id = $1 and id = $2 and attempts = $3 and status = 'running'",
        )
        .bind(tenant.as_str())
        .bind(id)
        .bind(attempt_i32(attempt))
        .bind(millis_i32(lease))
        .execute(&mut **tx)
        .await?;
        Ok(updated.rows_affected() == 1)
    })
    .await
}

/// Attempt `attempt` got a response: stores it (sealed) and completes the invocation. False if
/// the claim was taken over meanwhile (the newer attempt's outcome stands).
pub async fn succeed(
    tx: &mut Tx,
    tenant: &TenantId,
    cipher: &Cipher,
    id: Uuid,
    attempt: u32,
    response: &serde_json::Value,
) -> Result<bool, StoreError> {
    measured(Operation::WebhookInvocationsSucceed, async move {
        let bytes = serde_json::to_vec(response)
            .map_err(|e| StoreError::Corrupt(format!("webhook response: {e}")))?;
        let sealed = cipher.encrypt(&bytes, &aad(tenant, id, "response"))?;
        let updated = sqlx::query(
            "update webhook_invocations
                set status = 'succeeded', response = $4, error = null, completed_at = now(),
                    claimed_by = null, claimed_until = null
              where tenant_id = $1 and id = $2 and attempts = $3 and status = 'running'",
        )
        .bind(tenant.as_str())
        .bind(id)
        .bind(attempt_i32(attempt))
        .bind(sealed)
        .execute(&mut **tx)
        .await?;
        Ok(updated.rows_affected() == 1)
    })
    .await
}

/// Attempt `attempt` failed and another follows after `delay`.
pub async fn retry(
    tx: &mut Tx,
    tenant: &TenantId,
    id: Uuid,
    attempt: u32,
    delay: Duration,
    error: &str,
) -> Result<bool, StoreError> {
    measured(Operation::WebhookInvocationsRetry, async move {
        let updated = sqlx::query(
            "update webhook_invocations
                set status = 'queued', error = $4,
                    next_attempt_at = now() + $5 * interval '1 millisecond',
                    claimed_by = null, claimed_until = null
              where tenant_id = $1 and id = $2 and attempts = $3 and status = 'running'",
        )
        .bind(tenant.as_str())
        .bind(id)
        .bind(attempt_i32(attempt))
        .bind(error)
        .bind(millis_i32(delay))
        .execute(&mut **tx)
        .await?;
        Ok(updated.rows_affected() == 1)
    })
    .await
}

/// Attempt `attempt` failed and was the last: the invocation is `failed`.
pub async fn fail(
    tx: &mut Tx,
    tenant: &TenantId,
    id: Uuid,
    attempt: u32,
    error: &str,
) -> Result<bool, StoreError> {
    measured(Operation::WebhookInvocationsFail, async move {
        let updated = sqlx::query(
            "update webhook_invocations
                set status = 'failed', error = $4, completed_at = now(),
                    claimed_by = null, claimed_until = null
              where tenant_id = $1 and id = $2 and attempts = $3 and status = 'running'",
        )
        .bind(tenant.as_str())
        .bind(id)
        .bind(attempt_i32(attempt))
        .bind(error)
        .execute(&mut **tx)
        .await?;
        Ok(updated.rows_affected() == 1)
    })
    .await
}

/// Deletes invocations completed longer than `retention` ago (every tenant's); returns how
/// many.
pub async fn prune(pool: &sqlx::PgPool, retention: Duration) -> Result<u64, StoreError> {
    measured(Operation::WebhookInvocationsPrune, async move {
        let millis = i64::try_from(retention.as_millis()).unwrap_or(i64::MAX);
        let pruned: i64 = sqlx::query_scalar("select shoal_prune_webhook_invocations($1)")
            .bind(millis)
            .fetch_one(pool)
            .await?;
        Ok(u64::try_from(pruned).unwrap_or_default())
    })
    .await
}

fn attempts(stored: i32) -> u32 {
    u32::try_from(stored).unwrap_or_default()
}

fn attempt_i32(attempt: u32) -> i32 {
    i32::try_from(attempt).unwrap_or(i32::MAX)
}

fn millis_i32(duration: Duration) -> i32 {
    i32::try_from(duration.as_millis()).unwrap_or(i32::MAX)
}
