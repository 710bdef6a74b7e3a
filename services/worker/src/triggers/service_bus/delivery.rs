//! One invocation's messages — one, or a batch — from receipt to settlement: build the request
//! body, invoke the handler while renewing the messages' locks (every lock, up to
//! `maxAutoLockRenewalDuration`; session receivers renew the session's lock instead), then
//! settle each message by Azure's rules and the handler's `Settlement` (see
//! `shoal_domain::service_bus_trigger::settlement`). If the worker's drain deadline passes
//! first, or its lease lapses, the messages are abandoned at once so another worker can take
//! them.
//!
//! While the handler takes no connections, or asks to slow down (429/503), the messages stay
//! locked in hand and are invoked once it answers or the `Retry-After` has passed (see
//! `invocation`), with no attempt counted and the broker's `DeliveryCount` untouched. Azure
//! Service Bus offers no way to give a message back without counting a delivery (abandon
//! counts one; defer takes it out of the receive order), so the hold lasts only as long as
//! the lock can be renewed: `maxAutoLockRenewalDuration` from the receive. Past it the message
//! is abandoned, and that one delivery is counted.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use shoal_connectors::{MessageReceiver, Received};
use shoal_domain::service_bus_trigger::metadata::InvocationContext;
use shoal_domain::service_bus_trigger::{
    AfterInvocation, Settlement, after_invocation, batch_payload, lock_renewal_delay,
    requested_settlements, single_payload,
};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;
use uuid::Uuid;

use crate::error::WorkerError;
use crate::invocation::{Hold, Unsettled};
use crate::triggers::service_bus::ServiceBusFunction;

/// A receiver shared by the receive loop and the deliveries that settle through it.
pub type SharedReceiver = Arc<Mutex<MessageReceiver>>;

enum Ended {
    /// The handler succeeded; what it asked per message.
    Succeeded(Vec<Option<Settlement>>),
    Failed(String),
    Abandoned,
    /// Received as the function's circuit breaker opened: given back, not invoked.
    HeldBack,
    /// The handler could not take them for as long as their locks could be held.
    HoldLapsed(String),
}

pub async fn deliver(
    ctx: Arc<ServiceBusFunction>,
    receiver: SharedReceiver,
    mut messages: Vec<Received>,
    renew_message_locks: bool,
    abandon: CancellationToken,
) {
    let count = messages.len();
    if count == 0 {
        return;
    }
    let function = &ctx.function;
    for _ in 0..count {
        function.stats.received();
    }
    let invocation_id = Uuid::now_v7();
    let first = &messages[0].message;
    let webhook_id = webhook_id(&messages);
    let span = tracing::info_span!("delivery", tenant = function.tenant, app = function.app,
        instance = function.instance, function = function.function, message_id = first.message_id,
        sequence_number = first.sequence_number, delivery_count = first.delivery_count,
        session_id = first.session_id, messages = count, invocation_id = %invocation_id);
    async {
        let tokens: Vec<String> = messages
            .iter()
            .map(|m| m.message.lock_token.clone())
            .collect();
        let plain: Vec<_> = messages.iter().map(|m| m.message.clone()).collect();
        let payload = || {
            let rand_guid = Uuid::new_v4().to_string();
            let context = InvocationContext {
                binding: &ctx.binding,
                function: &function.function,
                data_type: ctx.data_type,
                now: Utc::now(),
                rand_guid: &rand_guid,
            };
            Ok(if ctx.batched {
                batch_payload(&context, &plain)
            } else {
                single_payload(&context, &plain[0])
            })
        };
        let limit = ctx.options.max_auto_lock_renewal_duration.as_duration();
        let hold = Hold {
            until: Some(hold_until(&messages, limit)),
        };
        if !function.breaker.invokes() {
            settle_all(&ctx, &receiver, &messages, Ended::HeldBack).await;
            return;
        }
        let ended = tokio::select! {
            result = function.invoke_holding_with(&webhook_id, invocation_id, payload, |response| {
                let tokens: Vec<&str> = tokens.iter().map(String::as_str).collect();
                requested_settlements(response.settlement.as_ref(), &tokens)
                    .map_err(|e| format!("the handler's Settlement is invalid: {e}"))
            }, hold) => match result {
                Ok(asked) => Ended::Succeeded(asked),
                Err(Unsettled::Failed(reason)) => Ended::Failed(reason),
                Err(Unsettled::HoldEnded(reason)) => Ended::HoldLapsed(reason),
            },
            _ = renew_locks(&receiver, &mut messages, limit), if renew_message_locks => {
                Ended::Failed("lock renewal stopped".into())
            }
            _ = abandon.cancelled() => Ended::Abandoned,
        };
        settle_all(&ctx, &receiver, &messages, ended).await;
    }
    .instrument(span)
    .await;
    ctx.end_in_flight(count);
}

/// The idempotency key the handler sees (`webhook-id`), stable when the same message is
/// delivered again: its `MessageId`, else its sequence number; for a batch, the sequence
/// numbers it spans.
fn webhook_id(messages: &[Received]) -> String {
    match messages {
        [one] => one
            .message
            .message_id
            .clone()
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| format!("sequence-{}", one.message.sequence_number)),
        [first, .., last] => format!(
            "sequences-{}-{}-{}",
            first.message.sequence_number,
            last.message.sequence_number,
            messages.len()
        ),
        [] => String::new(),
    }
}

async fn settle_all(
    ctx: &ServiceBusFunction,
    receiver: &SharedReceiver,
    messages: &[Received],
    ended: Ended,
) {
    let stats = &ctx.function.stats;
    match &ended {
        Ended::Succeeded(_) => {}
        Ended::Failed(reason) => {
            tracing::warn!(
                reason,
                "invocation failed; abandoning the message(s): the broker counts the delivery and dead-letters at MaxDeliveryCount"
            );
        }
        Ended::Abandoned => {
            ctx.function.breaker.probe_abandoned();
            tracing::warn!(
                "drain deadline passed or lease lapsed mid-invocation; abandoning the message(s) for another worker"
            );
        }
        Ended::HeldBack => {
            tracing::info!(
                "the function's circuit breaker is open; abandoning the message(s) without invoking (the broker counts the delivery)"
            );
        }
        Ended::HoldLapsed(reason) => {
            tracing::warn!(
                reason,
                "the handler could not take the message(s) for as long as their locks could be renewed (maxAutoLockRenewalDuration); abandoning them (the broker counts the delivery)"
            );
        }
    }
    for (i, message) in messages.iter().enumerate() {
        let after = match &ended {
            Ended::Succeeded(asked) => {
                stats.succeeded();
                after_invocation(true, asked.get(i).cloned().flatten(), ctx.auto_complete)
            }
            Ended::Failed(_) => {
                stats.failed();
                after_invocation(false, None, ctx.auto_complete)
            }
            Ended::Abandoned | Ended::HeldBack | Ended::HoldLapsed(_) => {
                AfterInvocation::Settle(Settlement::abandon())
            }
        };
        match after {
            AfterInvocation::Settle(settlement) => {
                let settled = settle(ctx, receiver, message, &settlement).await;
                if settled && matches!(settlement, Settlement::DeadLetter { .. }) {
                    stats.poisoned();
                }
            }
            AfterInvocation::LeaveLocked => {
                tracing::warn!(
                    lock_token = message.message.lock_token,
                    "autoCompleteMessages is off and the handler asked no Settlement; the message stays locked until its lock expires and is then delivered again"
                );
            }
        }
    }
}

/// Settles one message, retrying transient errors a few times. A lost lock is not retried:
/// the broker delivers the message again.
async fn settle(
    ctx: &ServiceBusFunction,
    receiver: &SharedReceiver,
    message: &Received,
    settlement: &Settlement,
) -> bool {
    const ATTEMPTS: u32 = 4;
    for attempt in 1..=ATTEMPTS {
        let result = receiver.lock().await.settle(message, settlement).await;
        match result {
            Ok(()) => return true,
            Err(e) if e.is_transient() && attempt < ATTEMPTS => {
                tracing::debug!(action = settlement.action(), attempt, error = %e, "settling failed; retrying");
                tokio::time::sleep(Duration::from_millis(100 * u64::from(attempt))).await;
            }
            Err(e) => {
                tracing::warn!(action = settlement.action(), entity = %ctx.entity, error = %e,
                    "settling the message failed; it is delivered again once its lock expires");
                ctx.function
                    .stats
                    .error(&WorkerError::SettleMessage(Box::new(e)));
                return false;
            }
        }
    }
    false
}

/// Until when the messages can be held while the handler cannot take them: as long as their
/// locks are renewed (`limit` from now, see [`renew_locks`]), or without renewal until a
/// second before the first lock expires.
fn hold_until(messages: &[Received], limit: Duration) -> Instant {
    let now = Instant::now();
    if !limit.is_zero() {
        return now + limit;
    }
    let left = messages
        .iter()
        .filter_map(Received::locked_until)
        .min()
        .and_then(|until| (until - Utc::now()).to_std().ok())
        .unwrap_or(Duration::ZERO);
    now + left.saturating_sub(Duration::from_secs(1))
}

/// Renews every message's lock before it ends, for at most `limit` (0: not at all), as Azure's
/// `ReceiverManager.RenewMessageLock` does. Never returns.
async fn renew_locks(receiver: &SharedReceiver, messages: &mut [Received], limit: Duration) {
    let started = Instant::now();
    loop {
        let earliest = messages.iter().filter_map(Received::locked_until).min();
        let remaining = earliest
            .and_then(|until| (until - Utc::now()).to_std().ok())
            .unwrap_or(Duration::ZERO);
        let delay = lock_renewal_delay(remaining);
        if earliest.is_none() || limit.is_zero() || started.elapsed() + delay >= limit {
            std::future::pending::<()>().await;
        }
        tokio::time::sleep(delay).await;
        let mut failed = false;
        {
            let mut receiver = receiver.lock().await;
            for message in messages.iter_mut() {
                if let Err(e) = receiver.renew_message_lock(message).await {
                    tracing::warn!(lock_token = message.message.lock_token, error = %e, "renewing the message lock failed");
                    failed = true;
                }
            }
        }
        if failed {
            // Not in a tight loop while the broker refuses: try again shortly.
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}
