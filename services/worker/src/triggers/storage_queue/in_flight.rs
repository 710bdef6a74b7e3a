//! The messages a queue listener is processing, by message id, each with its current pop
//! receipt: shared by the listener (which starts deliveries and polls again when few remain)
//! and the deliveries (which end their own).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

/// The messages a listener is processing, by message id, each with its current pop receipt.
/// A message that is received again while still in flight (its invisibility lapsed) is not
/// processed twice at once: the running delivery adopts the newer receipt instead.
#[derive(Debug, Default)]
pub struct InFlight {
    receipts: Mutex<HashMap<String, Arc<Mutex<String>>>>,
    count: AtomicUsize,
    changed: Notify,
}

impl InFlight {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Mutex<String>>>> {
        self.receipts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts tracking a message; `None` if it is already in flight (its receipt is updated).
    pub fn begin(&self, id: &str, receipt: &str) -> Option<Arc<Mutex<String>>> {
        let mut map = self.lock();
        if let Some(current) = map.get(id) {
            *current.lock().unwrap_or_else(|p| p.into_inner()) = receipt.to_owned();
            return None;
        }
        let shared = Arc::new(Mutex::new(receipt.to_owned()));
        map.insert(id.to_owned(), shared.clone());
        self.count.store(map.len(), Ordering::Release);
        Some(shared)
    }

    pub fn end(&self, id: &str) {
        let mut map = self.lock();
        map.remove(id);
        self.count.store(map.len(), Ordering::Release);
        drop(map);
        self.changed.notify_waiters();
    }

    pub fn len(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    pub async fn wait_until_at_most(&self, n: usize) {
        loop {
            let notified = self.changed.notified();
            if self.len() <= n {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receipt(shared: &Mutex<String>) -> String {
        shared.lock().expect("not poisoned").clone()
    }

    #[test]
    fn a_message_received_again_adopts_the_newer_receipt_instead_of_starting_twice() {
        let in_flight = InFlight::default();
        let first = in_flight.begin("m1", "r1").expect("new message starts");
        assert!(in_flight.begin("m2", "r1").is_some());
        assert_eq!(in_flight.len(), 2);
        assert!(in_flight.begin("m1", "r2").is_none(), "already in flight");
        assert_eq!(
            receipt(&first),
            "r2",
            "the running delivery settles with r2"
        );
        assert_eq!(in_flight.len(), 2);
        in_flight.end("m1");
        assert_eq!(in_flight.len(), 1);
        assert!(
            in_flight.begin("m1", "r3").is_some(),
            "ended: may start again"
        );
    }

    #[tokio::test]
    async fn waiting_for_room_ends_when_deliveries_end() {
        let in_flight = Arc::new(InFlight::default());
        in_flight.begin("m1", "r");
        in_flight.begin("m2", "r");
        let waiting = tokio::spawn({
            let in_flight = in_flight.clone();
            async move { in_flight.wait_until_at_most(1).await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        in_flight.end("m2");
        tokio::time::timeout(std::time::Duration::from_secs(1), waiting)
            .await
            .expect("woken once at most one remains")
            .expect("no panic");
    }
}
