//! What the managed-identity endpoint (`routes::msi`) remembers of apps' identity headers: for a few seconds
//! after reading an app's signing secret, a request for that app is checked against the
//! header in memory, so a flood of wrong headers (or of requests for an app that does not
//! exist) costs a comparison each, not a database transaction. Per process; a secret
//! regenerated through another replica takes effect here within [`FRESH_FOR`].

use std::time::{Duration, Instant};

use shoal_domain::webhooks::identity_headers_match;

use crate::expiring::ExpiringCache;

/// How long a header read from the database is trusted, and a missing app stays missing.
pub const FRESH_FOR: Duration = Duration::from_secs(5);

/// Apps remembered at most; a flood of distinct names clears the cache rather than growing it.
const CAPACITY: usize = 10_000;

/// What memory says of a presented header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    /// It is the app's header.
    Match,
    /// It is not, or there is no such app: refuse without reading anything.
    Refused,
    /// Nothing fresh is remembered: read the app's secret.
    Unknown,
}

pub struct KnownHeaders {
    /// By `tenant/app`: the app's identity header, `None` for an app that does not exist.
    entries: ExpiringCache<String, Option<String>, Instant>,
}

impl Default for KnownHeaders {
    fn default() -> Self {
        KnownHeaders {
            entries: ExpiringCache::new(CAPACITY),
        }
    }
}

impl KnownHeaders {
    pub fn check(&self, tenant: &str, app: &str, presented: &str, now: Instant) -> Known {
        match self.entries.get(&key(tenant, app), now) {
            None => Known::Unknown,
            Some(Some(expected)) if identity_headers_match(&expected, presented) => Known::Match,
            Some(_) => Known::Refused,
        }
    }

    /// Remembers the app's header as just read (`None`: the app does not exist).
    pub fn remember(&self, tenant: &str, app: &str, header: Option<String>, now: Instant) {
        self.entries
            .insert(key(tenant, app), header, now + FRESH_FOR, now);
    }

    /// Forgets the app (its secret was regenerated here).
    pub fn forget(&self, tenant: &str, app: &str) {
        self.entries.remove(&key(tenant, app));
    }
}

fn key(tenant: &str, app: &str) -> String {
    format!("{tenant}/{app}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "aGVhZGVyLWhlYWRlci1oZWFkZXItaGVhZGVyLWhlYWQ";

    #[test]
    fn remembered_headers_answer_until_they_are_stale() {
        let known = KnownHeaders::default();
        let now = Instant::now();
        assert_eq!(known.check("t", "a", HEADER, now), Known::Unknown);
        known.remember("t", "a", Some(HEADER.into()), now);
        assert_eq!(known.check("t", "a", HEADER, now), Known::Match);
        assert_eq!(known.check("t", "a", "wrong", now), Known::Refused);
        assert_eq!(known.check("t", "b", HEADER, now), Known::Unknown);
        assert_eq!(
            known.check("t", "a", HEADER, now + FRESH_FOR),
            Known::Unknown
        );
        known.forget("t", "a");
        assert_eq!(known.check("t", "a", HEADER, now), Known::Unknown);
    }

    #[test]
    fn a_missing_app_is_refused_until_it_is_looked_up_again() {
        let known = KnownHeaders::default();
        let now = Instant::now();
        known.remember("t", "gone", None, now);
        assert_eq!(known.check("t", "gone", HEADER, now), Known::Refused);
        assert_eq!(
            known.check("t", "gone", HEADER, now + FRESH_FOR),
            Known::Unknown
        );
    }
}
