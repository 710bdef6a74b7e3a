//! The audit log: who did what to which resource, and whether it was allowed.

use crate::metrics::{Operation, measured};
use crate::{StoreError, Tx};

#[derive(Debug, Clone)]
pub struct AuditEntry<'a> {
    pub principal: &'a str,
    pub action: &'a str,
    pub resource: &'a str,
    pub outcome: &'a str,
    pub request_id: Option<&'a str>,
}

/// Appends an entry in the caller's transaction, so the entry commits with the write it
/// records. The tenant comes from the transaction's scope (null for platform scope).
pub async fn record(tx: &mut Tx, entry: &AuditEntry<'_>) -> Result<(), StoreError> {
    measured(Operation::AuditRecord, async move {
        sqlx::query(
            "insert into audit_log (tenant_id, principal, action, resource, outcome, request_id)
             values (shoal_current_tenant(), $1, $2, $3, $4, $5)",
        )
        .bind(entry.principal)
        .bind(entry.action)
        .bind(entry.resource)
        .bind(entry.outcome)
        .bind(entry.request_id)
        .execute(&mut **tx)
        .await?;
        Ok(())
    })
    .await
}

#[derive(Debug, Clone, PartialEq)]
pub struct AuditRecord {
    pub id: i64,
    pub at: chrono::DateTime<chrono::Utc>,
    pub principal: String,
    pub action: String,
    pub resource: String,
    pub outcome: String,
    pub request_id: Option<String>,
}

/// The scope's entries (the transaction's tenant, or the platform's), newest first, older
/// than `before` (an entry id) when given.
pub async fn list(
    tx: &mut Tx,
    before: Option<i64>,
    limit: u32,
) -> Result<Vec<AuditRecord>, StoreError> {
    measured(Operation::AuditList, async move {
        type Row = (
            i64,
            chrono::DateTime<chrono::Utc>,
            String,
            String,
            String,
            String,
            Option<String>,
        );
        let rows: Vec<Row> = sqlx::query_as(
            "select id, at, principal, action, resource, outcome, request_id from audit_log
             where tenant_id is not distinct from shoal_current_tenant()
               and ($1::bigint is null or id < $1)
             order by id desc limit $2",
        )
        .bind(before)
        .bind(i64::from(limit))
        .fetch_all(&mut **tx)
        .await?;
        Ok(rows
            .into_iter()
            .map(
                |(id, at, principal, action, resource, outcome, request_id)| AuditRecord {
                    id,
                    at,
                    principal,
                    action,
                    resource,
                    outcome,
                    request_id,
                },
            )
            .collect())
    })
    .await
}
