//! What goes wrong talking to Service Bus. The client library's errors may quote a SAS token or
//! a connection string; every message built from them goes through the connection's
//! `Redactor`.

use azure_core_025::error::ErrorKind;

use crate::error::Redactor;

#[derive(Debug, Clone, thiserror::Error)]
pub enum ServiceBusError {
    /// The connection cannot be used as configured (wrong kind, missing settings, bad URI).
    #[error("invalid connection: {0}")]
    InvalidConnection(String),
    /// The broker refused the credentials or the claim (`Listen`, `Send`).
    #[error("not authorized to {op}: {message}")]
    Unauthorized { op: String, message: String },
    /// The queue, topic or subscription does not exist.
    #[error("{op}: the entity does not exist: {message}")]
    EntityNotFound { op: String, message: String },
    /// The message's (or session's) lock expired or was lost: it is delivered again.
    #[error("{op}: the lock was lost: {message}")]
    LockLost { op: String, message: String },
    /// Network failures, timeouts, a closed connection: worth retrying later.
    #[error("{op} failed: {message}")]
    Unavailable { op: String, message: String },
    /// The broker did not answer at all within `after` (the client library waits without limit
    /// for some answers, an attach's among them): worth retrying, on a new connection.
    #[error("{op}: no answer within {}s", after.as_secs_f32())]
    NoAnswer {
        op: String,
        after: std::time::Duration,
    },
}

impl ServiceBusError {
    pub(crate) fn from_sdk(redactor: &Redactor, op: &str, e: &azure_core_025::Error) -> Self {
        let message = redactor.redact(&chain(e));
        let lower = message.to_ascii_lowercase();
        let op = op.to_owned();
        if matches!(e.kind(), ErrorKind::Credential)
            || lower.contains("unauthorized")
            || lower.contains("unauthorized-access")
        {
            ServiceBusError::Unauthorized { op, message }
        } else if lower.contains("not-found") || lower.contains("notfound") {
            ServiceBusError::EntityNotFound { op, message }
        } else if lower.contains("lock") && (lower.contains("lost") || lower.contains("expired")) {
            ServiceBusError::LockLost { op, message }
        } else {
            ServiceBusError::Unavailable { op, message }
        }
    }

    /// Every label [`ServiceBusError::label`] returns.
    pub const LABELS: [&'static str; 6] = [
        "invalid_connection",
        "unauthorized",
        "entity_not_found",
        "lock_lost",
        "unavailable",
        "no_answer",
    ];

    /// A stable label for metrics, one per variant.
    pub fn label(&self) -> &'static str {
        match self {
            ServiceBusError::InvalidConnection(_) => "invalid_connection",
            ServiceBusError::Unauthorized { .. } => "unauthorized",
            ServiceBusError::EntityNotFound { .. } => "entity_not_found",
            ServiceBusError::LockLost { .. } => "lock_lost",
            ServiceBusError::Unavailable { .. } => "unavailable",
            ServiceBusError::NoAnswer { .. } => "no_answer",
        }
    }

    /// Whether retrying the same call later may succeed without anyone changing anything.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            ServiceBusError::Unavailable { .. } | ServiceBusError::NoAnswer { .. }
        )
    }
}

/// The error and its sources on one line.
fn chain(e: &azure_core_025::Error) -> String {
    let mut out = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

/// Whether accepting the next session ended because none became available in time.
pub(crate) fn is_timeout(e: &azure_core_025::Error) -> bool {
    let text = chain(e).to_ascii_lowercase();
    text.contains("timeout") || text.contains("timed out")
}
