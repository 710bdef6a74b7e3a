//! Wakes listeners when this worker writes to the source they listen to (a queue, by its
//! address), as the Azure Functions host's shared queue watcher does: a function's output
//! reaches the next function in a chain at once instead of after the next function's
//! back-off. Output bindings report writes; a trigger kind that can use them watches.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::Notify;

#[derive(Debug, Default)]
pub struct WriteWatcher {
    listeners: Mutex<HashMap<String, Vec<Weak<Notify>>>>,
}

impl WriteWatcher {
    /// Registers a listener of the queue at `address` (see `Queue::address`); it stays
    /// registered while the returned handle lives.
    pub fn watch(&self, address: String) -> Arc<Notify> {
        let notify = Arc::new(Notify::new());
        let mut listeners = self.lock();
        let entry = listeners.entry(address).or_default();
        entry.retain(|w| w.strong_count() > 0);
        entry.push(Arc::downgrade(&notify));
        notify
    }

    /// Messages were just written to the queue at `address`.
    pub fn written(&self, address: &str) {
        let mut listeners = self.lock();
        if let Some(entry) = listeners.get_mut(address) {
            entry.retain(|w| match w.upgrade() {
                Some(notify) => {
                    notify.notify_one();
                    true
                }
                None => false,
            });
            if entry.is_empty() {
                listeners.remove(address);
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<Weak<Notify>>>> {
        self.listeners.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn writes_wake_the_queues_listeners_only() {
        let watcher = WriteWatcher::default();
        let a = watcher.watch("http://h/acct/a".into());
        let b = watcher.watch("http://h/acct/b".into());
        watcher.written("http://h/acct/a");
        // notify_one stores a permit, so the wake-up is not lost if nobody waits yet.
        tokio::time::timeout(std::time::Duration::from_secs(1), a.notified())
            .await
            .expect("a is woken");
        let b_woken =
            tokio::time::timeout(std::time::Duration::from_millis(50), b.notified()).await;
        assert!(b_woken.is_err(), "b is not");
    }

    #[test]
    fn dropped_listeners_are_forgotten() {
        let watcher = WriteWatcher::default();
        drop(watcher.watch("q".into()));
        watcher.written("q");
        assert!(watcher.lock().is_empty());
    }
}
