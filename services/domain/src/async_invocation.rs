//! Webhook invocations accepted with `?mode=async`: their lifecycle and retry schedule.
//!
//! `queued` → `running` (a dispatcher claimed it) → `succeeded`, or back to `queued` after a
//! failed attempt until [`MAX_ATTEMPTS`], then `failed`. A failure is the handler not
//! answering usably (unreachable, timeout, non-2xx, malformed); an HTTP response the function
//! chose to give, whatever its status, is a success stored for the caller to read.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Attempts before an invocation is `failed`.
pub const MAX_ATTEMPTS: u32 = 5;
/// How long completed invocations stay readable before they are pruned.
pub const RETENTION: Duration = Duration::from_secs(24 * 60 * 60);
/// First retry delay; doubled each time, up to [`MAX_RETRY_DELAY`].
pub const FIRST_RETRY_DELAY: Duration = Duration::from_secs(1);
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(60);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum InvocationStatus {
    Queued,
    Running,
    Succeeded,
    Failed,
}

impl InvocationStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            InvocationStatus::Queued => "queued",
            InvocationStatus::Running => "running",
            InvocationStatus::Succeeded => "succeeded",
            InvocationStatus::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<InvocationStatus> {
        [
            InvocationStatus::Queued,
            InvocationStatus::Running,
            InvocationStatus::Succeeded,
            InvocationStatus::Failed,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }
}

/// After attempt `attempt` (1-based) failed: wait this long and try again, or `None` when it
/// was the last one. Exponential (1, 2, 4, 8 s …) so a handler that is briefly down is not
/// hammered, capped so a long outage still retries within a minute.
pub fn retry_delay(attempt: u32) -> Option<Duration> {
    if attempt >= MAX_ATTEMPTS {
        return None;
    }
    let doublings = attempt.saturating_sub(1).min(16);
    Some((FIRST_RETRY_DELAY * 2u32.pow(doublings)).min(MAX_RETRY_DELAY))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_exponentially_until_the_last_attempt() {
        let delays: Vec<Option<u64>> = (1..=6)
            .map(|a| retry_delay(a).map(|d| d.as_secs()))
            .collect();
        assert_eq!(delays, [Some(1), Some(2), Some(4), Some(8), None, None]);
        assert_eq!(retry_delay(0), Some(FIRST_RETRY_DELAY));
    }

    #[test]
    fn delays_are_capped() {
        for attempt in 1..MAX_ATTEMPTS {
            assert!(retry_delay(attempt).unwrap() <= MAX_RETRY_DELAY);
        }
    }

    #[test]
    fn statuses_round_trip() {
        for text in ["queued", "running", "succeeded", "failed"] {
            assert_eq!(InvocationStatus::parse(text).unwrap().as_str(), text);
        }
        assert_eq!(InvocationStatus::parse("done"), None);
        assert_eq!(
            serde_json::to_value(InvocationStatus::Succeeded).unwrap(),
            "succeeded"
        );
    }
}
