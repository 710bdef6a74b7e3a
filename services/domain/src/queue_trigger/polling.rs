//! The queue listener's polling interval: the Azure Functions host's randomized exponential
//! back-off (`RandomizedExponentialBackoffStrategy` with the 100 ms minimum as its step).
//!
//! As in the host, a poll that returns messages is followed by the next poll as soon as
//! in-flight work has dropped to `newBatchThreshold` — no timed wait — so a busy queue is
//! drained at the speed of the handler. Waits only follow empty polls: ~100 ms for the first
//! empty poll after messages were found, then ~200 ms, ~300 ms, ~500 ms, ~900 ms … (the minimum
//! plus the minimum times 2^(n-1), randomized ±20 %) up to `maxPollingInterval`.

use std::time::Duration;

/// The shortest wait between polls, and the back-off's step.
pub const MINIMUM_POLLING_INTERVAL: Duration = Duration::from_millis(100);

#[derive(Clone, Debug, PartialEq)]
pub struct PollingBackoff {
    minimum: Duration,
    maximum: Duration,
    current: Duration,
    exponent: u32,
    found_since_last_delay: bool,
}

impl PollingBackoff {
    /// `maximum` is the app's `maxPollingInterval` (never below the 100 ms minimum).
    pub fn new(maximum: Duration) -> PollingBackoff {
        PollingBackoff {
            minimum: MINIMUM_POLLING_INTERVAL,
            maximum: maximum.max(MINIMUM_POLLING_INTERVAL),
            current: Duration::ZERO,
            exponent: 1,
            found_since_last_delay: false,
        }
    }

    /// A poll returned messages: the next poll needs no timed wait, and the next empty poll
    /// starts the back-off afresh.
    pub fn found_messages(&mut self) {
        self.found_since_last_delay = true;
        self.current = Duration::ZERO;
    }

    /// The wait after an empty poll. `jitter` is a random number in `[0, 1)` supplied by the
    /// caller, so the rule stays pure.
    pub fn after_empty_poll(&mut self, jitter: f64) -> Duration {
        if self.found_since_last_delay {
            self.found_since_last_delay = false;
            self.exponent = 1;
            self.current = self.minimum;
            return self.current;
        }
        if self.current == self.maximum {
            return self.current;
        }
        let factor = 0.8 + 0.4 * jitter.clamp(0.0, 1.0);
        let step = self
            .minimum
            .saturating_mul(1u32 << self.exponent.saturating_sub(1).min(30))
            .mul_f64(factor);
        let interval = self.minimum.saturating_add(step);
        if interval < self.maximum {
            self.current = interval;
            self.exponent += 1;
        } else {
            self.current = self.maximum;
        }
        self.current
    }

    /// The wait most recently chosen (zero while messages are flowing); shown in statistics.
    pub fn current(&self) -> Duration {
        self.current
    }

    pub fn maximum(&self) -> Duration {
        self.maximum
    }
}
