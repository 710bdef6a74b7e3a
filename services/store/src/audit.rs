//! The audit log: who did what to which resource, and whether it was allowed.

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
}
