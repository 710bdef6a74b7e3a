//! A token bucket: `burst` requests at once, then `rate` per second on average. The webhook
//! ingress keeps one per app so a caller flooding one app cannot exhaust the handler or the
//! API for the others.
//!
//! The clock is passed in, so the bucket is deterministic and tests replay exact times.

use std::time::{Duration, Instant};

#[derive(Clone, Debug, PartialEq)]
pub struct TokenBucket {
    /// Tokens added per second.
    rate: f64,
    /// The most tokens the bucket holds.
    burst: f64,
    tokens: f64,
    updated: Instant,
}

/// A refused request: how long until a token is available.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryAfter(pub Duration);

impl RetryAfter {
    /// Whole seconds for the `Retry-After` header: rounded up, at least 1 (0 would invite an
    /// immediate retry that is refused again).
    pub fn seconds(self) -> u64 {
        let whole = self.0.as_secs() + u64::from(self.0.subsec_nanos() > 0);
        whole.max(1)
    }
}

impl TokenBucket {
    /// A full bucket. `rate` and `burst` must be positive (the app spec guarantees it); zero
    /// is treated as one rather than dividing by it.
    pub fn new(rate: u32, burst: u32, now: Instant) -> TokenBucket {
        let burst = f64::from(burst.max(1));
        TokenBucket {
            rate: f64::from(rate.max(1)),
            burst,
            tokens: burst,
            updated: now,
        }
    }

    /// A full bucket of `burst` tokens that earns one back every `every` (a slower rate than one
    /// per second, e.g. failed sign-ins a client may make).
    pub fn refilling(burst: u32, every: Duration, now: Instant) -> TokenBucket {
        let burst = f64::from(burst.max(1));
        TokenBucket {
            rate: 1.0 / every.max(Duration::from_millis(1)).as_secs_f64(),
            burst,
            tokens: burst,
            updated: now,
        }
    }

    /// How long until a token is there (zero if one is now), without taking it.
    pub fn wait(&mut self, now: Instant) -> Duration {
        self.refill(now);
        if self.tokens >= 1.0 {
            return Duration::ZERO;
        }
        Duration::from_secs_f64((1.0 - self.tokens) / self.rate)
    }

    /// Whether the bucket is full (nothing to remember about its key).
    pub fn is_full(&mut self, now: Instant) -> bool {
        self.refill(now);
        self.tokens >= self.burst
    }

    /// New limits (the app's spec changed): the tokens already earned are kept, up to the new
    /// burst, so a configuration change neither refills nor empties the bucket.
    pub fn reconfigure(&mut self, rate: u32, burst: u32, now: Instant) {
        self.refill(now);
        self.rate = f64::from(rate.max(1));
        self.burst = f64::from(burst.max(1));
        self.tokens = self.tokens.min(self.burst);
    }

    /// Takes one token, or says how long until one is there.
    pub fn try_acquire(&mut self, now: Instant) -> Result<(), RetryAfter> {
        self.refill(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            return Ok(());
        }
        Err(RetryAfter(self.wait(now)))
    }

    /// Tokens now (for tests and metrics).
    pub fn available(&mut self, now: Instant) -> f64 {
        self.refill(now);
        self.tokens
    }

    fn refill(&mut self, now: Instant) {
        // An earlier `now` (callers racing to the lock) adds nothing rather than going back.
        let elapsed = now.saturating_duration_since(self.updated);
        if elapsed > Duration::ZERO {
            self.tokens = (self.tokens + elapsed.as_secs_f64() * self.rate).min(self.burst);
            self.updated = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn burst_then_refused_with_the_wait_for_one_token() {
        let t0 = Instant::now();
        let mut bucket = TokenBucket::new(10, 3, t0);
        for _ in 0..3 {
            assert_eq!(bucket.try_acquire(t0), Ok(()));
        }
        assert_eq!(bucket.try_acquire(t0), Err(RetryAfter(ms(100))));
        // 40 ms later, 0.4 of a token: 60 ms to go.
        let Err(RetryAfter(wait)) = bucket.try_acquire(t0 + ms(40)) else {
            panic!("refused")
        };
        assert!((wait.as_secs_f64() - 0.06).abs() < 1e-9, "{wait:?}");
        assert_eq!(bucket.try_acquire(t0 + ms(100)), Ok(()));
        assert!(bucket.try_acquire(t0 + ms(100)).is_err());
    }

    #[test]
    fn refills_at_the_rate_up_to_the_burst() {
        let t0 = Instant::now();
        let mut bucket = TokenBucket::new(100, 200, t0);
        for _ in 0..200 {
            bucket.try_acquire(t0).unwrap();
        }
        assert!(bucket.available(t0) < 1.0);
        assert!((bucket.available(t0 + ms(500)) - 50.0).abs() < 1e-6);
        assert_eq!(bucket.available(t0 + Duration::from_secs(60)), 200.0);
        // Sustained: one request per 10 ms always passes.
        let mut bucket = TokenBucket::new(100, 1, t0);
        for i in 0..1000 {
            assert_eq!(bucket.try_acquire(t0 + ms(10 * i)), Ok(()), "request {i}");
        }
    }

    #[test]
    fn an_earlier_clock_reading_adds_nothing() {
        let t0 = Instant::now();
        let later = t0 + Duration::from_secs(1);
        let mut bucket = TokenBucket::new(1, 1, later);
        bucket.try_acquire(later).unwrap();
        assert!(bucket.try_acquire(t0).is_err());
        assert_eq!(bucket.try_acquire(later + Duration::from_secs(1)), Ok(()));
    }

    #[test]
    fn reconfiguring_keeps_earned_tokens_within_the_new_burst() {
        let t0 = Instant::now();
        let mut bucket = TokenBucket::new(10, 20, t0);
        bucket.reconfigure(10, 5, t0);
        assert_eq!(bucket.available(t0), 5.0);
        bucket.reconfigure(1000, 50, t0);
        assert_eq!(bucket.available(t0), 5.0, "no refill from a change alone");
        assert!((bucket.available(t0 + ms(10)) - 15.0).abs() < 1e-6);
    }

    #[test]
    fn retry_after_is_whole_seconds_and_at_least_one() {
        for (wait, seconds) in [
            (Duration::ZERO, 1),
            (ms(1), 1),
            (ms(1000), 1),
            (ms(1001), 2),
            (Duration::from_secs(3), 3),
        ] {
            assert_eq!(RetryAfter(wait).seconds(), seconds, "{wait:?}");
        }
        let t0 = Instant::now();
        let mut slow = TokenBucket::new(1, 1, t0);
        slow.try_acquire(t0).unwrap();
        assert_eq!(slow.try_acquire(t0 + ms(1)).unwrap_err().seconds(), 1);
    }

    #[test]
    fn zero_limits_are_treated_as_one() {
        let t0 = Instant::now();
        let mut bucket = TokenBucket::new(0, 0, t0);
        assert_eq!(bucket.try_acquire(t0), Ok(()));
        assert_eq!(bucket.try_acquire(t0), Err(RetryAfter(ms(1000))));
    }
}
