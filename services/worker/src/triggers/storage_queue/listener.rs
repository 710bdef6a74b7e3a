//! One queue-trigger listener: the polling loop of the Azure Functions queue listener.
//!
//! Fetch up to `batchSize` messages (received invisible for the invisibility period); start a
//! delivery for each; poll again as soon as in-flight work has dropped to `newBatchThreshold`
//! (so at most `batchSize + newBatchThreshold` are in flight); after an empty poll wait by the
//! randomized exponential back-off. On stop: no more polls (one under way finishes and its
//! messages are delivered), then wait for in-flight deliveries. While the function's circuit
//! breaker is open there are no polls at all; half-open, the probe polls for one message.
//! While the handler asks to slow down (429/503) it polls for one message at a time, and not
//! before the latest deferral has passed.

use std::sync::Arc;

use shoal_connectors::QueueError;
use shoal_domain::host_config::QueuesOptions;
use shoal_domain::queue_trigger::{PollingBackoff, may_fetch};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::breaker::Admit;
use crate::error::WorkerError;
use crate::spans;
use crate::triggers::storage_queue::delivery::{self, QueueFunction};
use crate::triggers::storage_queue::in_flight::InFlight;

pub struct QueueListener {
    pub context: Arc<QueueFunction>,
    pub options: QueuesOptions,
    /// No more polls once cancelled.
    pub stop: CancellationToken,
    /// In-flight deliveries give up and release their messages once cancelled (drain deadline).
    pub abandon: CancellationToken,
}

impl QueueListener {
    pub async fn run(self) {
        let ctx = self.context.clone();
        let stats = ctx.function.stats.clone();
        let in_flight = Arc::new(InFlight::default());
        let mut deliveries = JoinSet::new();
        let mut backoff = PollingBackoff::new(self.options.max_polling_interval.as_duration());
        let mut missing_queue_logged = false;
        let mut paused_shown = false;
        let written_to = ctx.function.watcher.watch(ctx.queue.address());
        stats.set_status("listening");
        loop {
            tokio::select! {
                _ = self.stop.cancelled() => break,
                _ = in_flight.wait_until_at_most(self.options.new_batch_threshold as usize) => {}
            }
            debug_assert!(may_fetch(in_flight.len(), &self.options));
            // An open circuit breaker stops the polls; the messages stay in the queue.
            let breaker = &ctx.function.breaker;
            if breaker.holds_back() {
                stats.set_status(breaker.paused_status());
                paused_shown = true;
            }
            let Some(admission) = breaker.admit(&self.stop).await else {
                break;
            };
            let (most, wait) = breaker.intake(self.options.batch_size);
            if !wait.is_zero() {
                stats.set_status("throttled: the handler asked to slow down");
                paused_shown = true;
                tokio::select! {
                    _ = self.stop.cancelled() => break,
                    _ = tokio::time::sleep(wait) => {}
                }
            }
            // A capped function takes in no more than its slots leave room for.
            let most = match &ctx.function.slots {
                None => most,
                Some(slots) => match slots
                    .wait_for_room(|| in_flight.len(), |s| stats.set_status(s), &self.stop)
                    .await
                {
                    Some(room) => most.min(room),
                    None => break,
                },
            };
            let batch_size = match admission.kind() {
                Admit::Any => most as u8,
                Admit::One => 1,
            };
            // Reap finished deliveries so the set does not grow without bound.
            while deliveries.try_join_next().is_some() {}
            stats.polled(chrono::Utc::now());
            // A stop does not cut a poll short: messages whose receipt is on its way would stay
            // invisible for the whole invisibility period. They are delivered, then the loop
            // ends. Only the drain deadline (or a lapsed lease) abandons the poll.
            let batch = tokio::select! {
                _ = self.abandon.cancelled() => break,
                batch = ctx.queue.receive(batch_size, ctx.invisibility) => batch,
            };
            stats.set_token_error(ctx.queue.last_token_error());
            if batch.is_ok() && (missing_queue_logged || paused_shown) {
                stats.set_status("listening");
                missing_queue_logged = false;
                paused_shown = false;
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
                        deliveries.spawn(spans::delivering(delivery::deliver(
                            ctx.clone(),
                            admission.turn(),
                            message,
                            receipt,
                            in_flight.clone(),
                            self.abandon.clone(),
                        )));
                    }
                    true
                }
                Ok(_) => false,
                Err(QueueError::QueueNotFound { .. }) => {
                    // Azure's listener waits for the queue to appear rather than creating it.
                    if !missing_queue_logged {
                        tracing::info!(
                            queue = ctx.queue.name(),
                            function = ctx.function.function,
                            "trigger queue does not exist yet; polling until it does"
                        );
                        missing_queue_logged = true;
                    }
                    false
                }
                Err(e) => {
                    tracing::warn!(queue = ctx.queue.name(), function = ctx.function.function, error = %e, "polling the trigger queue failed");
                    stats.error(&WorkerError::PollTrigger(e.into()));
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
                tracing::error!(function = ctx.function.function, "a delivery panicked: {e}");
            }
        }
        stats.set_in_flight(0);
    }
}
