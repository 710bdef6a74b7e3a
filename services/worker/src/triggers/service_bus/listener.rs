//! A Service Bus listener of a queue or subscription without sessions: one peek-lock receiver;
//! single dispatch keeps up to `maxConcurrentCalls` messages in invocation at once, receiving
//! as many as there is room for; batched (`isBatched`) invokes one batch at a time, of up to
//! `maxMessageBatchSize` messages, waiting up to `maxBatchWaitTime` for
//! `minMessageBatchSize`. On stop: no more receives, then wait for in-flight deliveries.

use std::sync::Arc;
use std::time::{Duration, Instant};

use shoal_connectors::Received;
use tokio::sync::{Mutex, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::breaker::Admit;
use crate::spans;
use crate::triggers::backoff::Retry;
use crate::triggers::service_bus::ServiceBusFunction;
use crate::triggers::service_bus::connect::{self, Connector};
use crate::triggers::service_bus::delivery::{self, SharedReceiver};

/// How long one receive waits for messages while none of the listener's are in invocation. An
/// empty receive costs one round trip to the broker.
pub const RECEIVE_WAIT: Duration = Duration::from_secs(1);
/// How long one receive waits while messages are in invocation: settlements and lock renewals
/// share the receiver and wait for a receive under way, so a long wait on an emptying queue
/// would hold back the last messages' completions (by up to [`RECEIVE_WAIT`]: the benchmark's
/// drains showed a 2,000-message queue finishing ~2 s after its last invocation).
const SETTLING_RECEIVE_WAIT: Duration = Duration::from_millis(20);

pub async fn run(
    ctx: Arc<ServiceBusFunction>,
    connector: Connector,
    stop: CancellationToken,
    abandon: CancellationToken,
) {
    let stats = ctx.function.stats.clone();
    let Some(namespace) = connect::namespace(&connector, &stats, &stop).await else {
        return;
    };
    if let Some(parking) = &ctx.parking {
        parking.connected(&namespace).await;
    }
    let prefetch = ctx.options.prefetch_count;
    let Some(receiver) = connect::until_ok(&stats, "opening the receiver", &stop, || {
        namespace.receiver(&ctx.entity, prefetch)
    })
    .await
    else {
        return;
    };
    let receiver: SharedReceiver = Arc::new(Mutex::new(receiver));
    // A batch is one invocation: one at a time, as Azure's batch receive loop does.
    let slots = if ctx.batched {
        1
    } else {
        ctx.options.max_concurrent_calls.max(1) as usize
    };
    let room = Arc::new(Semaphore::new(slots));
    let mut deliveries = JoinSet::new();
    let mut retry = Retry::default();
    stats.set_status("listening");
    loop {
        let first = tokio::select! {
            _ = stop.cancelled() => break,
            permit = room.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
        };
        // An open circuit breaker stops the receives; the messages stay in the entity.
        if ctx.function.breaker.holds_back() {
            stats.set_status(ctx.function.breaker.paused_status());
        }
        let Some(admission) = ctx.function.breaker.admit(&stop).await else {
            break;
        };
        let admit = admission.kind();
        // While the handler asks to slow down: one message at a time, after the deferral.
        let (most, wait) = ctx.function.breaker.intake(u32::MAX);
        if !wait.is_zero() {
            stats.set_status("throttled: the handler asked to slow down");
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = tokio::time::sleep(wait) => {}
            }
        }
        // A capped function takes in no more than its slots leave room for.
        let most = match &ctx.function.slots {
            None => most,
            Some(slots) => match slots
                .wait_for_room(|| ctx.in_flight(), |s| stats.set_status(s), &stop)
                .await
            {
                Some(room) => most.min(room),
                None => break,
            },
        };
        let mut permits = vec![first];
        while admit == Admit::Any
            && (permits.len() as u32) < most
            && let Ok(permit) = room.clone().try_acquire_owned()
        {
            permits.push(permit);
        }
        while deliveries.try_join_next().is_some() {}
        let want = if admit == Admit::One || most == 1 {
            1
        } else if ctx.batched {
            ctx.options.max_message_batch_size.max(1)
        } else {
            permits.len() as u32
        };
        let received = tokio::select! {
            _ = abandon.cancelled() => break,
            received = receive(&ctx, &receiver, want, &stop) => received,
        };
        let messages = match received {
            Ok(messages) => {
                retry.reset();
                stats.set_status("listening");
                messages
            }
            Err(e) => {
                connect::report(&stats, "receiving messages", e);
                drop((permits, admission));
                if !retry.pause(&stop).await {
                    break;
                }
                continue;
            }
        };
        if messages.is_empty() {
            continue;
        }
        ctx.add_in_flight(messages.len());
        if ctx.batched {
            let permit = permits.pop();
            let turn = admission.turn();
            deliveries.spawn({
                let (ctx, receiver, abandon) = (ctx.clone(), receiver.clone(), abandon.clone());
                async move {
                    let delivery = delivery::deliver(ctx, turn, receiver, messages, true, abandon);
                    spans::delivering(delivery).await;
                    drop(permit);
                }
            });
        } else {
            for message in messages {
                let permit = permits.pop();
                let turn = admission.turn();
                deliveries.spawn({
                    let (ctx, receiver, abandon) = (ctx.clone(), receiver.clone(), abandon.clone());
                    async move {
                        let delivery =
                            delivery::deliver(ctx, turn, receiver, vec![message], true, abandon);
                        spans::delivering(delivery).await;
                        drop(permit);
                    }
                });
            }
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
    if let Ok(receiver) = Arc::try_unwrap(receiver)
        && let Err(e) = receiver.into_inner().close().await
    {
        tracing::debug!(error = %e, "closing the receiver failed");
    }
}

/// Up to `want` messages. Batched: keeps receiving until `minMessageBatchSize` arrived or
/// `maxBatchWaitTime` passed since the first, as Azure's batch loop does; an empty first
/// receive returns at once so the caller can check for a stop.
async fn receive(
    ctx: &ServiceBusFunction,
    receiver: &SharedReceiver,
    want: u32,
    stop: &CancellationToken,
) -> Result<Vec<Received>, shoal_connectors::ServiceBusError> {
    let stats = &ctx.function.stats;
    stats.polled(chrono::Utc::now());
    let wait = if ctx.in_flight() > 0 {
        SETTLING_RECEIVE_WAIT
    } else {
        RECEIVE_WAIT
    };
    let mut batch = receiver.lock().await.receive(want, wait).await?;
    if !ctx.batched || batch.is_empty() {
        return Ok(batch);
    }
    let min = ctx.options.min_message_batch_size.clamp(1, want) as usize;
    let max_wait = ctx.options.max_batch_wait_time.as_duration();
    let started = Instant::now();
    while batch.len() < min && started.elapsed() < max_wait && !stop.is_cancelled() {
        let wait = RECEIVE_WAIT.min(max_wait.saturating_sub(started.elapsed()));
        stats.polled(chrono::Utc::now());
        let more = receiver
            .lock()
            .await
            .receive(want - batch.len() as u32, wait)
            .await?;
        batch.extend(more);
    }
    Ok(batch)
}
