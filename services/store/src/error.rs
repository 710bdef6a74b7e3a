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

impl StoreError {
    /// A stable snake_case name for metrics.
    pub fn metric_label(&self) -> &'static str {
        match self {
            StoreError::NotFound => "not_found",
            StoreError::PreconditionFailed => "precondition_failed",
            StoreError::Conflict(_) => "conflict",
            StoreError::QuotaExceeded(_) => "quota_exceeded",
            StoreError::Unavailable(_) => "unavailable",
            StoreError::Database(_) => "database",
            StoreError::Crypto(_) => "crypto",
            StoreError::Corrupt(_) => "corrupt",
            StoreError::InvalidValue(_) => "invalid_value",
            StoreError::Fenced { .. } => "fenced",
        }
    }

    /// Whether the database failed, rather than answered something the caller handles (not
    /// found, a conflict, a precondition, a quota, a fence): what makes a store span an error.
    pub fn is_fault(&self) -> bool {
        matches!(
            self,
            StoreError::Unavailable(_)
                | StoreError::Database(_)
                | StoreError::Crypto(_)
                | StoreError::Corrupt(_)
        )
    }
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

/// An integrity constraint a write may violate, as a store module names what it expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Violation {
    /// Any unique constraint (SQLSTATE 23505).
    Unique,
    /// Any foreign key (SQLSTATE 23503): usually the parent row was deleted meanwhile.
    ForeignKey,
    /// The constraint of this name, whatever its kind.
    Named(&'static str),
}

impl Violation {
    fn matches(self, code: Option<&str>, constraint: Option<&str>) -> bool {
        match self {
            Violation::Unique => code == Some("23505"),
            Violation::ForeignKey => code == Some("23503"),
            Violation::Named(name) => constraint == Some(name),
        }
    }
}

/// The one place a violated constraint becomes a store error: `then()` when `err` violates
/// `violation`, the usual mapping otherwise. The API turns the result into its status.
pub(crate) fn on_violation(
    err: sqlx::Error,
    violation: Violation,
    then: impl FnOnce() -> StoreError,
) -> StoreError {
    if let sqlx::Error::Database(db) = &err
        && violation.matches(db.code().as_deref(), db.constraint())
    {
        return then();
    }
    StoreError::from(err)
}

#[cfg(test)]
mod tests {
    use super::{StoreError, Violation};

    #[test]
    fn every_error_has_a_stable_snake_case_metric_label() {
        let cases = [
            (StoreError::NotFound, "not_found"),
            (StoreError::PreconditionFailed, "precondition_failed"),
            (StoreError::Conflict("x".into()), "conflict"),
            (StoreError::QuotaExceeded("x".into()), "quota_exceeded"),
            (
                StoreError::Unavailable(sqlx::Error::PoolTimedOut),
                "unavailable",
            ),
            (StoreError::Database(sqlx::Error::RowNotFound), "database"),
            (StoreError::Crypto("x".into()), "crypto"),
            (StoreError::Corrupt("x".into()), "corrupt"),
            (StoreError::InvalidValue("x".into()), "invalid_value"),
            (StoreError::Fenced { epoch: 1 }, "fenced"),
        ];
        for (error, label) in cases {
            assert_eq!(error.metric_label(), label, "{error}");
        }
    }

    #[test]
    fn a_violation_matches_its_sqlstate_or_its_constraint_name() {
        let cases = [
            (Violation::Unique, Some("23505"), None, true),
            (
                Violation::Unique,
                Some("23505"),
                Some("principals_external"),
                true,
            ),
            (Violation::Unique, Some("23503"), None, false),
            (Violation::Unique, None, None, false),
            (
                Violation::ForeignKey,
                Some("23503"),
                Some("functions_app_fk"),
                true,
            ),
            (Violation::ForeignKey, Some("23505"), None, false),
            (Violation::ForeignKey, Some("23514"), None, false),
            (
                Violation::Named("principals_external"),
                Some("23505"),
                Some("principals_external"),
                true,
            ),
            (
                Violation::Named("principals_external"),
                Some("23505"),
                Some("principals_pkey"),
                false,
            ),
            (
                Violation::Named("principals_external"),
                Some("23505"),
                None,
                false,
            ),
        ];
        for (violation, code, constraint, expected) in cases {
            assert_eq!(
                violation.matches(code, constraint),
                expected,
                "{violation:?} against {code:?}/{constraint:?}"
            );
        }
    }
}
