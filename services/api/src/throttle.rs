//! Token buckets per key, in this process's memory: the failed sign-ins a client id may make
//! (`issuance`), and the management API requests a principal and its tenant may make
//! ([`RequestThrottle`]). N API replicas each keep their own, so together they allow N times
//! the configured rate (docs/operating/limits.md).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use shoal_domain::names::TenantName;
use shoal_domain::rate_limit::{RetryAfter, TokenBucket};

/// A token bucket per key (the domain's [`TokenBucket`]): each failure takes a token, tokens
/// come back one per `refill`, up to `burst`. A key without tokens is refused before its
/// credentials are even checked, so a guesser gets `burst` tries and then one per `refill`. Per
/// process: N API replicas allow N times as much.
#[derive(Debug)]
pub struct Throttle {
    burst: u32,
    refill: Duration,
    buckets: Mutex<HashMap<String, TokenBucket>>,
}

/// Keys tracked at most; beyond it the least-throttled keys are forgotten first.
const MAX_TRACKED: usize = 10_000;

impl Throttle {
    /// `burst` tokens, one more every `refill`.
    pub fn new(burst: u32, refill: Duration) -> Throttle {
        Throttle {
            burst: burst.max(1),
            refill: refill.max(Duration::from_millis(1)),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// `rate.burst` tokens, `rate.per_second` more each second.
    pub fn at(rate: Rate) -> Throttle {
        Throttle::new(
            rate.burst,
            Duration::from_secs_f64(1.0 / f64::from(rate.per_second.max(1))),
        )
    }

    /// `Err(retry_after)` (whole seconds) when `key` has used up its failures.
    pub fn check(&self, key: &str, now: Instant) -> Result<(), Duration> {
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let Some(bucket) = buckets.get_mut(key) else {
            return Ok(());
        };
        match bucket.wait(now) {
            Duration::ZERO => Ok(()),
            // Whole seconds, as `Retry-After` carries them.
            wait => Err(Duration::from_secs(RetryAfter(wait).seconds())),
        }
    }

    /// Takes one token from `key`'s bucket.
    pub fn record_failure(&self, key: &str, now: Instant) {
        let _ = self.admit(key, now);
    }

    /// Takes one token from `key`'s bucket (a full one the first time), or says how long until
    /// one is there, in whole seconds as `Retry-After` carries them.
    pub fn admit(&self, key: &str, now: Instant) -> Result<(), Duration> {
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.len() >= MAX_TRACKED && !buckets.contains_key(key) {
            forget_least_throttled(&mut buckets, now);
        }
        buckets
            .entry(key.to_string())
            .or_insert_with(|| TokenBucket::refilling(self.burst, self.refill, now))
            .try_acquire(now)
            .map_err(|wait| Duration::from_secs(wait.seconds()))
    }

    #[cfg(test)]
    fn tracked(&self) -> usize {
        self.buckets.lock().unwrap().len()
    }
}

/// Drops every bucket that has refilled; if that is not enough, the fuller half.
fn forget_least_throttled(buckets: &mut HashMap<String, TokenBucket>, now: Instant) {
    buckets.retain(|_, b| !b.is_full(now));
    if buckets.len() >= MAX_TRACKED {
        let mut levels: Vec<(String, f64)> = buckets
            .iter_mut()
            .map(|(k, b)| (k.clone(), b.available(now)))
            .collect();
        levels.sort_by(|a, b| b.1.total_cmp(&a.1));
        for (key, _) in levels.into_iter().take(MAX_TRACKED / 2) {
            buckets.remove(&key);
        }
    }
}

/// A sustained rate with a burst above it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub per_second: u32,
    pub burst: u32,
}

/// How many management API requests one principal, and all the principals of one tenant
/// together, may make (per replica). Azure Resource Manager throttles the same way, with token
/// buckets and `429` + `Retry-After` ("Understand how Azure Resource Manager throttles
/// requests", learn.microsoft.com): a subscription's reads per service principal are a bucket
/// of 250 refilled at 25 a second, and all principals together get 15 times that. Shoal takes
/// the same figures for a principal and for a tenant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestRates {
    pub principal: Rate,
    pub tenant: Rate,
}

impl Default for RequestRates {
    fn default() -> Self {
        RequestRates {
            principal: Rate {
                per_second: 25,
                burst: 250,
            },
            tenant: Rate {
                per_second: 15 * 25,
                burst: 15 * 250,
            },
        }
    }
}

/// How long a refused request's answer is held by default (`--throttle-hold`).
pub const DEFAULT_HOLD: Duration = Duration::from_secs(1);

/// Refused requests held at once, per replica; past it refusals are answered at once, so the
/// hold's memory is bounded whatever the number of connections.
const MAX_HELD: usize = 1024;

/// The management API's request throttle: a bucket per principal and one per tenant, the
/// tenant being the one the principal belongs to (never the one a path names, so nobody can
/// spend another tenant's budget by sending requests at it). The platform's administrators
/// belong to no tenant and are not throttled: they are the operators, and an incident is when
/// they make the most requests.
///
/// A refusal costs no database work, but a client that retries the moment it is refused still
/// turns its connections into a stream of refusals that takes the CPU other tenants need (the
/// bench's noisy-neighbour step measured it). So a refusal's answer is held for up to
/// [`RequestThrottle::hold`] of the `Retry-After` it carries, the time the client should wait
/// anyway, and the header then says what is left: a client that honours `Retry-After` waits no
/// longer in all, one that does not sends one request per connection per hold. nginx's
/// `limit_req` delays excess requests the same way.
#[derive(Debug)]
pub struct RequestThrottle {
    rates: RequestRates,
    principals: Throttle,
    tenants: Throttle,
    hold: Duration,
    held: tokio::sync::Semaphore,
}

/// Which bucket refused a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    Principal(Duration),
    Tenant(Duration),
}

impl RequestThrottle {
    /// `hold`: the longest a refusal's answer is held (zero answers at once).
    pub fn new(rates: RequestRates, hold: Duration) -> RequestThrottle {
        RequestThrottle {
            rates,
            principals: Throttle::at(rates.principal),
            tenants: Throttle::at(rates.tenant),
            hold,
            held: tokio::sync::Semaphore::new(MAX_HELD),
        }
    }

    pub fn rates(&self) -> RequestRates {
        self.rates
    }

    /// Admits one request of `principal` (a key unique across tenants) of `tenant`. The
    /// tenant's bucket is looked at first and charged last, so a principal refused by its
    /// tenant keeps its own tokens.
    pub fn admit(&self, principal: &str, tenant: &TenantName, now: Instant) -> Result<(), Refusal> {
        self.tenants
            .check(tenant.as_str(), now)
            .map_err(Refusal::Tenant)?;
        self.principals
            .admit(principal, now)
            .map_err(Refusal::Principal)?;
        self.tenants
            .admit(tenant.as_str(), now)
            .map_err(Refusal::Tenant)
    }

    /// Whether `principal` of `tenant` has a token left in both buckets, taking none: for
    /// requests counted only when they are refused ([`RequestThrottle::charge`]).
    pub fn check(&self, principal: &str, tenant: &TenantName, now: Instant) -> Result<(), Refusal> {
        self.tenants
            .check(tenant.as_str(), now)
            .map_err(Refusal::Tenant)?;
        self.principals
            .check(principal, now)
            .map_err(Refusal::Principal)
    }

    /// Takes a token from `principal`'s bucket and from `tenant`'s, each as far as it has one.
    pub fn charge(&self, principal: &str, tenant: &TenantName, now: Instant) {
        self.principals.record_failure(principal, now);
        self.tenants.record_failure(tenant.as_str(), now);
    }

    /// Holds a refusal that told the client to wait `wait` for up to the configured hold (while
    /// fewer than [`MAX_HELD`] are held), and returns the wait left for `Retry-After`.
    pub async fn hold(&self, wait: Duration) -> Duration {
        let hold = wait.min(self.hold);
        if hold.is_zero() {
            return wait;
        }
        let Ok(_slot) = self.held.try_acquire() else {
            return wait;
        };
        tokio::time::sleep(hold).await;
        wait - hold
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_of_failures_then_one_per_refill() {
        let throttle = Throttle::new(3, Duration::from_secs(6));
        let start = Instant::now();
        for _ in 0..3 {
            assert!(throttle.check("c", start).is_ok());
            throttle.record_failure("c", start);
        }
        let retry = throttle.check("c", start).unwrap_err();
        assert_eq!(retry, Duration::from_secs(6));
        // Other keys are unaffected.
        assert!(throttle.check("d", start).is_ok());
        // Half a refill later: still refused, told to wait the other half.
        let later = start + Duration::from_secs(3);
        assert_eq!(
            throttle.check("c", later).unwrap_err(),
            Duration::from_secs(3)
        );
        // A full refill earns exactly one more try.
        let later = start + Duration::from_secs(6);
        assert!(throttle.check("c", later).is_ok());
        throttle.record_failure("c", later);
        assert!(throttle.check("c", later).is_err());
        // Long idle refills to the burst, not beyond.
        let much_later = later + Duration::from_secs(600);
        for _ in 0..3 {
            assert!(throttle.check("c", much_later).is_ok());
            throttle.record_failure("c", much_later);
        }
        assert!(throttle.check("c", much_later).is_err());
    }

    #[test]
    fn retry_after_is_at_least_a_second() {
        let throttle = Throttle::new(1, Duration::from_millis(100));
        let now = Instant::now();
        throttle.record_failure("c", now);
        assert_eq!(
            throttle.check("c", now).unwrap_err(),
            Duration::from_secs(1)
        );
    }

    #[test]
    fn tracking_is_bounded_and_keeps_throttled_keys() {
        let throttle = Throttle::new(2, Duration::from_secs(60));
        let now = Instant::now();
        throttle.record_failure("target", now);
        throttle.record_failure("target", now);
        for i in 0..MAX_TRACKED + 10 {
            throttle.record_failure(&format!("other-{i}"), now);
        }
        assert!(throttle.tracked() <= MAX_TRACKED);
        assert!(
            throttle.check("target", now).is_err(),
            "flooding other ids does not reset a throttled one"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_refusal_is_held_for_part_of_its_wait_and_says_what_is_left() {
        let throttle = RequestThrottle::new(RequestRates::default(), Duration::from_secs(1));
        let start = tokio::time::Instant::now();
        assert_eq!(
            throttle.hold(Duration::from_secs(3)).await,
            Duration::from_secs(2)
        );
        assert_eq!(start.elapsed(), Duration::from_secs(1));
        // A wait shorter than the hold is held whole.
        let start = tokio::time::Instant::now();
        assert_eq!(
            throttle.hold(Duration::from_millis(400)).await,
            Duration::ZERO
        );
        assert_eq!(start.elapsed(), Duration::from_millis(400));
        // No hold configured: answered at once.
        let immediate = RequestThrottle::new(RequestRates::default(), Duration::ZERO);
        let start = tokio::time::Instant::now();
        assert_eq!(
            immediate.hold(Duration::from_secs(3)).await,
            Duration::from_secs(3)
        );
        assert_eq!(start.elapsed(), Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn past_the_held_refusals_allowed_the_rest_are_answered_at_once() {
        let throttle = std::sync::Arc::new(RequestThrottle::new(
            RequestRates::default(),
            Duration::from_secs(1),
        ));
        let held: Vec<_> = (0..MAX_HELD)
            .map(|_| {
                let throttle = throttle.clone();
                tokio::spawn(async move { throttle.hold(Duration::from_secs(1)).await })
            })
            .collect();
        // Let every holder take its slot (time is paused: none of them wakes meanwhile).
        while throttle.held.available_permits() > 0 {
            tokio::task::yield_now().await;
        }
        let start = tokio::time::Instant::now();
        assert_eq!(
            throttle.hold(Duration::from_secs(1)).await,
            Duration::from_secs(1)
        );
        assert_eq!(start.elapsed(), Duration::ZERO);
        for holder in held {
            assert_eq!(holder.await.unwrap(), Duration::ZERO);
        }
        // The slots come back.
        assert_eq!(throttle.held.available_permits(), MAX_HELD);
    }

    /// A principal may make 2 requests at once and its tenant 3, each refilled at 1 a second.
    fn small() -> RequestThrottle {
        RequestThrottle::new(
            RequestRates {
                principal: Rate {
                    per_second: 1,
                    burst: 2,
                },
                tenant: Rate {
                    per_second: 1,
                    burst: 3,
                },
            },
            Duration::ZERO,
        )
    }

    #[test]
    fn a_principal_and_its_tenant_are_throttled_apart_from_others() {
        let throttle = small();
        let (a, b) = (
            TenantName::parse("tenant-a").unwrap(),
            TenantName::parse("tenant-b").unwrap(),
        );
        let now = Instant::now();
        assert_eq!(throttle.admit("b-one", &b, now), Ok(()));
        assert_eq!(throttle.admit("b-one", &b, now), Ok(()));
        assert_eq!(
            throttle.admit("b-one", &b, now),
            Err(Refusal::Principal(Duration::from_secs(1)))
        );
        // A second principal of B has its own bucket but shares B's: one request is left.
        assert_eq!(throttle.admit("b-two", &b, now), Ok(()));
        assert_eq!(
            throttle.admit("b-two", &b, now),
            Err(Refusal::Tenant(Duration::from_secs(1)))
        );
        // Refused by the tenant, b-two kept its own second token: it gets it once B refills.
        let later = now + Duration::from_secs(1);
        assert_eq!(throttle.admit("b-two", &b, later), Ok(()));
        // Tenant A is untouched by B's use.
        for _ in 0..2 {
            assert_eq!(throttle.admit("a-one", &a, now), Ok(()));
        }
    }

    #[test]
    fn charged_only_when_told_and_checked_without_taking() {
        let throttle = small();
        let b = TenantName::parse("tenant-b").unwrap();
        let now = Instant::now();
        for _ in 0..10 {
            assert_eq!(throttle.check("b-one", &b, now), Ok(()));
        }
        throttle.charge("b-one", &b, now);
        throttle.charge("b-one", &b, now);
        assert_eq!(
            throttle.check("b-one", &b, now),
            Err(Refusal::Principal(Duration::from_secs(1)))
        );
        // Its charges were the tenant's too: one more of anyone's, and the tenant is refused.
        assert_eq!(throttle.check("b-two", &b, now), Ok(()));
        throttle.charge("b-two", &b, now);
        assert_eq!(
            throttle.check("b-two", &b, now),
            Err(Refusal::Tenant(Duration::from_secs(1)))
        );
    }

    #[test]
    fn a_rate_refills_per_second() {
        let throttle = Throttle::at(Rate {
            per_second: 4,
            burst: 1,
        });
        let now = Instant::now();
        assert!(throttle.admit("k", now).is_ok());
        assert_eq!(throttle.admit("k", now), Err(Duration::from_secs(1)));
        assert!(
            throttle
                .admit("k", now + Duration::from_millis(250))
                .is_ok()
        );
    }
}
