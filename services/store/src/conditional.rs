//! The steps every conditional write shares: read a resource's ETag while locking its row for
//! the rest of the transaction, then check the request's precondition against it.

use crate::{Etag, Precondition, StoreError, Tx};

/// The current ETag of the row `lock_sql` selects (`select etag … for update`, with the keys
/// bound in order), locked until the transaction ends; None when there is no such row.
pub(crate) async fn locked_etag(
    tx: &mut Tx,
    lock_sql: &'static str,
    keys: &[&str],
) -> Result<Option<Etag>, StoreError> {
    let mut query = sqlx::query_scalar(lock_sql);
    for key in keys {
        query = query.bind(*key);
    }
    Ok(query.fetch_optional(&mut **tx).await?)
}

/// Deletes the row `lock_sql` and `delete_sql` name by the same keys: NotFound when it does
/// not exist, PreconditionFailed when the precondition does not hold.
pub(crate) async fn delete_checked(
    tx: &mut Tx,
    lock_sql: &'static str,
    delete_sql: &'static str,
    keys: &[&str],
    precondition: Precondition,
) -> Result<(), StoreError> {
    let current = locked_etag(tx, lock_sql, keys).await?;
    if current.is_none() {
        return Err(StoreError::NotFound);
    }
    precondition.check(current)?;
    let mut query = sqlx::query(delete_sql);
    for key in keys {
        query = query.bind(*key);
    }
    query.execute(&mut **tx).await?;
    Ok(())
}
