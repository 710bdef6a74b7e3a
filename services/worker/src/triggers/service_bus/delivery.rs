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
//!
//! A retry far enough off (`shoal_domain::durable_retry`) of a queue's single message is
//! parked: a scheduled copy carries it (`parking`), the original is completed, and the copy
//! resumes the retries where they stood when it is delivered. If the copy cannot be sent the
//! retry waits under the lock as before.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use shoal_connectors::{MessageReceiver, Received, ServiceBusError};
use shoal_domain::durable_retry::RetryState;
use shoal_domain::service_bus_trigger::metadata::InvocationContext;
use shoal_domain::service_bus_trigger::{
    AfterInvocation, Settlement, after_invocation, batch_payload, lock_renewal_delay,
    requested_settlements, single_payload,
};
use shoal_domain::service_bus_trigger::{ReceivedMessage, parked};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;
use uuid::Uuid;

use crate::breaker::Turn;
use crate::error::WorkerError;
use crate::invocation::{FunctionHost, Hold, Retries, Unsettled};
use crate::triggers::backoff;
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
    /// Its scheduled copy carries its next retry: complete the original.
    Parked,
}

/// Delivers `messages` (one, or a batch) in one invocation; `turn` is their part in the
/// function's circuit breaker (dropped unreported, as when they are held back or given back,
/// it hands a probe back).
pub async fn deliver(
    ctx: Arc<ServiceBusFunction>,
    mut turn: Turn,
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
    // A parked copy is its original again to everyone from here on (id, delivery count,
    // properties); only a message this listener may park resumes its retries.
    let resumed: Vec<Option<RetryState>> = messages
        .iter_mut()
        .map(|m| parked::resume(&mut m.message))
        .collect();
    // The lock renewal updates the messages while the invocation runs: a parked copy is made
    // of this one.
    let parkable = match (&ctx.parking, resumed.as_slice()) {
        (Some(_), [one]) => Some((one.clone().unwrap_or_default(), messages[0].message.clone())),
        _ => None,
    };
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
        let accept = |response: &shoal_domain::invocation::HandlerResponse| {
            let tokens: Vec<&str> = tokens.iter().map(String::as_str).collect();
            requested_settlements(response.settlement.as_ref(), &tokens)
                .map_err(|e| format!("the handler's Settlement is invalid: {e}"))
        };
        let invoke = Invoke {
            function,
            webhook_id: &webhook_id,
            invocation_id,
            hold,
        };
        let ended = tokio::select! {
            ended = invoke.run(&ctx, &mut turn, parkable, payload, accept) => ended,
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

/// One invocation of a delivery's messages, under the function's retry policy.
struct Invoke<'a> {
    function: &'a FunctionHost,
    webhook_id: &'a str,
    invocation_id: Uuid,
    hold: Hold,
}

impl Invoke<'_> {
    /// Invokes, parking a far-off retry of a message that may be (`parkable`: where its
    /// retries start, and the message): if its copy cannot be sent, the retry waits here under
    /// the lock, then the retries go on.
    async fn run(
        &self,
        ctx: &ServiceBusFunction,
        turn: &mut Turn,
        parkable: Option<(RetryState, ReceivedMessage)>,
        payload: impl Fn() -> Result<serde_json::Value, String>,
        accept: impl Fn(
            &shoal_domain::invocation::HandlerResponse,
        ) -> Result<Vec<Option<Settlement>>, String>,
    ) -> Ended {
        let (from, message) = parkable.unzip();
        let mut retries = Retries {
            park: message.is_some(),
            from: from.unwrap_or_default(),
        };
        loop {
            let result = self
                .function
                .invoke_holding_with(
                    turn,
                    self.webhook_id,
                    self.invocation_id,
                    &payload,
                    &accept,
                    self.hold,
                    retries,
                )
                .await;
            let parked = match result {
                Ok(asked) => return Ended::Succeeded(asked),
                Err(Unsettled::Failed(failure)) => {
                    if let Some(wait) = failure.retry_after {
                        tracing::warn!(reason = failure.reason, retry_after = ?wait,
                            "the handler asked for a later try once the retry policy was spent; a Service Bus message is abandoned now, not deferred (docs/triggers.md)");
                    }
                    return Ended::Failed(failure.reason);
                }
                Err(Unsettled::HoldEnded(reason)) => return Ended::HoldLapsed(reason),
                Err(Unsettled::Parked(parked)) => parked,
            };
            let error = match ctx.parking.as_ref().zip(message.as_ref()) {
                Some((parking, message)) => match parking.park(message, &parked).await {
                    Ok(()) => return Ended::Parked,
                    Err(e) => e,
                },
                None => "this listener parks nothing".into(),
            };
            tracing::warn!(error, retry_in = ?parked.wait,
                "the retry could not be parked as a scheduled copy; it waits under the message's lock instead");
            tokio::time::sleep(parked.wait).await;
            retries = Retries {
                from: parked.state,
                park: false,
            };
        }
    }
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
        Ended::Parked => {
            stats.parked();
            tracing::info!(
                "the message's retry is parked as a scheduled copy; completing the original"
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
            Ended::Parked => AfterInvocation::Settle(Settlement::Complete),
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

/// Settles one message with a few quick retries (`backoff::settle`). A lost lock is not
/// retried: the broker delivers the message again.
async fn settle(
    ctx: &ServiceBusFunction,
    receiver: &SharedReceiver,
    message: &Received,
    settlement: &Settlement,
) -> bool {
    let transient = |e: &ServiceBusError| e.is_transient();
    let settled = backoff::settle(settlement.action(), transient, || async {
        receiver.lock().await.settle(message, settlement).await
    })
    .await;
    match settled {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!(action = settlement.action(), entity = %ctx.entity, error = %e,
                "settling the message failed; it is delivered again once its lock expires");
            ctx.function
                .stats
                .error(&WorkerError::SettleMessage(e.into()));
            false
        }
    }
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
