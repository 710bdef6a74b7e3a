//! One message's delivery, from receipt to settlement, by the Azure Functions rules:
//! already past `maxDequeueCount` → poison without invoking; otherwise decode, invoke the
//! handler while renewing the invisibility at half its period, then on success write the
//! outputs and delete; on failure poison (last attempt) or release after `visibilityTimeout`.
//! A queue without a poison queue (a poison queue itself, or a name too long for one) leaves a
//! failed message invisible instead, as Azure does, and one past `maxDequeueCount` untouched.
//! While the function's circuit breaker is open a message is neither invoked nor poisoned: it
//! goes back to the queue (`hold_back`), and that receive does not count as an attempt.
//! If the worker's drain deadline passes first, or its lease lapses (see `lease.rs`), the
//! message is released at once (it was not the handler's failure, and another worker can take
//! it now).
//!
//! While the handler takes no connections, or asks to slow down (429/503), the message stays
//! in hand, its invisibility renewed, and is invoked once the handler answers or its
//! `Retry-After` has passed (see `invocation`): it is not released, since the receive that
//! brought it already raised its dequeue count, and nothing of the wait counts as an attempt.
//! The hold has no bound of its own; only the message's own expiry ends it.
//!
//! A retry whose wait is long is parked (`shoal_domain::durable_retry`): the message's
//! visibility timeout becomes the wait and Postgres keeps where its retries stand, counting
//! that receive as a hold. Whichever worker receives it next resumes the retries there if they
//! are due, or parks it again for what remains if it came back early; the parked state goes
//! once the message is settled. A handler's `retryAfter` on a final failure is the wait before
//! the message is visible again, instead of `visibilityTimeout`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use shoal_connectors::{Queue, QueueError, QueueMessage};
use shoal_domain::bindings::DataType;
use shoal_domain::durable_retry::{RetryState, Return};
use shoal_domain::host_config::QueuesOptions;
use shoal_domain::invocation::{QueueDelivery, queue_payload};
use shoal_domain::queue_trigger::{
    AfterFailure, Arrival, after_failure, is_last_attempt, on_arrival, renewal_period,
    trigger_value,
};
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;
use uuid::Uuid;

use crate::breaker::Turn;
use crate::error::WorkerError;
use crate::invocation::{Failure, FunctionHost, Hold, Outcome, Parked};
use crate::triggers::backoff;
use crate::triggers::storage_queue::in_flight::InFlight;
use crate::triggers::storage_queue::parking;

/// Everything a queue listener's deliveries share.
pub struct QueueFunction {
    pub function: Arc<FunctionHost>,
    /// The trigger binding's name (`Data.<name>`).
    pub binding: String,
    /// Its `dataType`: `binary` delivers the message's bytes in base64.
    pub data_type: Option<DataType>,
    pub queue: Queue,
    /// `<queue>-poison`; none for queues Azure gives none (`poison_queue_name`), whose failed
    /// messages are left invisible instead.
    pub poison: Option<Queue>,
    pub poison_created: OnceCell<()>,
    pub options: QueuesOptions,
    pub invisibility: Duration,
}

/// Delivers one message; `turn` is its part in the function's circuit breaker (every way out
/// before the invocation drops it, which hands a probe back).
pub async fn deliver(
    ctx: Arc<QueueFunction>,
    mut turn: Turn,
    message: QueueMessage,
    receipt: Arc<Mutex<String>>,
    in_flight: Arc<InFlight>,
    abandon: CancellationToken,
) {
    let function = &ctx.function;
    function.stats.received();
    let id = message.message_id.clone();
    let invocation_id = Uuid::now_v7();
    let span = tracing::info_span!("delivery", tenant = function.tenant, app = function.app,
        instance = function.instance, function = function.function, message_id = id, dequeue_count = message.dequeue_count,
        invocation_id = %invocation_id);
    async {
        let attempts = parking::attempts(function, &message).await;
        let dequeue_count = attempts.count;
        if !function.breaker.invokes() {
            // Received as the breaker opened: back to the queue, not invoked.
            hold_back(&ctx, &message, &receipt, dequeue_count).await;
            return;
        }
        let from = match &attempts.parked {
            None => RetryState::default(),
            Some(parked) => match parking::returned(parked, &message) {
                Return::ParkAgain(wait) => {
                    tracing::info!(due = %parked.due_at, "a parked message came back before its retry is due; parking it again (not an attempt)");
                    let state = parked.state.clone();
                    let wait = parking::park(function, &message, Parked { state, wait }).await;
                    release(&ctx, &message.message_id, &receipt, wait).await;
                    return;
                }
                Return::Resume => parked.state.clone(),
            },
        };
        let was_parked = attempts.parked.is_some();
        match on_arrival(dequeue_count, &ctx.options, ctx.poison.is_some()) {
            Arrival::Process => {}
            Arrival::Poison if !attempts.known => {
                tracing::warn!("message may be past maxDequeueCount, but its holds could not be read; trying again later rather than poisoning it on a guess");
                let later = ctx.options.visibility_timeout.as_duration();
                release(&ctx, &message.message_id, &receipt, later).await;
                return;
            }
            Arrival::Poison => {
                tracing::warn!("message arrived past maxDequeueCount; moving it to the poison queue");
                poison(&ctx, &message, &receipt).await;
                return;
            }
            Arrival::LeaveInvisible => {
                tracing::warn!("message arrived past maxDequeueCount on a queue without a poison queue; leaving it invisible, not invoked");
                return;
            }
        }
        let invoked = CancellationToken::new();
        let work = async {
            let outcome = tokio::select! {
                outcome = attempt(&ctx, &mut turn, &message, dequeue_count, invocation_id, from) => outcome,
                _ = abandon.cancelled() => Outcome::Abandoned,
            };
            invoked.cancel();
            outcome
        };
        let renewal = renew_invisibility(&ctx, &message.message_id, &receipt, &invoked);
        let (outcome, ()) = tokio::join!(work, renewal);
        if was_parked && matches!(outcome, Outcome::Succeeded | Outcome::Failed(_)) {
            // Settled after resuming: a later receive starts the retries afresh.
            if let Err(e) = ctx.function.held.unpark(&message.message_id).await {
                tracing::warn!(error = %e, "forgetting the message's parked retries failed; they lapse with the message");
            }
        }
        match outcome {
            Outcome::Succeeded => {
                delete(&ctx, &message.message_id, &receipt).await;
                ctx.function.stats.succeeded();
            }
            Outcome::Parked(parked) => {
                let wait = parking::park(function, &message, parked).await;
                release(&ctx, &message.message_id, &receipt, wait).await;
            }
            Outcome::Failed(failure) if ctx.function.breaker.holds_back() => {
                let reason = failure.reason;
                ctx.function.stats.failed();
                tracing::warn!(reason, "invocation failed while the function's circuit breaker is open; the message goes back to the queue, not to the poison queue");
                hold_back(&ctx, &message, &receipt, dequeue_count).await;
            }
            Outcome::Failed(failure) => {
                let reason = failure.reason;
                ctx.function.stats.failed();
                match after_failure(dequeue_count, &ctx.options, ctx.poison.is_some()) {
                    AfterFailure::Poison if !attempts.known => {
                        let later = ctx.options.visibility_timeout.as_duration();
                        tracing::warn!(reason, retry_in = ?later, "invocation failed on what may be its last attempt, but its holds could not be read; the message becomes visible again rather than poisoned on a guess");
                        release(&ctx, &message.message_id, &receipt, later).await;
                    }
                    AfterFailure::Poison => {
                        tracing::warn!(reason, "invocation failed on its last attempt; moving the message to the poison queue");
                        poison(&ctx, &message, &receipt).await;
                    }
                    AfterFailure::Release(delay) => {
                        // The handler's own `retryAfter` replaces `visibilityTimeout`.
                        let delay = failure
                            .retry_after
                            .map_or(delay, |asked| parking::until_expiry(&message, asked));
                        tracing::warn!(reason, retry_in = ?delay, "invocation failed; the message becomes visible again");
                        release(&ctx, &message.message_id, &receipt, delay).await;
                    }
                    AfterFailure::LeaveInvisible => {
                        tracing::warn!(reason, "invocation failed on a queue without a poison queue; the message stays invisible until its invisibility lapses");
                    }
                }
            }
            Outcome::Abandoned => {
                turn.hand_back();
                tracing::warn!("drain deadline passed or lease lapsed mid-invocation; releasing the message for another worker");
                release(&ctx, &message.message_id, &receipt, Duration::ZERO).await;
            }
        }
    }
    .instrument(span)
    .await;
    in_flight.end(&id);
    ctx.function.stats.set_in_flight(in_flight.len());
}

/// The handler's invocation for the message, with the function's retries: each attempt's
/// request is built afresh (its `sys.UtcNow`, its `RetryContext`). `DequeueCount` is the
/// message's attempts (see [`parking::attempts`]).
async fn attempt(
    ctx: &QueueFunction,
    turn: &mut Turn,
    message: &QueueMessage,
    dequeue_count: u32,
    invocation_id: Uuid,
    from: RetryState,
) -> Outcome {
    let text = match trigger_value(&message.text, ctx.options.message_encoding, ctx.data_type) {
        Ok(text) => text,
        Err(e) => return Outcome::Failed(Failure::new(e.to_string())),
    };
    let payload = || {
        let rand_guid = Uuid::new_v4().to_string();
        Ok(queue_payload(&QueueDelivery {
            binding: &ctx.binding,
            function: &ctx.function.function,
            text: &text,
            id: &message.message_id,
            pop_receipt: &message.pop_receipt,
            dequeue_count,
            insertion_time: message.insertion_time,
            expiration_time: message.expiration_time,
            next_visible_time: message.next_visible_time,
            now: chrono::Utc::now(),
            rand_guid: &rand_guid,
        }))
    };
    ctx.function
        .invoke_parking(
            turn,
            &message.message_id,
            invocation_id,
            payload,
            Hold { until: None },
            from,
        )
        .await
}

/// Keeps the message invisible while the handler runs: every half period, push its
/// visibility out by the full period again and keep the new receipt, until `invoked`.
///
/// It stops only between renewals, never inside one: an update the service made whose new
/// receipt was then dropped would leave settlement holding a stale receipt, so the delete
/// fails and the message comes back with its dequeue count raised (seen while a throttling
/// handler kept a message in hand through many renewals).
async fn renew_invisibility(
    ctx: &QueueFunction,
    id: &str,
    receipt: &Mutex<String>,
    invoked: &CancellationToken,
) {
    let period = renewal_period(ctx.invisibility);
    loop {
        tokio::select! {
            () = invoked.cancelled() => return,
            () = tokio::time::sleep(period) => {}
        }
        match ctx
            .queue
            .update_visibility(id, &current(receipt), ctx.invisibility)
            .await
        {
            Ok(new) => *receipt.lock().unwrap_or_else(|p| p.into_inner()) = new.pop_receipt,
            Err(e) => tracing::warn!(error = %e, "renewing the message's invisibility failed"),
        }
    }
}

async fn release(ctx: &QueueFunction, id: &str, receipt: &Mutex<String>, delay: Duration) {
    settle(ctx, "release", || {
        let r = current(receipt);
        let q = ctx.queue.clone();
        let id = id.to_owned();
        async move { q.update_visibility(&id, &r, delay).await.map(|_| ()) }
    })
    .await;
}

/// Gives a message back while the function's circuit breaker is open, so that the pause
/// poisons nothing and costs no attempt: the hold is recorded (every worker subtracts it from
/// the dequeue count, see [`parking::attempts`]) and the message is visible again at once (no listener
/// of the function receives while open). It keeps its id, so its `webhook-id` stays the same.
/// Only if the hold cannot be recorded, and this was its last attempt, is the message replaced
/// by a fresh copy of its body (a new id and dequeue count; then the original is deleted, and
/// if that fails it may be delivered twice, never lost).
async fn hold_back(
    ctx: &QueueFunction,
    message: &QueueMessage,
    receipt: &Mutex<String>,
    dequeue_count: u32,
) {
    let recorded = ctx
        .function
        .held
        .hold(&message.message_id, message.expiration_time)
        .await;
    if let Err(e) = recorded {
        tracing::warn!(error = %e, "recording the held-back message failed");
        // Whether or not the queue has a poison queue: past its last attempt the message would
        // never be invoked again.
        if is_last_attempt(dequeue_count, &ctx.options) {
            let copied = settle(ctx, "requeue", || ctx.queue.enqueue(&message.text)).await;
            if copied {
                delete(ctx, &message.message_id, receipt).await;
                return;
            }
        }
    }
    release(ctx, &message.message_id, receipt, Duration::ZERO).await;
}

/// Copies the message, body untouched, to `<queue>-poison` (created on first use), then
/// deletes it. If the delete fails the message may be poisoned twice, never lost.
async fn poison(ctx: &QueueFunction, message: &QueueMessage, receipt: &Mutex<String>) {
    let Some(poison) = &ctx.poison else {
        // Only reached through `on_arrival`/`after_failure`, which never poison without one.
        return;
    };
    let copied = settle(ctx, "poison", || async {
        ctx.poison_created
            .get_or_try_init(|| poison.create_if_missing())
            .await?;
        poison.enqueue(&message.text).await
    })
    .await;
    if !copied {
        // Leave it on the queue: it becomes visible again and is poisoned on a later attempt.
        return;
    }
    ctx.function.stats.poisoned();
    delete(ctx, &message.message_id, receipt).await;
}

/// Deletes the message with its current receipt (see [`settle`] for the retries).
async fn delete(ctx: &QueueFunction, id: &str, receipt: &Mutex<String>) -> bool {
    settle(ctx, "delete", || {
        let r = current(receipt);
        let q = ctx.queue.clone();
        let id = id.to_owned();
        async move { q.delete(&id, &r).await }
    })
    .await
}

fn current(receipt: &Mutex<String>) -> String {
    receipt.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Runs a settlement step with a few quick retries (`backoff::settle`). A lost receipt
/// (`MessageNotFound`) is not retried: the message was received again elsewhere or is gone,
/// and at-least-once delivery takes it from there.
async fn settle<F, Fut>(ctx: &QueueFunction, step: &str, op: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), QueueError>>,
{
    match backoff::settle(step, QueueError::is_transient, op).await {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!(step, queue = ctx.queue.name(), error = %e,
                "settlement step failed; the message will be delivered again after its invisibility");
            ctx.function
                .stats
                .error(&WorkerError::SettleMessage(e.into()));
            false
        }
    }
}
