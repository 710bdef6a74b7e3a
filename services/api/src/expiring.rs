//! A bounded map whose entries hold until a deadline: the verified-token caches (Shoal's own
//! tokens and external issuers') and the access cache. A leaf: it knows nothing of tokens or
//! roles.
//!
//! Bounded by clearing rather than by recency: when full, expired entries go first and, if
//! that frees nothing, everything goes. A flood of distinct keys (forged tokens never get in;
//! real ones are few) then costs at most one miss per live key, and no bookkeeping per hit.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, MutexGuard};

/// Entries of `V` by `K`, each valid while `now < until`; `T` is whatever clock the owner
/// uses (Unix seconds for token expiries, `Instant` for ages).
pub struct ExpiringCache<K, V, T> {
    capacity: usize,
    entries: Mutex<HashMap<K, (V, T)>>,
}

impl<K: Eq + Hash, V: Clone, T: PartialOrd + Copy> ExpiringCache<K, V, T> {
    pub fn new(capacity: usize) -> Self {
        ExpiringCache {
            capacity,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The value under `key` if its deadline is still ahead of `now`.
    pub fn get<Q>(&self, key: &Q, now: T) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        self.lock()
            .get(key)
            .filter(|(_, until)| now < *until)
            .map(|(value, _)| value.clone())
    }

    /// Remembers `value` until `until`, making room first when the cache is full.
    pub fn insert(&self, key: K, value: V, until: T, now: T) {
        let mut entries = self.lock();
        if entries.len() >= self.capacity {
            entries.retain(|_, (_, held_until)| now < *held_until);
            if entries.len() >= self.capacity {
                entries.clear();
            }
        }
        entries.insert(key, (value, until));
    }

    /// Forgets the entry under `key`.
    pub fn remove<Q>(&self, key: &Q)
    where
        K: Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        self.lock().remove(key);
    }

    /// Forgets everything (the keys changed, or a notification said the data did).
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// The deadline of the entry under `key`, expired or not.
    pub fn until<Q>(&self, key: &Q) -> Option<T>
    where
        K: Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        self.lock().get(key).map(|(_, until)| *until)
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A panic while the lock was held leaves a map that is still consistent: keep using it.
    fn lock(&self) -> MutexGuard<'_, HashMap<K, (V, T)>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_holds_until_its_deadline() {
        let cache = ExpiringCache::new(10);
        cache.insert("token", 1, 100u64, 0);
        let cases = [(0, Some(1)), (99, Some(1)), (100, None), (101, None)];
        for (now, expected) in cases {
            assert_eq!(cache.get("token", now), expected, "at {now}");
        }
        assert_eq!(cache.get("other", 0), None);
        assert_eq!(cache.until("token"), Some(100));
    }

    #[test]
    fn a_full_cache_drops_expired_entries_first() {
        let cache = ExpiringCache::new(3);
        cache.insert("old", 1, 10u64, 0);
        cache.insert("live", 2, 100, 0);
        cache.insert("also live", 3, 100, 0);
        cache.insert("new", 4, 100, 50);
        assert_eq!(cache.len(), 3);
        assert_eq!(cache.until("old"), None, "expired, so evicted");
        for (key, value) in [("live", 2), ("also live", 3), ("new", 4)] {
            assert_eq!(cache.get(key, 50), Some(value), "{key}");
        }
    }

    #[test]
    fn a_cache_full_of_live_entries_starts_over() {
        let cache = ExpiringCache::new(2);
        cache.insert("a", 1, 100u64, 0);
        cache.insert("b", 2, 100, 0);
        cache.insert("c", 3, 100, 0);
        assert_eq!(cache.len(), 1, "bounded: cleared, then the new entry");
        assert_eq!(cache.get("c", 0), Some(3));
        assert_eq!(cache.get("a", 0), None);
    }

    #[test]
    fn bounds_hold_under_many_keys() {
        let cache = ExpiringCache::new(100);
        for i in 0..10_000u32 {
            cache.insert(i, i, 1_000u64, 0);
            assert!(cache.len() <= 100);
        }
        assert_eq!(cache.get(&9_999, 0), Some(9_999));
    }

    #[test]
    fn clear_forgets_everything() {
        let cache = ExpiringCache::new(10);
        cache.insert(
            "a",
            1,
            std::time::Instant::now() + std::time::Duration::from_secs(30),
            std::time::Instant::now(),
        );
        assert!(!cache.is_empty());
        cache.clear();
        assert!(cache.is_empty());
        assert_eq!(cache.get("a", std::time::Instant::now()), None);
    }
}
