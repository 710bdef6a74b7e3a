//! A function whose circuit breaker is not closed: its listeners receive nothing, which the
//! tenant must see beside the app's other checks.

use chrono::{DateTime, Utc};

use super::{Check, CheckStatus};
use crate::circuit_breaker::{BreakerCause, BreakerState};

/// None while the breaker is closed. Opened by failures it is an error (the function stopped
/// by itself); paused by hand or half-open, a warning.
pub fn check_breaker(
    function: &str,
    state: BreakerState,
    cause: Option<BreakerCause>,
    changed_at: Option<DateTime<Utc>>,
    latest_failure: Option<&str>,
) -> Option<Check> {
    let since = changed_at
        .map(|at| {
            format!(
                " since {}",
                at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            )
        })
        .unwrap_or_default();
    let why = latest_failure
        .map(|reason| format!("; the latest failure: {reason}"))
        .unwrap_or_default();
    let (status, detail) = match (state, cause) {
        (BreakerState::Closed, _) => return None,
        (BreakerState::Open, Some(BreakerCause::Paused)) => (
            CheckStatus::Warning,
            format!(
                "paused by hand{since}: its listeners receive nothing until it is resumed (POST …/functions/{function}/resume)"
            ),
        ),
        (BreakerState::Open, Some(BreakerCause::HandlerUnreachable)) => (
            CheckStatus::Error,
            format!(
                "handler unreachable{since}: the app's handler takes no connections, so every listener of the app receives nothing; messages in hand are held and delivered when a probe of the handler is answered{why}"
            ),
        ),
        (BreakerState::Open, Some(BreakerCause::Throttled)) => (
            CheckStatus::Warning,
            format!(
                "paused{since}: the handler kept answering 429 or 503 for longer than the breaker's window; one instance probes with one message after the cooldown{why}"
            ),
        ),
        (BreakerState::Open, _) => (
            CheckStatus::Error,
            format!(
                "the circuit breaker opened{since} after too many final failures: its listeners receive nothing, messages stay in their queue{why}"
            ),
        ),
        (BreakerState::HalfOpen, _) => (
            CheckStatus::Warning,
            format!(
                "the circuit breaker is half-open{since}: one instance probes with one message{why}"
            ),
        ),
    };
    Some(Check {
        function: Some(function.to_owned()),
        binding: None,
        key: Some("circuitBreaker".to_owned()),
        subject: "breaker".to_owned(),
        status,
        detail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_by_failures_is_an_error_paused_or_half_open_a_warning() {
        assert!(check_breaker("f", BreakerState::Closed, None, None, None).is_none());
        let open = check_breaker(
            "f",
            BreakerState::Open,
            Some(BreakerCause::Failures),
            None,
            Some("the handler answered 500"),
        )
        .unwrap();
        assert_eq!(open.status, CheckStatus::Error);
        assert!(open.detail.contains("answered 500"), "{}", open.detail);
        let paused = check_breaker(
            "f",
            BreakerState::Open,
            Some(BreakerCause::Paused),
            None,
            None,
        )
        .unwrap();
        assert_eq!(paused.status, CheckStatus::Warning);
        assert!(paused.detail.contains("resume"));
        let probing = check_breaker(
            "f",
            BreakerState::HalfOpen,
            Some(BreakerCause::Cooldown),
            None,
            None,
        )
        .unwrap();
        assert_eq!(probing.status, CheckStatus::Warning);
    }

    #[test]
    fn an_unreachable_handler_says_since_when() {
        let at = DateTime::parse_from_rfc3339("2026-01-02T03:04:05Z")
            .unwrap()
            .into();
        let down = check_breaker(
            "f",
            BreakerState::Open,
            Some(BreakerCause::HandlerUnreachable),
            Some(at),
            Some("the handler could not be reached: connection refused"),
        )
        .unwrap();
        assert_eq!(down.status, CheckStatus::Error);
        assert!(
            down.detail
                .starts_with("handler unreachable since 2026-01-02T03:04:05Z"),
            "{}",
            down.detail
        );
        let throttled = check_breaker(
            "f",
            BreakerState::Open,
            Some(BreakerCause::Throttled),
            Some(at),
            None,
        )
        .unwrap();
        assert_eq!(throttled.status, CheckStatus::Warning);
        assert!(throttled.detail.contains("429 or 503"));
    }
}
