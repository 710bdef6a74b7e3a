use thiserror::Error;

/// Everything a repository call can fail with. The API maps these to HTTP in one place.
#[derive(Debug, Error)]
pub enum StoreError {
    #[error("not found")]
    NotFound,
    #[error("precondition failed")]
    PreconditionFailed,
    #[error("conflict: {0}")]
    Conflict(String),
    #[error("quota exceeded: {0}")]
    QuotaExceeded(String),
    /// Postgres cannot be reached (connection refused, pool timed out, shutting down).
    #[error("database unavailable: {0}")]
    Unavailable(#[source] sqlx::Error),
    #[error("database error: {0}")]
    Database(#[source] sqlx::Error),
    /// Stored ciphertext that does not decrypt: wrong `SHOAL_SECRET_KEY` or tampering.
    #[error("stored secret cannot be decrypted: {0}")]
    Crypto(String),
    #[error("stored data is malformed: {0}")]
    Corrupt(String),
    /// Postgres refused a value (SQLSTATE class 22, e.g. a NUL character in text or JSON):
    /// bad input that validation let through, not an outage.
    #[error("the database cannot store a value: {0}")]
    InvalidValue(String),
    /// A leader's write found the scheduler lease held by someone else or a later epoch.
    #[error("the scheduler lease of epoch {epoch} is no longer held")]
    Fenced { epoch: i64 },
}

impl From<sqlx::Error> for StoreError {
    fn from(err: sqlx::Error) -> Self {
        if is_unavailable(&err) {
            return StoreError::Unavailable(err);
        }
        if let sqlx::Error::Database(db) = &err
            && db.code().is_some_and(|c| c.starts_with("22"))
        {
            return StoreError::InvalidValue(db.message().to_string());
        }
        StoreError::Database(err)
    }
}

/// Errors that mean "Postgres is down or unreachable" rather than "this query is wrong".
fn is_unavailable(err: &sqlx::Error) -> bool {
    match err {
        sqlx::Error::Io(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::Tls(_) => true,
        sqlx::Error::Database(db) => {
            // 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now,
            // 08xxx connection exceptions, 53300 too_many_connections.
            db.code()
                .is_some_and(|c| c.starts_with("08") || c.starts_with("57P") || c == "53300")
        }
        _ => false,
    }
}
