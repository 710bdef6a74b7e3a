//! When a failed invocation is tried again, and after how long: what Azure's executor does
//! between attempts (`azure-webjobs-sdk` `Executors/FunctionExecutorExtensions.cs`, a loop that
//! asks `Utility.WaitForNextExecutionAttempt` after every failed attempt).
//!
//! * `fixedDelay`: `delayInterval` before every retry.
//! * `exponentialBackoff`: as `Timers/RandomizedExponentialBackoffStrategy.cs` computes it with
//!   the minimum as its delta — the first retry waits `minimumInterval`, retry *n* ≥ 2 waits
//!   `minimumInterval + r · 2^(n−2) · minimumInterval` with `r` drawn from [0.8, 1.2], and once
//!   that reaches `maximumInterval` every later retry waits exactly the maximum.
//!
//! One schedule per invocation: the counting starts again for every message.

use std::time::Duration;

use super::{RetryPolicy, RetryStrategy};

/// How far the exponential back-off is randomised either way (Azure's `RandomizationFactor`).
const RANDOMIZATION: f64 = 0.2;

impl RetryPolicy {
    /// Whether an invocation that has failed after `retries` retries gets another attempt
    /// (`maxRetryCount` −1: always).
    pub fn retries_after(&self, retries: u32) -> bool {
        match u32::try_from(self.max_retry_count) {
            Ok(max) => retries < max,
            Err(_) => true,
        }
    }

    /// The wait before retry number `retry` (1 for the first retry). `random` is a draw from
    /// [0, 1); it only matters to `exponentialBackoff`.
    pub fn delay_before(&self, retry: u32, random: f64) -> Duration {
        match self.strategy {
            RetryStrategy::FixedDelay => self
                .delay_interval
                .map(|d| d.as_duration())
                .unwrap_or_default(),
            RetryStrategy::ExponentialBackoff => {
                let min = self
                    .minimum_interval
                    .map(|d| d.as_duration())
                    .unwrap_or_default();
                let max = self
                    .maximum_interval
                    .map(|d| d.as_duration())
                    .unwrap_or(min);
                exponential(min, max, retry, random)
            }
        }
    }
}

fn exponential(min: Duration, max: Duration, retry: u32, random: f64) -> Duration {
    if retry <= 1 {
        return min.min(max);
    }
    let factor = 1.0 - RANDOMIZATION + 2.0 * RANDOMIZATION * random.clamp(0.0, 1.0);
    // 2^(n−2) overflows nothing that matters: past 2^62 the maximum has long been reached.
    let doubling = 2f64.powi(i32::try_from(retry - 2).unwrap_or(i32::MAX).min(62));
    let increment = min.as_secs_f64() * doubling * factor;
    let delay = min.as_secs_f64() + increment;
    if !delay.is_finite() || delay >= max.as_secs_f64() {
        max
    } else {
        Duration::from_secs_f64(delay)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::timespan::TimeSpan;

    fn fixed(max_retry_count: i32, delay: u64) -> RetryPolicy {
        RetryPolicy {
            strategy: RetryStrategy::FixedDelay,
            max_retry_count,
            delay_interval: Some(TimeSpan::from_secs(delay)),
            minimum_interval: None,
            maximum_interval: None,
        }
    }

    fn backoff(max_retry_count: i32, min: u64, max: u64) -> RetryPolicy {
        RetryPolicy {
            strategy: RetryStrategy::ExponentialBackoff,
            max_retry_count,
            delay_interval: None,
            minimum_interval: Some(TimeSpan::from_secs(min)),
            maximum_interval: Some(TimeSpan::from_secs(max)),
        }
    }

    #[test]
    fn max_retry_count_bounds_the_retries_and_minus_one_never_does() {
        let cases = [
            (0, 0, false),
            (2, 0, true),
            (2, 1, true),
            (2, 2, false),
            (-1, 0, true),
            (-1, 1_000_000, true),
        ];
        for (max, done, expected) in cases {
            assert_eq!(
                fixed(max, 1).retries_after(done),
                expected,
                "maxRetryCount {max}, {done} retries done"
            );
        }
    }

    #[test]
    fn fixed_delay_waits_the_same_before_every_retry() {
        let policy = fixed(5, 3);
        for retry in 1..=5 {
            assert_eq!(policy.delay_before(retry, 0.9), Duration::from_secs(3));
        }
    }

    #[test]
    fn exponential_backoff_at_the_middle_of_its_randomisation() {
        // r = 1.0: min, 2·min, 3·min, 5·min, 9·min, then the maximum.
        let policy = backoff(-1, 2, 30);
        let delays: Vec<u64> = (1..=7)
            .map(|n| policy.delay_before(n, 0.5).as_secs())
            .collect();
        assert_eq!(delays, [2, 4, 6, 10, 18, 30, 30]);
    }

    #[test]
    fn exponential_backoff_with_a_zero_minimum_never_waits() {
        let policy = backoff(3, 0, 10);
        assert_eq!(policy.delay_before(3, 0.7), Duration::ZERO);
    }

    proptest! {
        #[test]
        fn exponential_delays_stay_between_minimum_and_maximum_and_never_shrink(
            min in 0u64..600, span in 0u64..3600, random in 0.0f64..1.0, retry in 1u32..80,
        ) {
            let policy = backoff(-1, min, min + span);
            let delay = policy.delay_before(retry, random);
            prop_assert!(delay >= Duration::from_secs(min));
            prop_assert!(delay <= Duration::from_secs(min + span));
            // With the same draw, a later retry never waits less.
            prop_assert!(policy.delay_before(retry + 1, random) >= delay);
        }

        #[test]
        fn the_randomisation_stays_within_a_fifth_either_way(
            min in 1u64..600, retry in 2u32..6, random in 0.0f64..1.0,
        ) {
            let policy = backoff(-1, min, u64::from(u32::MAX));
            let increment = policy.delay_before(retry, random).as_secs_f64() - min as f64;
            let nominal = min as f64 * 2f64.powi(retry as i32 - 2);
            prop_assert!(increment >= nominal * 0.8 - 1e-6);
            prop_assert!(increment <= nominal * 1.2 + 1e-6);
        }
    }
}
