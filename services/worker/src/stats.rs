//! Per-listener statistics: counters the listener and its deliveries update lock-free, read by
//! heartbeats (`GET /v1/workers`) and `/metrics`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use shoal_domain::workers::ListenerReport;

use crate::hosting::AppInstance;

/// Identifies a listener: the function of an app instance and what it listens to.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ListenerKey {
    pub instance: AppInstance,
    pub function: String,
    pub trigger: &'static str,
    pub source: String,
}

#[derive(Debug)]
pub struct ListenerStats {
    pub key: ListenerKey,
    status: Mutex<String>,
    received: AtomicU64,
    succeeded: AtomicU64,
    failed: AtomicU64,
    poisoned: AtomicU64,
    in_flight: AtomicU64,
    /// Unix milliseconds of the last poll; 0 before the first.
    last_poll_ms: AtomicI64,
    backoff_ms: AtomicU64,
    /// Why the connection's last token request failed (identity-based connections).
    token_error: Mutex<Option<String>>,
}

impl ListenerStats {
    fn new(key: ListenerKey, status: String) -> ListenerStats {
        ListenerStats {
            key,
            status: Mutex::new(status),
            received: AtomicU64::new(0),
            succeeded: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            poisoned: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
            last_poll_ms: AtomicI64::new(0),
            backoff_ms: AtomicU64::new(0),
            token_error: Mutex::new(None),
        }
    }

    pub fn set_status(&self, status: impl Into<String>) {
        *self.status.lock().unwrap_or_else(|p| p.into_inner()) = status.into();
    }

    pub fn set_token_error(&self, error: Option<String>) {
        *self.token_error.lock().unwrap_or_else(|p| p.into_inner()) = error;
    }

    pub fn received(&self) {
        self.received.fetch_add(1, Ordering::Relaxed);
    }
    pub fn succeeded(&self) {
        self.succeeded.fetch_add(1, Ordering::Relaxed);
    }
    pub fn failed(&self) {
        self.failed.fetch_add(1, Ordering::Relaxed);
    }
    pub fn poisoned(&self) {
        self.poisoned.fetch_add(1, Ordering::Relaxed);
    }
    pub fn set_in_flight(&self, n: usize) {
        self.in_flight.store(n as u64, Ordering::Relaxed);
    }
    pub fn polled(&self, at: DateTime<Utc>) {
        self.last_poll_ms
            .store(at.timestamp_millis(), Ordering::Relaxed);
    }
    pub fn set_backoff(&self, wait: Duration) {
        self.backoff_ms
            .store(wait.as_millis() as u64, Ordering::Relaxed);
    }

    pub fn report(&self) -> ListenerReport {
        let last_poll = match self.last_poll_ms.load(Ordering::Relaxed) {
            0 => None,
            ms => DateTime::from_timestamp_millis(ms),
        };
        ListenerReport {
            tenant: self.key.instance.tenant.clone(),
            app: self.key.instance.app.clone(),
            instance: self.key.instance.index,
            function: self.key.function.clone(),
            trigger: self.key.trigger.to_owned(),
            source: self.key.source.clone(),
            status: self
                .status
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
            received: self.received.load(Ordering::Relaxed),
            succeeded: self.succeeded.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            poisoned: self.poisoned.load(Ordering::Relaxed),
            in_flight: self.in_flight.load(Ordering::Relaxed),
            last_poll,
            current_backoff_ms: self.backoff_ms.load(Ordering::Relaxed),
            last_token_error: self
                .token_error
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        }
    }
}

/// The worker's live listeners. A listener is registered while it exists, so reports and
/// metrics show exactly the listeners running now.
#[derive(Debug, Default)]
pub struct StatsRegistry {
    listeners: Mutex<BTreeMap<ListenerKey, Arc<ListenerStats>>>,
}

impl StatsRegistry {
    pub fn register(&self, key: ListenerKey, status: impl Into<String>) -> Arc<ListenerStats> {
        let stats = Arc::new(ListenerStats::new(key.clone(), status.into()));
        self.lock().insert(key, stats.clone());
        stats
    }

    /// Removes this listener's line, unless a newer listener of the same key (a restarted
    /// instance whose old listeners drain after the new ones started) has replaced it.
    pub fn unregister(&self, stats: &Arc<ListenerStats>) {
        let mut listeners = self.lock();
        if listeners
            .get(&stats.key)
            .is_some_and(|current| Arc::ptr_eq(current, stats))
        {
            listeners.remove(&stats.key);
        }
    }

    pub fn reports(&self) -> Vec<ListenerReport> {
        self.lock().values().map(|s| s.report()).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<ListenerKey, Arc<ListenerStats>>> {
        self.listeners.lock().unwrap_or_else(|p| p.into_inner())
    }
}
