//! What every connection and request shares: the configuration, the store behind one mutex,
//! a signal that wakes receivers when messages arrive, and the counters and the test-only fault
//! switch of [`SessionAttaches`].

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
    pub session_attaches: SessionAttaches,
}

/// Accept-next-session attaches (a receiver attach whose session filter names no session):
/// how many arrived, and how many of the next ones go unanswered.
#[derive(Default)]
pub struct SessionAttaches {
    seen: AtomicU64,
    to_hold: AtomicU64,
}

impl SessionAttaches {
    /// Counts an attach; true when it is one to leave unanswered (see [`Self::hold_next`]).
    pub fn arrived(&self) -> bool {
        self.seen.fetch_add(1, Ordering::Relaxed);
        self.to_hold
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok()
    }

    pub fn seen(&self) -> u64 {
        self.seen.load(Ordering::Relaxed)
    }

    /// A test-only fault: the next `n` accept-next-session attaches get no answer at all, as
    /// from a broker (or a connection) that stopped answering.
    pub fn hold_next(&self, n: u64) {
        self.to_hold.store(n, Ordering::Release);
    }
}

impl Bus {
    pub fn new(config: LocalBusConfig) -> Bus {
        let store = Store::new(&config, Utc::now());
        Bus {
            config,
            store: Mutex::new(store),
            changed: Notify::new(),
            next_owner: AtomicU64::new(1),
            session_attaches: SessionAttaches::default(),
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
