//! What every connection and request shares: the configuration, the store behind one mutex,
//! and a signal that wakes receivers when messages arrive.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use chrono::Utc;
use tokio::sync::Notify;

use crate::config::LocalBusConfig;
use crate::store::Store;

pub struct Bus {
    pub config: LocalBusConfig,
    store: Mutex<Store>,
    /// Notified after every send, so receivers waiting for credit-backed deliveries go at once.
    pub changed: Notify,
    next_owner: AtomicU64,
}

impl Bus {
    pub fn new(config: LocalBusConfig) -> Bus {
        let store = Store::new(&config, Utc::now());
        Bus {
            config,
            store: Mutex::new(store),
            changed: Notify::new(),
            next_owner: AtomicU64::new(1),
        }
    }

    /// The store. A panic while it was held cannot leave it half-updated in a way that matters
    /// more than refusing service would, so a poisoned lock is taken over.
    pub fn store(&self) -> MutexGuard<'_, Store> {
        self.store
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The store with time applied first (schedules, locks, expiry, auto-delete on idle), for
    /// operations that name an entity: an idle entity is gone before anyone can reach it.
    pub fn maintained_store(&self) -> MutexGuard<'_, Store> {
        let mut store = self.store();
        store.maintain(Utc::now());
        store
    }

    /// A fresh id for a receiver link (the owner of session locks).
    pub fn next_owner(&self) -> u64 {
        self.next_owner.fetch_add(1, Ordering::Relaxed)
    }
}
