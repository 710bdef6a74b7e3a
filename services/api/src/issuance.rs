//! What Shoal's token endpoints hand out and where clients find them: the public base URL the
//! discovery document and identity endpoints are built from, the lifetime of issued tokens, and
//! a throttle on failed client authentications so secrets cannot be guessed quickly.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use shoal_domain::rate_limit::{RetryAfter, TokenBucket};
use url::Url;

/// Lifetime of tokens from `POST /oauth2/token` and the managed-identity endpoint, unless
/// configured otherwise (as Entra ID's default access-token lifetime).
pub const DEFAULT_TOKEN_LIFETIME: Duration = Duration::from_secs(3600);

/// Failed authentications a client id may have in a burst, and how fast it earns one back.
const FAILURE_BURST: u32 = 10;
const FAILURE_REFILL: Duration = Duration::from_secs(6);

/// How Shoal issues its own tokens (part of [`crate::IdentityConfig`]).
#[derive(Debug, Clone)]
pub struct TokenConfig {
    /// Where clients reach this API (`--public-url`): discovery's `jwks_uri` and
    /// `token_endpoint`, and apps' `IDENTITY_ENDPOINT`. Default `http://<bound address>`.
    pub public_url: Option<Url>,
    /// Lifetime of issued tokens (`--token-lifetime`, at most 24 h).
    pub lifetime: Duration,
    /// How often the signing keys are re-read to pick up another process's rotation.
    pub key_reload_interval: Duration,
}

impl Default for TokenConfig {
    fn default() -> Self {
        TokenConfig {
            public_url: None,
            lifetime: DEFAULT_TOKEN_LIFETIME,
            key_reload_interval: crate::tokens::rotation::DEFAULT_RELOAD_INTERVAL,
        }
    }
}

/// The token endpoints' settings as the handlers use them.
#[derive(Debug)]
pub struct Issuance {
    /// The public base URL without a trailing slash.
    pub public_url: String,
    pub lifetime: Duration,
    /// Failed client authentications per client id.
    pub client_failures: Throttle,
}

impl Issuance {
    pub fn new(public_url: &Url, lifetime: Duration) -> Issuance {
        Issuance {
            public_url: public_url.as_str().trim_end_matches('/').to_string(),
            lifetime: lifetime.min(crate::tokens::MAX_TTL),
            client_failures: Throttle::new(FAILURE_BURST, FAILURE_REFILL),
        }
    }

    /// An absolute URL for a path of this API (`path` starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.public_url)
    }
}

impl Default for Issuance {
    fn default() -> Self {
        let url = Url::parse("http://127.0.0.1:8080").expect("a valid URL");
        Issuance::new(&url, DEFAULT_TOKEN_LIFETIME)
    }
}

/// Whether a requested `scope` or `resource` names Shoal's audience: `api://shoal`, with or
/// without `/.default` (how v2 scopes name a whole resource) or a trailing slash.
pub fn names_audience(audience: &str, requested: &str) -> bool {
    let requested = requested.strip_suffix("/.default").unwrap_or(requested);
    let trim = |s: &str| s.trim_end_matches('/').to_string();
    !requested.is_empty() && trim(requested) == trim(audience)
}

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
    pub fn new(burst: u32, refill: Duration) -> Throttle {
        Throttle {
            burst: burst.max(1),
            refill: refill.max(Duration::from_millis(1)),
            buckets: Mutex::new(HashMap::new()),
        }
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
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.len() >= MAX_TRACKED && !buckets.contains_key(key) {
            forget_least_throttled(&mut buckets, now);
        }
        let _ = buckets
            .entry(key.to_string())
            .or_insert_with(|| TokenBucket::refilling(self.burst, self.refill, now))
            .try_acquire(now);
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

    #[test]
    fn scopes_and_resources_naming_the_audience() {
        for ok in ["api://shoal", "api://shoal/", "api://shoal/.default"] {
            assert!(names_audience("api://shoal", ok), "{ok}");
        }
        for bad in [
            "",
            "/.default",
            "api://shoal/read",
            "api://shoalx",
            "api://other/.default",
            "https://management.azure.com/.default",
            "api://shoal/.default/.default",
        ] {
            assert!(!names_audience("api://shoal", bad), "{bad}");
        }
    }

    #[test]
    fn public_urls_are_joined_without_double_slashes() {
        let issuance = Issuance::new(
            &Url::parse("https://shoal.example.com/").unwrap(),
            Duration::from_secs(60),
        );
        assert_eq!(
            issuance.url("/oauth2/token"),
            "https://shoal.example.com/oauth2/token"
        );
        let prefixed = Issuance::new(
            &Url::parse("https://example.com/shoal/").unwrap(),
            Duration::from_secs(48 * 3600),
        );
        assert_eq!(prefixed.url("/msi"), "https://example.com/shoal/msi");
        assert_eq!(prefixed.lifetime, crate::tokens::MAX_TTL, "capped");
    }
}
