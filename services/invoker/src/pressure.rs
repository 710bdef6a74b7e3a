//! What a failed call says about the handler itself rather than about the message: that it
//! could not be reached at all (no connection), or that it asked Shoal to slow down (429 or 503,
//! with or without `Retry-After`). Neither is the message's failure, so the worker counts
//! neither as an attempt (see the worker's `invocation` and `handler_health`).
//!
//! Azure Functions starts the custom handler itself and waits for it before invoking: its
//! readiness check (azure-functions-host `src/WebJobs.Script/Workers/Http/
//! DefaultHttpWorkerService.cs`, `IsWorkerReady`) sends a request to the handler's base URL,
//! takes any HTTP response as ready and a socket-level failure as "not yet" — Shoal's probe
//! ([`crate::Invoker::probe`]) follows that rule. Once running, the same file's
//! `ProcessDefaultInvocationRequest` calls `EnsureSuccessStatusCode`, so Azure counts a 429 or
//! 503 like any other failure; Shoal departs from that on purpose, as its handlers are the
//! tenant's own services that may be overloaded or mid-deploy.

use std::time::{Duration, SystemTime};

use crate::InvocationError;

/// The longest delay a `Retry-After` is taken at: a handler's answer must not park a message
/// for a day (a larger value is cut to this).
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(300);

/// What a failed call says about the handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandlerSignal {
    /// No connection was made: refused, a connect timeout, or the name did not resolve. The
    /// request never reached the handler.
    Unreachable,
    /// 429 or 503: the handler asks Shoal to slow down, for `retry_after` when it said how
    /// long (already cut to [`MAX_RETRY_AFTER`]).
    Throttled { retry_after: Option<Duration> },
}

impl InvocationError {
    /// Every label [`InvocationError::label`] returns.
    pub const LABELS: [&'static str; 8] = [
        "timeout",
        "unreachable",
        "connection_lost",
        "status",
        "malformed",
        "read",
        "egress_refused",
        "too_large",
    ];

    /// The handler's HTTP status, when it answered one that failed the call.
    pub fn status(&self) -> Option<u16> {
        match self {
            InvocationError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// A stable label for metrics: which way the call failed.
    pub fn label(&self) -> &'static str {
        match self {
            InvocationError::Timeout(_) => "timeout",
            InvocationError::Unreachable(_) => "unreachable",
            InvocationError::Connect(_) => "connection_lost",
            InvocationError::Status { .. } => "status",
            InvocationError::Malformed(_) => "malformed",
            InvocationError::Read(_) => "read",
            InvocationError::Refused(_) => "egress_refused",
            InvocationError::TooLarge(_) => "too_large",
        }
    }

    /// What this failure says about the handler, if anything; None for the message's own
    /// failures (another status, a timeout after the request was sent, a malformed answer).
    pub fn handler_signal(&self, now: SystemTime) -> Option<HandlerSignal> {
        match self {
            InvocationError::Unreachable(_) => Some(HandlerSignal::Unreachable),
            InvocationError::Status {
                status: 429 | 503,
                retry_after,
                ..
            } => Some(HandlerSignal::Throttled {
                retry_after: retry_after
                    .as_deref()
                    .and_then(|value| parse_retry_after(value, now)),
            }),
            _ => None,
        }
    }

    /// The wait before the next try of the message that a failure asks for: a `Retry-After`
    /// on any failure status but 429 and 503 (those ask Shoal to slow down, see
    /// [`InvocationError::handler_signal`]), cut to the longest a retry is parked
    /// (`shoal_domain::durable_retry::LONGEST`). The attempt still counts as failed.
    pub fn asks_retry_after(&self, now: SystemTime) -> Option<Duration> {
        match self {
            InvocationError::Status {
                status,
                retry_after: Some(value),
                ..
            } if !matches!(status, 429 | 503) => {
                retry_after_delay(value, now).map(|d| d.min(shoal_domain::durable_retry::LONGEST))
            }
            _ => None,
        }
    }
}

/// A `Retry-After` value (RFC 9110 §10.2.3): delay-seconds, or an HTTP-date (IMF-fixdate, and
/// the obsolete RFC 850 and asctime forms a recipient must accept), as a delay from `now`. A
/// date in the past is no delay; a value that is neither is None (the caller's default
/// applies). Cut to [`MAX_RETRY_AFTER`].
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    retry_after_delay(value, now).map(|d| d.min(MAX_RETRY_AFTER))
}

/// A `Retry-After` value as a delay from `now`, uncut.
fn retry_after_delay(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    let delay = if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // More digits than a u64 holds is still "a long time".
        Duration::from_secs(value.parse::<u64>().unwrap_or(u64::MAX))
    } else {
        let at = httpdate::parse_http_date(value).ok()?;
        at.duration_since(now).unwrap_or(Duration::ZERO)
    };
    Some(delay)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_values() {
        // 1994-11-06T08:49:37Z, the RFC's example date.
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777);
        let s = Duration::from_secs;
        let cases: &[(&str, Option<Duration>)] = &[
            ("2", Some(s(2))),
            (" 120 ", Some(s(120))),
            ("0", Some(s(0))),
            ("86400", Some(MAX_RETRY_AFTER)),
            ("99999999999999999999999", Some(MAX_RETRY_AFTER)),
            ("Sun, 06 Nov 1994 08:49:40 GMT", Some(s(3))),
            ("Sunday, 06-Nov-94 08:49:47 GMT", Some(s(10))),
            ("Sun Nov  6 08:50:37 1994", Some(s(60))),
            ("Sun, 06 Nov 1994 08:00:00 GMT", Some(s(0))),
            ("Mon, 07 Nov 1994 08:49:37 GMT", Some(MAX_RETRY_AFTER)),
            ("Sun, 07 Nov 1994 08:49:37 GMT", None),
            ("", None),
            ("-1", None),
            ("1.5", None),
            ("soon", None),
            ("2 seconds", None),
        ];
        for (value, expected) in cases {
            assert_eq!(parse_retry_after(value, now), *expected, "{value:?}");
        }
    }

    #[test]
    fn only_a_missing_connection_or_429_and_503_speak_for_the_handler() {
        let now = SystemTime::UNIX_EPOCH;
        let status = |status: u16, retry_after: Option<&str>| InvocationError::Status {
            status,
            body: String::new(),
            retry_after: retry_after.map(str::to_owned),
        };
        let throttled = |d: Option<u64>| {
            Some(HandlerSignal::Throttled {
                retry_after: d.map(Duration::from_secs),
            })
        };
        let cases: Vec<(InvocationError, Option<HandlerSignal>)> = vec![
            (
                InvocationError::Unreachable("connection refused".into()),
                Some(HandlerSignal::Unreachable),
            ),
            (status(429, Some("2")), throttled(Some(2))),
            (status(503, None), throttled(None)),
            (status(503, Some("later")), throttled(None)),
            (status(500, Some("2")), None),
            (status(502, None), None),
            (status(404, None), None),
            (InvocationError::Timeout(Duration::from_secs(5)), None),
            (
                InvocationError::Connect("connection reset mid-request".into()),
                None,
            ),
            (InvocationError::Read("closed".into()), None),
            (InvocationError::TooLarge(10), None),
        ];
        for (error, expected) in cases {
            assert_eq!(error.handler_signal(now), expected, "{error}");
        }
    }

    #[test]
    fn a_retry_after_on_another_failure_asks_for_a_later_try() {
        let now = SystemTime::UNIX_EPOCH;
        let status = |status: u16, retry_after: Option<&str>| InvocationError::Status {
            status,
            body: String::new(),
            retry_after: retry_after.map(str::to_owned),
        };
        let s = Duration::from_secs;
        let cases = [
            (status(500, Some("600")), Some(s(600))),
            (status(409, Some("30")), Some(s(30))),
            (
                status(500, Some("99999999")),
                Some(shoal_domain::durable_retry::LONGEST),
            ),
            (status(500, None), None),
            (status(500, Some("soon")), None),
            // Slowing down is not a failure of the message (handler_signal).
            (status(429, Some("600")), None),
            (status(503, Some("600")), None),
            (InvocationError::Timeout(s(5)), None),
        ];
        for (error, expected) in cases {
            assert_eq!(error.asks_retry_after(now), expected, "{error}");
        }
    }
}
