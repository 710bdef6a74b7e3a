//! Retries that outlive the worker. Azure Functions runs a retry policy in memory on the
//! instance while the message stays locked or invisible (azure-webjobs-sdk
//! `src/Microsoft.Azure.WebJobs.Host/Executors/FunctionExecutorExtensions.cs`, a loop around
//! `Utility.WaitForNextExecutionAttempt`), so a long delay ties up the instance and is lost with
//! it: after a restart the message comes back with its dequeue count raised and its
//! `RetryCount` starting again at 0. Shoal departs from that for long waits: when the next
//! attempt is [`PARK_FROM`] or more away, a trigger that can park its message at the source
//! does so (a queue message's visibility timeout), and Postgres keeps where the message's
//! retries stand ([`RetryState`]). Whichever worker receives it when it is due picks the
//! sequence up there: the same `RetryCount`, the same back-off, and a dequeue count that the
//! hop did not raise.
//!
//! The handler can ask for the same: a response field `"retryAfter": "00:05:00"` (see
//! [`parse_retry_after_field`]) or a `Retry-After` header on a failure status other than 429
//! and 503 (which ask Shoal to slow down, see the invoker's `pressure`) sets the wait before
//! the next try of that message.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::timespan::TimeSpan;

/// From this wait on, a retry is parked at the message's source rather than waited for in
/// memory: long enough that the write to Postgres and the update of the message cost nothing
/// next to it, short enough that a restart in the middle of a back-off no longer starts the
/// policy over.
pub const PARK_FROM: Duration = Duration::from_secs(30);

/// The longest wait a retry is parked for: Azure Storage's longest visibility timeout (7
/// days, `Update Message`'s `visibilitytimeout`). A handler's longer `retryAfter` is cut to it.
pub const LONGEST: Duration = Duration::from_secs(7 * 24 * 3600);

/// How much of the previous failure is kept with a parked message (its `RetryContext`'s
/// `Exception.Message`).
pub const FAILURE_LIMIT: usize = 1024;

/// Where a message's retries stand: carried from one attempt to the next in memory, and
/// across a park in Postgres.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RetryState {
    /// Retries made so far (the next attempt's `RetryCount`).
    pub retries: u32,
    /// Why the last attempt failed; none before the first retry.
    pub previous_failure: Option<String>,
    /// The policy's back-off so far: Azure's exponential back-off never shrinks once it has
    /// grown, so the next wait is at least this.
    pub backoff: Duration,
}

impl RetryState {
    /// The state after a failed attempt (`reason`) whose retry waits `backoff` by the policy.
    pub fn failed(&self, reason: &str, backoff: Duration) -> RetryState {
        RetryState {
            retries: self.retries.saturating_add(1),
            previous_failure: Some(cut(reason, FAILURE_LIMIT)),
            backoff,
        }
    }
}

/// Whether a retry `wait` away is parked at the message's source.
pub fn parks(wait: Duration) -> bool {
    wait >= PARK_FROM
}

/// What a worker does with a parked message that came back, by when its retry is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Return {
    /// Due (or nearly): the next attempt starts now.
    Resume,
    /// Back early (the update that parked it did not happen, or its worker died before it):
    /// park it again for what remains, costing it no attempt.
    ParkAgain(Duration),
}

/// How early a parked message may come back and still be tried: the clocks of the worker that
/// parked it, of Postgres and of the queue service differ by about this much.
const EARLY: Duration = Duration::from_secs(1);

pub fn on_return(due_at: DateTime<Utc>, now: DateTime<Utc>) -> Return {
    match (due_at - now).to_std() {
        Ok(remaining) if remaining > EARLY => Return::ParkAgain(remaining.min(LONGEST)),
        _ => Return::Resume,
    }
}

/// The handler's `retryAfter` response field: a `TimeSpan` (`"00:05:00"`) or whole seconds
/// (`300`), cut to [`LONGEST`]. Not part of Azure's custom-handler protocol (its host reads
/// only `Outputs`, `Logs` and `ReturnValue`); Shoal's own, as are `Settlement` and
/// `batchItemFailures`.
pub fn parse_retry_after_field(value: &Value) -> Result<Duration, String> {
    const EXPECTED: &str =
        "retryAfter must be a duration like \"00:05:00\" or a whole number of seconds";
    let wait = match value {
        Value::String(s) => TimeSpan::parse(s)
            .map(|t| t.as_duration())
            .map_err(|e| format!("retryAfter {e}"))?,
        Value::Number(n) => n
            .as_u64()
            .map(Duration::from_secs)
            .ok_or_else(|| EXPECTED.to_owned())?,
        _ => return Err(EXPECTED.to_owned()),
    };
    Ok(wait.min(LONGEST))
}

/// `text` cut to at most `limit` bytes, at a character boundary.
fn cut(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    #[test]
    fn only_waits_of_thirty_seconds_and_more_are_parked() {
        let cases = [(0, false), (1, false), (29, false), (30, true), (600, true)];
        for (secs, parked) in cases {
            assert_eq!(parks(Duration::from_secs(secs)), parked, "{secs} s");
        }
    }

    #[test]
    fn a_message_back_early_is_parked_again_for_what_remains() {
        let now = DateTime::parse_from_rfc3339("2026-11-29T10:00:00Z")
            .unwrap()
            .to_utc();
        let s = chrono::Duration::seconds;
        let cases = [
            (now - s(30), Return::Resume),
            (now, Return::Resume),
            (now + s(1), Return::Resume),
            (now + s(2), Return::ParkAgain(Duration::from_secs(2))),
            (now + s(600), Return::ParkAgain(Duration::from_secs(600))),
            (now + s(30 * 24 * 3600), Return::ParkAgain(LONGEST)),
        ];
        for (due, expected) in cases {
            assert_eq!(on_return(due, now), expected, "due {due}");
        }
    }

    #[test]
    fn retry_after_fields() {
        let s = Duration::from_secs;
        let cases = [
            (json!("00:05:00"), Ok(s(300))),
            (json!("1.00:00:00"), Ok(s(86_400))),
            (json!(30), Ok(s(30))),
            (json!(0), Ok(s(0))),
            (json!("30.00:00:00"), Ok(LONGEST)),
            (json!(u64::MAX), Ok(LONGEST)),
        ];
        for (value, expected) in cases {
            assert_eq!(parse_retry_after_field(&value), expected, "{value}");
        }
        for bad in [json!("soon"), json!(-1), json!(1.5), json!(true), json!({})] {
            let error = parse_retry_after_field(&bad).unwrap_err();
            assert!(error.starts_with("retryAfter "), "{bad}: {error}");
        }
    }

    #[test]
    fn a_failure_counts_a_retry_and_keeps_a_bounded_reason() {
        let state = RetryState::default().failed("the handler answered 500", PARK_FROM);
        assert_eq!(
            state,
            RetryState {
                retries: 1,
                previous_failure: Some("the handler answered 500".into()),
                backoff: PARK_FROM,
            }
        );
        let long = "é".repeat(FAILURE_LIMIT);
        let kept = state.failed(&long, PARK_FROM).previous_failure.unwrap();
        assert!(kept.len() <= FAILURE_LIMIT && long.starts_with(&kept));
        assert_eq!(state.failed("x", PARK_FROM).retries, 2);
    }

    proptest! {
        #[test]
        fn a_parked_retry_is_never_tried_early_nor_parked_past_its_due_time(
            offset in -100_000i64..100_000, now_secs in 0i64..4_000_000_000,
        ) {
            let now = DateTime::from_timestamp(now_secs, 0).unwrap();
            let due = now + chrono::Duration::seconds(offset);
            match on_return(due, now) {
                Return::Resume => prop_assert!(offset <= 1),
                Return::ParkAgain(wait) => {
                    prop_assert!(offset > 1);
                    prop_assert_eq!(wait, Duration::from_secs(offset as u64));
                }
            }
        }
    }
}
