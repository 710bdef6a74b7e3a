//! A function's handler asking Shoal to slow down (429 or 503, see `shoal_invoker::pressure`),
//! as this worker sees it. Pure, tested below.
//!
//! Each such answer defers that message by its `Retry-After` (or, without one, by a pause
//! that doubles from [`FIRST_DEFERRAL`] to [`LONGEST_DEFERRAL`]) without counting an attempt.
//! While the throttle lasts — from the first such answer to the next success — the listener
//! receives one message at a time, and none before the latest deferral ends. A throttle that
//! lasts longer than the breaker's `window` pauses the function for every worker (cause
//! `throttled`), which half-opens after the cooldown like a breaker opened by failures.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use shoal_store::breakers::FailureSample;

pub const FIRST_DEFERRAL: Duration = Duration::from_secs(1);
pub const LONGEST_DEFERRAL: Duration = Duration::from_secs(30);

#[derive(Debug, Default)]
pub struct Throttle {
    /// When the first 429/503 since the last success came, and what it said.
    since: Option<(Instant, FailureSample)>,
    /// No receive before this.
    until: Option<Instant>,
    /// The next deferral of an answer without `Retry-After`.
    next_default: Option<Duration>,
    /// The pause was asked for (once per throttle).
    pause_asked: bool,
    pending_pause: Option<FailureSample>,
}

impl Throttle {
    /// The handler answered 429/503 at `now` (`at` by the wall clock) with `retry_after`:
    /// how long to defer that message.
    pub fn throttled(
        &mut self,
        now: Instant,
        at: DateTime<Utc>,
        retry_after: Option<Duration>,
        reason: &str,
        window: Duration,
    ) -> Duration {
        let delay = retry_after.unwrap_or_else(|| {
            let next = self.next_default.unwrap_or(FIRST_DEFERRAL);
            self.next_default = Some((next * 2).min(LONGEST_DEFERRAL));
            next
        });
        let (since, why) = self.since.get_or_insert_with(|| {
            (
                now,
                FailureSample {
                    at,
                    reason: reason.chars().take(1024).collect(),
                },
            )
        });
        if !self.pause_asked && now.duration_since(*since) >= window {
            self.pause_asked = true;
            self.pending_pause = Some(why.clone());
        }
        self.until = Some(self.until.map_or(now + delay, |u| u.max(now + delay)));
        delay
    }

    /// A call succeeded: the throttle is over.
    pub fn succeeded(&mut self) {
        if self.since.is_some() || self.until.is_some() {
            *self = Throttle::default();
        }
    }

    pub fn is_throttled(&self) -> bool {
        self.since.is_some()
    }

    /// How much the listener may receive at `now`, of `most`: everything when not throttled;
    /// else one message, after the returned wait.
    pub fn intake(&self, now: Instant, most: u32) -> (u32, Duration) {
        if !self.is_throttled() {
            return (most, Duration::ZERO);
        }
        let wait = self
            .until
            .map_or(Duration::ZERO, |u| u.saturating_duration_since(now));
        (most.min(1), wait)
    }

    /// The throttle outlasted the window: pause the function (taken once).
    pub fn take_pause(&mut self) -> Option<FailureSample> {
        self.pending_pause.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttles_defer_slow_intake_and_pause_when_they_persist() {
        let t0 = Instant::now();
        let at = Utc::now();
        let s = Duration::from_secs;
        let window = s(10);
        let mut t = Throttle::default();
        assert_eq!(t.intake(t0, 16), (16, Duration::ZERO));

        // (seconds after t0, Retry-After, deferral, intake then, pause asked)
        type Step = (u64, Option<u64>, u64, (u32, u64), bool);
        let steps: &[Step] = &[
            (0, Some(2), 2, (1, 2), false),
            (1, None, 1, (1, 1), false),
            (1, None, 2, (1, 2), false),
            (2, None, 4, (1, 4), false),
            (3, Some(120), 120, (1, 120), false),
            (10, Some(1), 1, (1, 113), true),
            (11, Some(1), 1, (1, 112), false),
        ];
        for (i, (after, retry_after, deferral, intake, pause)) in steps.iter().enumerate() {
            let now = t0 + s(*after);
            let d = t.throttled(now, at, retry_after.map(s), "429", window);
            assert_eq!(d, s(*deferral), "step {i}: deferral");
            assert_eq!(
                t.intake(now, 16),
                (intake.0, s(intake.1)),
                "step {i}: intake"
            );
            assert_eq!(t.take_pause().is_some(), *pause, "step {i}: pause");
        }
        t.succeeded();
        assert!(!t.is_throttled());
        assert_eq!(t.intake(t0 + s(12), 16), (16, Duration::ZERO));
        assert_eq!(
            t.throttled(t0 + s(13), at, None, "503", window),
            FIRST_DEFERRAL,
            "a new throttle starts from the first pause"
        );
    }

    #[test]
    fn deferrals_without_retry_after_grow_to_a_cap() {
        let (t0, at) = (Instant::now(), Utc::now());
        let mut t = Throttle::default();
        let secs: Vec<u64> = (0..7)
            .map(|_| {
                t.throttled(t0, at, None, "503", Duration::from_secs(3600))
                    .as_secs()
            })
            .collect();
        assert_eq!(secs, [1, 2, 4, 8, 16, 30, 30]);
    }
}
