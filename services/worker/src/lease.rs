//! The worker's own lease, as the worker sees it, and self-fencing.
//!
//! The database counts a worker alive until `heartbeat_at + lease_ttl`, where `heartbeat_at` is
//! the database's `now()` in the heartbeat's transaction. The worker measures from the moment
//! it *sent* its last successful heartbeat, which is earlier, so its own view never outlives
//! the database's. When `lease_ttl` minus a margin has passed without a successful heartbeat,
//! the lease is lost: every instance started under it stops polling at once, in-flight
//! deliveries get until the full TTL (when the database may hand the instances to another
//! worker) and are then abandoned (their messages released), and nothing starts again until a
//! heartbeat succeeds and opens a new [`Held`] period.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// One uninterrupted period of holding the lease. Instances started in it hang their tokens off
/// it, so losing the lease stops them without waiting for anyone.
#[derive(Clone, Debug)]
pub struct Held {
    pub generation: u64,
    /// Cancelled when the lease is lost: no more polls.
    pub stop: CancellationToken,
    /// Cancelled when the lease has lapsed in the database too (or the worker's drain deadline
    /// passed): in-flight deliveries give up and release their messages.
    pub abandon: CancellationToken,
}

#[derive(Clone)]
pub struct Lease {
    inner: Arc<Inner>,
}

struct Inner {
    /// When the last successful heartbeat was sent.
    renewed: watch::Sender<Option<Instant>>,
    held: watch::Sender<Option<Held>>,
}

impl Lease {
    /// A lease that is lost `valid_for` after the last renewal; the guard task enforcing it
    /// runs until aborted. Periods' `abandon` tokens are children of `abandon`.
    pub fn fenced(
        ttl: Duration,
        valid_for: Duration,
        abandon: CancellationToken,
    ) -> (Lease, JoinHandle<()>) {
        let lease = Lease {
            inner: Arc::new(Inner {
                renewed: watch::channel(None).0,
                held: watch::channel(None).0,
            }),
        };
        let guard = tokio::spawn(guard(lease.inner.clone(), ttl, valid_for, abandon));
        (lease, guard)
    }

    /// A lease that is always held (all-apps mode: no scheduler moves instances away, so there
    /// is nothing to fence against, and Postgres being down does not stop the listeners).
    pub fn unfenced(abandon: CancellationToken) -> Lease {
        let held = Held {
            generation: 1,
            stop: CancellationToken::new(),
            abandon,
        };
        Lease {
            inner: Arc::new(Inner {
                renewed: watch::channel(None).0,
                held: watch::channel(Some(held)).0,
            }),
        }
    }

    /// A heartbeat sent at `sent_at` succeeded.
    pub fn renewed(&self, sent_at: Instant) {
        self.inner.renewed.send_if_modified(|last| {
            if last.is_none_or(|l| sent_at > l) {
                *last = Some(sent_at);
                true
            } else {
                false
            }
        });
    }

    /// The current period, if the lease is held.
    pub fn held(&self) -> Option<Held> {
        self.inner.held.borrow().clone()
    }

    /// Changes whenever the lease is gained or lost.
    pub fn subscribe(&self) -> watch::Receiver<Option<Held>> {
        self.inner.held.subscribe()
    }
}

async fn guard(inner: Arc<Inner>, ttl: Duration, valid_for: Duration, abandon: CancellationToken) {
    let mut renewals = inner.renewed.subscribe();
    let mut generation = 0;
    loop {
        let sent = *renewals.borrow_and_update();
        match sent {
            Some(sent) if Instant::now() < sent + valid_for => {
                if inner.held.borrow().is_none() {
                    generation += 1;
                    if generation > 1 {
                        tracing::info!("lease renewed; app instances may start again");
                    }
                    inner.held.send_replace(Some(Held {
                        generation,
                        stop: CancellationToken::new(),
                        abandon: abandon.child_token(),
                    }));
                }
                tokio::select! {
                    _ = tokio::time::sleep_until(sent + valid_for) => {}
                    changed = renewals.changed() => if changed.is_err() { return },
                }
            }
            _ => {
                if let Some(held) = inner.held.send_replace(None) {
                    tracing::error!(
                        lease_ttl = ?ttl,
                        "lease lost: no heartbeat reached Postgres in time; stopping all app instances"
                    );
                    held.stop.cancel();
                    // `held` implies a renewal; the database may reassign at `sent + ttl`.
                    let lapses = sent.map_or_else(Instant::now, |s| s + ttl);
                    tokio::spawn(async move {
                        tokio::time::sleep_until(lapses).await;
                        held.abandon.cancel();
                    });
                }
                if renewals.changed().await.is_err() {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn lease_is_lost_before_the_ttl_and_regained_with_a_new_period() {
        let (lease, guard) = Lease::fenced(
            Duration::from_secs(10),
            Duration::from_secs(8),
            CancellationToken::new(),
        );
        let mut changes = lease.subscribe();
        assert!(lease.held().is_none(), "nothing before the first heartbeat");

        let sent = Instant::now();
        lease.renewed(sent);
        changes.changed().await.unwrap();
        let first = lease.held().expect("held after a heartbeat");

        // Renewals keep it; a stale (earlier) renewal changes nothing.
        tokio::time::sleep(Duration::from_secs(5)).await;
        lease.renewed(Instant::now());
        lease.renewed(sent);
        tokio::time::sleep(Duration::from_secs(7)).await;
        assert!(!first.stop.is_cancelled());

        // 8 s after the last renewal it is lost: polling stops now, deliveries at 10 s.
        tokio::time::sleep(Duration::from_millis(1001)).await;
        assert!(lease.held().is_none());
        assert!(first.stop.is_cancelled());
        assert!(!first.abandon.is_cancelled());
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert!(first.abandon.is_cancelled());

        lease.renewed(Instant::now());
        tokio::time::sleep(Duration::from_millis(1)).await;
        let second = lease.held().expect("held again");
        assert_eq!(second.generation, first.generation + 1);
        assert!(!second.stop.is_cancelled());
        guard.abort();
    }
}
