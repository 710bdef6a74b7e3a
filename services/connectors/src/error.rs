//! The one error type of the crate, and the mapping from the SDK's errors to it.
//!
//! Messages never carry a SAS signature, account key, client secret or token: the SDK's errors
//! may quote the request URL (with `sig=`), so every message built from them goes through
//! [`Redactor`]. Response bodies are left out altogether; the status and the service's error
//! code say what happened.

use std::error::Error as StdError;

use azure_core::error::ErrorKind;
use azure_core::http::StatusCode;

#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    #[error("queue {queue} does not exist")]
    QueueNotFound { queue: String },
    /// A Service Bus queue or subscription the management API does not know.
    #[error("{entity} does not exist")]
    EntityNotFound { entity: String },
    /// A delete or visibility update found no message under that pop receipt: it was deleted,
    /// expired, or became visible and was received again (with a new receipt).
    #[error(
        "message {message_id} in queue {queue} is gone or was received again (its pop receipt no longer matches)"
    )]
    MessageNotFound { queue: String, message_id: String },
    /// 401/403 from storage, or the identity platform refused to issue a token.
    #[error("not authorized: {0}")]
    Unauthorized(String),
    /// Network failures, timeouts, throttling and 5xx: worth retrying later.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// The server's certificate is not trusted (or the handshake failed otherwise).
    #[error("TLS failure: {0}")]
    Tls(String),
    /// The connection cannot be used as configured (wrong kind, bad key, missing settings).
    #[error("invalid connection: {0}")]
    InvalidConnection(String),
    #[error("{0}")]
    Other(String),
}

impl QueueError {
    /// Every label [`QueueError::label`] returns.
    pub const LABELS: [&'static str; 8] = [
        "queue_not_found",
        "entity_not_found",
        "message_not_found",
        "unauthorized",
        "unavailable",
        "tls",
        "invalid_connection",
        "other",
    ];

    /// A stable label for metrics, one per variant.
    pub fn label(&self) -> &'static str {
        match self {
            QueueError::QueueNotFound { .. } => "queue_not_found",
            QueueError::EntityNotFound { .. } => "entity_not_found",
            QueueError::MessageNotFound { .. } => "message_not_found",
            QueueError::Unauthorized(_) => "unauthorized",
            QueueError::Unavailable(_) => "unavailable",
            QueueError::Tls(_) => "tls",
            QueueError::InvalidConnection(_) => "invalid_connection",
            QueueError::Other(_) => "other",
        }
    }

    /// Whether retrying the same call later may succeed without anyone changing anything.
    pub fn is_transient(&self) -> bool {
        matches!(self, QueueError::Unavailable(_))
    }
}

/// The operation that failed, for the error mapping and the message.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Op<'a> {
    Create,
    Receive,
    Enqueue,
    Properties,
    Peek,
    Delete { message_id: &'a str },
    UpdateVisibility { message_id: &'a str },
}

impl Op<'_> {
    fn name(&self) -> &'static str {
        match self {
            Op::Create => "create queue",
            Op::Receive => "receive messages",
            Op::Enqueue => "enqueue message",
            Op::Properties => "get queue properties",
            Op::Peek => "peek messages",
            Op::Delete { .. } => "delete message",
            Op::UpdateVisibility { .. } => "update message visibility",
        }
    }

    fn message_id(&self) -> Option<&str> {
        match self {
            Op::Delete { message_id } | Op::UpdateVisibility { message_id } => Some(message_id),
            _ => None,
        }
    }
}

/// Removes secrets from text that may quote URLs or credentials.
#[derive(Clone, Debug, Default)]
pub(crate) struct Redactor {
    secrets: Vec<String>,
}

const REDACTED: &str = "<redacted>";

/// Query parameters and prefixes whose values are secret wherever they appear.
const SECRET_MARKERS: &[&str] = &[
    "sig=",
    "accountkey=",
    "client_secret=",
    "client_assertion=",
    "access_token=",
    "bearer ",
];

impl Redactor {
    /// Known secret strings (keys, SAS tokens, client secrets) are removed verbatim and
    /// percent-encoded, in addition to the markers every message is scrubbed of.
    pub(crate) fn new(secrets: impl IntoIterator<Item = String>) -> Redactor {
        let mut all = Vec::new();
        for secret in secrets.into_iter().filter(|s| s.len() >= 6) {
            let encoded =
                percent_encoding::utf8_percent_encode(&secret, percent_encoding::NON_ALPHANUMERIC)
                    .to_string();
            if encoded != secret {
                all.push(encoded);
            }
            all.push(secret);
        }
        Redactor { secrets: all }
    }

    pub(crate) fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in &self.secrets {
            out = out.replace(secret.as_str(), REDACTED);
        }
        for marker in SECRET_MARKERS {
            out = redact_after(&out, marker);
        }
        out
    }
}

/// Replaces the value after each case-insensitive `marker` up to a delimiter.
fn redact_after(text: &str, marker: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut rest = 0;
    while let Some(found) = lower[rest..].find(marker) {
        let value_start = rest + found + marker.len();
        out.push_str(&text[rest..value_start]);
        let value_len = text[value_start..]
            .find(|c: char| matches!(c, '&' | ';' | ')' | '"' | '\'') || c.is_whitespace())
            .unwrap_or(text.len() - value_start);
        if value_len > 0 {
            out.push_str(REDACTED);
        }
        rest = value_start + value_len;
    }
    out.push_str(&text[rest..]);
    out
}

/// The error's message and its causes, `: `-separated, without repeats (the SDK wraps errors
/// with context that often restates the cause).
fn chain_message(err: &(dyn StdError + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(err);
    while let Some(e) = next {
        let text = e.to_string();
        if !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = e.source();
    }
    parts.join(": ")
}

fn causes<'a>(
    err: &'a (dyn StdError + 'static),
) -> impl Iterator<Item = &'a (dyn StdError + 'static)> {
    std::iter::successors(Some(err), |&e| e.source())
}

/// A rustls error anywhere in the chain, including inside (nested) `io::Error`s, whose
/// `source` skips the error they wrap.
fn is_tls_failure(err: &(dyn StdError + 'static)) -> bool {
    fn wraps_rustls(mut e: &(dyn StdError + 'static)) -> bool {
        loop {
            if e.is::<rustls::Error>() {
                return true;
            }
            match e
                .downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
            {
                Some(inner) => e = inner,
                None => return false,
            }
        }
    }
    causes(err).any(wraps_rustls)
}

fn is_network_failure(err: &(dyn StdError + 'static)) -> bool {
    causes(err).any(|e| {
        e.downcast_ref::<azure_core::Error>()
            .is_some_and(|a| matches!(a.kind(), ErrorKind::Io | ErrorKind::Connection))
            || e.downcast_ref::<reqwest::Error>()
                .is_some_and(|r| r.is_connect() || r.is_timeout())
            || e.is::<std::io::Error>()
    })
}

fn transient_status(status: StatusCode) -> bool {
    matches!(u16::from(status), 408 | 429 | 500..=599)
}

fn http_status_in_chain(err: &(dyn StdError + 'static)) -> Option<StatusCode> {
    causes(err).find_map(|e| e.downcast_ref::<azure_core::Error>()?.http_status())
}

/// Maps a failed SDK call on `queue` to a [`QueueError`].
pub(crate) fn from_azure(
    err: &azure_core::Error,
    op: Op<'_>,
    queue: &str,
    redactor: &Redactor,
) -> QueueError {
    let detail = || redactor.redact(&format!("{}: {}", op.name(), chain_message(err)));
    match err.kind() {
        ErrorKind::HttpResponse {
            status, error_code, ..
        } => from_status(*status, error_code.as_deref(), op, queue),
        ErrorKind::Credential => credential_error(err, redactor),
        _ if is_tls_failure(err) => QueueError::Tls(detail()),
        ErrorKind::Io | ErrorKind::Connection => QueueError::Unavailable(detail()),
        _ => QueueError::Other(detail()),
    }
}

fn from_status(status: StatusCode, code: Option<&str>, op: Op<'_>, queue: &str) -> QueueError {
    let described = format!(
        "{} answered {} {}",
        op.name(),
        u16::from(status),
        code.unwrap_or("(no error code)")
    );
    let message_gone = |message_id: &str| QueueError::MessageNotFound {
        queue: queue.to_owned(),
        message_id: message_id.to_owned(),
    };
    match (u16::from(status), code, op.message_id()) {
        (404, Some("QueueNotFound"), _) | (404, None, None) => QueueError::QueueNotFound {
            queue: queue.to_owned(),
        },
        (404, _, Some(message_id)) | (400, Some("PopReceiptMismatch"), Some(message_id)) => {
            message_gone(message_id)
        }
        (401 | 403, _, _) => QueueError::Unauthorized(described),
        _ if transient_status(status) => QueueError::Unavailable(described),
        _ => QueueError::Other(described),
    }
}

/// The bearer policy could not get a token: say why, and whether it is worth retrying.
fn credential_error(err: &azure_core::Error, redactor: &Redactor) -> QueueError {
    let detail = redactor.redact(&format!("getting a token: {}", chain_message(err)));
    if is_tls_failure(err) {
        return QueueError::Tls(detail);
    }
    match http_status_in_chain(err) {
        Some(status) if transient_status(status) => QueueError::Unavailable(detail),
        Some(_) => QueueError::Unauthorized(detail),
        None if is_network_failure(err) => QueueError::Unavailable(detail),
        None => QueueError::Unauthorized(detail),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redactor_removes_signatures_keys_and_known_secrets() {
        let redactor = Redactor::new(["s3cret+key/==".to_owned()]);
        let cases = [
            (
                "error sending request for url (http://127.0.0.1:1/a/q/messages?numofmessages=1&sv=2025-11-05&sig=abc%2Bdef%3D)",
                "error sending request for url (http://127.0.0.1:1/a/q/messages?numofmessages=1&sv=2025-11-05&sig=<redacted>)",
            ),
            ("SIG=abc&x=1", "SIG=<redacted>&x=1"),
            ("?sig=", "?sig="),
            (
                "key s3cret+key/== and s3cret%2Bkey%2F%3D%3D",
                "key <redacted> and <redacted>",
            ),
            ("AccountKey=abc;x", "AccountKey=<redacted>;x"),
            (
                "Authorization: Bearer eyJ.abc.def end",
                "Authorization: Bearer <redacted> end",
            ),
            ("nothing secret", "nothing secret"),
        ];
        for (text, want) in cases {
            assert_eq!(redactor.redact(text), want, "{text}");
        }
    }

    #[test]
    fn statuses_map_to_variants() {
        let delete = Op::Delete { message_id: "m1" };
        let cases: [(u16, Option<&str>, Op, &str); 10] = [
            (404, Some("QueueNotFound"), Op::Receive, "QueueNotFound"),
            (404, None, Op::Properties, "QueueNotFound"),
            (404, Some("QueueNotFound"), delete, "QueueNotFound"),
            (404, Some("MessageNotFound"), delete, "MessageNotFound"),
            (
                404,
                None,
                Op::UpdateVisibility { message_id: "m" },
                "MessageNotFound",
            ),
            (400, Some("PopReceiptMismatch"), delete, "MessageNotFound"),
            (
                403,
                Some("AuthenticationFailed"),
                Op::Enqueue,
                "Unauthorized",
            ),
            (401, None, Op::Create, "Unauthorized"),
            (503, Some("ServerBusy"), Op::Receive, "Unavailable"),
            (
                400,
                Some("InvalidQueryParameterValue"),
                Op::Receive,
                "Other",
            ),
        ];
        for (status, code, op, want) in cases {
            let got = from_status(StatusCode::from(status), code, op, "q");
            let name = format!("{got:?}");
            assert!(name.starts_with(want), "{status} {code:?} {op:?}: {name}");
            assert_eq!(got.is_transient(), want == "Unavailable");
        }
    }
}
