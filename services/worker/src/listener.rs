//! One queue-trigger listener: the polling loop of the Azure Functions queue listener.
//!
//! Fetch up to `batchSize` messages (received invisible for the invisibility period); start a
//! delivery for each; poll again as soon as in-flight work has dropped to `newBatchThreshold`
//! (so at most `batchSize + newBatchThreshold` are in flight); after an empty poll wait by the
//! randomized exponential back-off. On stop: no more polls (one under way finishes and its
//! messages are delivered), then wait for in-flight deliveries.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use shoal_connectors::QueueError;
use shoal_domain::host_config::QueuesOptions;
use shoal_domain::queue_trigger::{PollingBackoff, may_fetch};
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::delivery::{self, FunctionContext};

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
    fn begin(&self, id: &str, receipt: &str) -> Option<Arc<Mutex<String>>> {
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

    async fn wait_until_at_most(&self, n: usize) {
        loop {
            let notified = self.changed.notified();
            if self.len() <= n {
                return;
            }
            notified.await;
        }
    }
}

pub struct QueueListener {
    pub context: Arc<FunctionContext>,
    pub options: QueuesOptions,
    /// No more polls once cancelled.
    pub stop: CancellationToken,
    /// In-flight deliveries give up and release their messages once cancelled (drain deadline).
    pub abandon: CancellationToken,
}

impl QueueListener {
    pub async fn run(self) {
        let ctx = self.context.clone();
        let stats = ctx.stats.clone();
        let in_flight = Arc::new(InFlight::default());
        let mut deliveries = JoinSet::new();
        let mut backoff = PollingBackoff::new(self.options.max_polling_interval.as_duration());
        let mut missing_queue_logged = false;
        let written_to = ctx.watcher.watch(ctx.queue.address());
        stats.set_status("listening");
        loop {
            tokio::select! {
                _ = self.stop.cancelled() => break,
                _ = in_flight.wait_until_at_most(self.options.new_batch_threshold as usize) => {}
            }
            debug_assert!(may_fetch(in_flight.len(), &self.options));
            // Reap finished deliveries so the set does not grow without bound.
            while deliveries.try_join_next().is_some() {}
            stats.polled(chrono::Utc::now());
            // A stop does not cut a poll short: messages whose receipt is on its way would stay
            // invisible for the whole invisibility period. They are delivered, then the loop
            // ends. Only the drain deadline (or a lapsed lease) abandons the poll.
            let batch = tokio::select! {
                _ = self.abandon.cancelled() => break,
                batch = ctx.queue.receive(self.options.batch_size as u8, ctx.invisibility) => batch,
            };
            stats.set_token_error(ctx.queue.last_token_error());
            if batch.is_ok() && missing_queue_logged {
                stats.set_status("listening");
                missing_queue_logged = false;
            }
            let found = match batch {
                Ok(messages) if !messages.is_empty() => {
                    for message in messages {
                        let Some(receipt) =
                            in_flight.begin(&message.message_id, &message.pop_receipt)
                        else {
                            tracing::debug!(
                                message_id = message.message_id,
                                "message received again while in flight; receipt adopted"
                            );
                            continue;
                        };
                        stats.set_in_flight(in_flight.len());
                        deliveries.spawn(delivery::deliver(
                            ctx.clone(),
                            message,
                            receipt,
                            in_flight.clone(),
                            self.abandon.clone(),
                        ));
                    }
                    true
                }
                Ok(_) => false,
                Err(QueueError::QueueNotFound { .. }) => {
                    // Azure's listener waits for the queue to appear rather than creating it.
                    if !missing_queue_logged {
                        tracing::info!(
                            queue = ctx.queue.name(),
                            function = ctx.function,
                            "trigger queue does not exist yet; polling until it does"
                        );
                        missing_queue_logged = true;
                    }
                    false
                }
                Err(e) => {
                    tracing::warn!(queue = ctx.queue.name(), function = ctx.function, error = %e, "polling the trigger queue failed");
                    false
                }
            };
            if found {
                backoff.found_messages();
                stats.set_backoff(backoff.current());
                continue;
            }
            let wait = backoff.after_empty_poll(rand::random::<f64>());
            stats.set_backoff(wait);
            tokio::select! {
                _ = self.stop.cancelled() => break,
                _ = tokio::time::sleep(wait) => {}
                // This worker just wrote to the queue: poll now.
                _ = written_to.notified() => {}
            }
        }
        stats.set_status("draining");
        while let Some(result) = deliveries.join_next().await {
            if let Err(e) = result
                && e.is_panic()
            {
                tracing::error!(function = ctx.function, "a delivery panicked: {e}");
            }
        }
        stats.set_in_flight(0);
    }
}
