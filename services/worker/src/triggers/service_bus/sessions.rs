//! A Service Bus listener of a session-enabled queue or subscription: up to
//! `maxConcurrentSessions` slots, each holding one session at a time (accepted with
//! accept-next-session, so the broker never gives one session to two receivers). Within a
//! session messages are invoked one after another, in order (Azure's
//! `maxConcurrentCallsPerSession` is 1), or batched when the trigger is; the session's lock is
//! renewed while it is held (up to `maxAutoLockRenewalDuration`), and the slot moves on to
//! another session after `sessionIdleTimeout` without a message (Azure's default when unset is
//! the client's try timeout, 60 s).
//!
//! Each slot accepts on a connection of its own ([`SessionAcceptor`]), waits at most
//! [`accept_bound`] for the broker's answer, pauses while no session is free ([`IdlePace`]),
//! and keeps its state on the listener's line ([`SlotBoard`]): a slot the broker stopped
//! answering shows as `stuck`, and holds up no other slot.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use shoal_connectors::{MessageReceiver, ServiceBusError, SessionAcceptor};
use shoal_domain::host_config::ServiceBusOptions;
use shoal_domain::service_bus_trigger::lock_renewal_delay;
use tokio::sync::Mutex;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::breaker::{Admission, Admit};
use crate::spans;
use crate::triggers::backoff::Retry;
use crate::triggers::service_bus::ServiceBusFunction;
use crate::triggers::service_bus::connect::{self, Connector};
use crate::triggers::service_bus::delivery::{self, SharedReceiver};
use crate::triggers::service_bus::listener::RECEIVE_WAIT;
use crate::triggers::service_bus::slots::{IdlePace, SlotBoard, SlotState};

/// Azure's default `sessionIdleTimeout`: the client's `tryTimeout`.
const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// How much longer than the app's `clientRetryOptions.tryTimeout` a slot waits for the broker
/// to answer an accept. Azure's SDKs ask the broker to hold an accept-next-session attach for
/// at most their `TryTimeout` (the `com.microsoft:timeout` link property) and stop waiting after
/// it (azure-sdk-for-net `AmqpConnectionScope.OpenReceiverLinkAsync`); the margin lets the
/// broker's own answer at the end of that wait, "no session", arrive before the slot gives up.
const ACCEPT_ANSWER_MARGIN: Duration = Duration::from_secs(5);

/// How long one accept of the next session may wait for the broker's answer: the app's
/// `clientRetryOptions.tryTimeout` (60 s by default) and [`ACCEPT_ANSWER_MARGIN`]. Without an
/// answer by then the slot counts as stuck, gives its connection up and tries again on a new
/// one after a pause, while the other slots go on.
pub fn accept_bound(options: &ServiceBusOptions) -> Duration {
    options.client_retry_options.try_timeout.as_duration() + ACCEPT_ANSWER_MARGIN
}

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
    let count = ctx.options.max_concurrent_sessions.max(1) as usize;
    let board = Arc::new(SlotBoard::new(count, stats.clone()));
    board.set(0, SlotState::Listening);
    let bound = accept_bound(&ctx.options);
    let mut slots = JoinSet::new();
    for index in 0..count {
        let acceptor = namespace.session_acceptor(&ctx.entity, ctx.options.prefetch_count, bound);
        slots.spawn(slot(
            ctx.clone(),
            Slot {
                index,
                board: board.clone(),
            },
            acceptor,
            stop.clone(),
            abandon.clone(),
        ));
    }
    // The slots connect on their own; this connection has shown the namespace can be reached.
    namespace.close().await;
    while let Some(result) = slots.join_next().await {
        if let Err(e) = result
            && e.is_panic()
        {
            tracing::error!(
                function = ctx.function.function,
                "a session slot panicked: {e}"
            );
        }
    }
    stats.set_in_flight(0);
}

/// Which slot a task is, and where it reports.
struct Slot {
    index: usize,
    board: Arc<SlotBoard>,
}

impl Slot {
    fn set(&self, state: SlotState) {
        self.board.set(self.index, state);
    }
}

/// One slot: accept the next available session, process it until it is idle, give it back,
/// and accept the next; pause while none is free or the broker fails.
async fn slot(
    ctx: Arc<ServiceBusFunction>,
    me: Slot,
    mut acceptor: SessionAcceptor,
    stop: CancellationToken,
    abandon: CancellationToken,
) {
    let stats = ctx.function.stats.clone();
    let mut retry = Retry::default();
    let mut idle = IdlePace::default();
    while !stop.is_cancelled() {
        // An open circuit breaker stops accepting sessions; their messages stay put. (A
        // half-open probe accepts one session and receives one message from it.)
        if ctx.function.breaker.holds_back() {
            me.set(SlotState::Paused);
        }
        let Some(admission) = ctx.function.breaker.admit(&stop).await else {
            break;
        };
        stats.polled(Utc::now());
        let started = Instant::now();
        let accepted = tokio::select! {
            _ = stop.cancelled() => break,
            accepted = acceptor.accept_next() => accepted,
        };
        match accepted {
            Ok(None) => {
                // Nothing to probe with: the turn goes back before the pause.
                drop(admission);
                retry.reset();
                me.set(SlotState::Listening);
                if !pause(idle.after_none(started.elapsed()), &stop).await {
                    break;
                }
            }
            Ok(Some(receiver)) => {
                retry.reset();
                idle.reset();
                me.set(SlotState::Listening);
                session(&ctx, &me, receiver, admission, &stop, &abandon).await;
            }
            Err(e) => {
                drop(admission);
                me.set(match &e {
                    ServiceBusError::NoAnswer { .. } => SlotState::Stuck(e.to_string()),
                    _ => SlotState::Failing(format!("accepting a session: {e}")),
                });
                connect::count(&stats, "accepting a session", e);
                if !retry.pause(&stop).await {
                    break;
                }
            }
        }
    }
    acceptor.close().await;
}

/// Waits `wait` (false if stopped meanwhile).
async fn pause(wait: Duration, stop: &CancellationToken) -> bool {
    if wait.is_zero() {
        return !stop.is_cancelled();
    }
    tokio::select! {
        _ = stop.cancelled() => false,
        _ = tokio::time::sleep(wait) => true,
    }
}

async fn session(
    ctx: &Arc<ServiceBusFunction>,
    me: &Slot,
    receiver: MessageReceiver,
    admission: Admission,
    stop: &CancellationToken,
    abandon: &CancellationToken,
) {
    let session_id = receiver.session_id().unwrap_or_default().to_owned();
    tracing::debug!(
        function = ctx.function.function,
        session_id,
        "session accepted"
    );
    let receiver: SharedReceiver = Arc::new(Mutex::new(receiver));
    let held = CancellationToken::new();
    let renewal = tokio::spawn(renew_session_lock(
        receiver.clone(),
        ctx.options.max_auto_lock_renewal_duration.as_duration(),
        held.clone(),
    ));
    let idle_timeout = ctx
        .options
        .session_idle_timeout
        .as_ref()
        .map_or(DEFAULT_SESSION_IDLE_TIMEOUT, |t| t.as_duration());
    let admit = admission.kind();
    let want = if ctx.batched && admit == Admit::Any {
        ctx.options.max_message_batch_size.max(1)
    } else {
        1
    };
    let mut idle_since = Instant::now();
    let mut probed = false;
    // The session goes back when the breaker opens (or after its one probe message).
    while !stop.is_cancelled()
        && idle_since.elapsed() < idle_timeout
        && match admit {
            Admit::Any => !ctx.function.breaker.holds_back(),
            Admit::One => !probed,
        }
    {
        let wait = RECEIVE_WAIT
            .min(idle_timeout.saturating_sub(idle_since.elapsed()))
            .max(Duration::from_millis(10));
        ctx.function.stats.polled(Utc::now());
        let received = tokio::select! {
            _ = abandon.cancelled() => break,
            received = async { receiver.lock().await.receive(want, wait).await } => received,
        };
        match received {
            Ok(messages) if messages.is_empty() => {}
            Ok(messages) => {
                ctx.add_in_flight(messages.len());
                // In order: the next message of the session waits for this one's settlement.
                spans::delivering(delivery::deliver(
                    ctx.clone(),
                    admission.turn(),
                    receiver.clone(),
                    messages,
                    false,
                    abandon.clone(),
                ))
                .await;
                idle_since = Instant::now();
                probed = true;
            }
            Err(e) => {
                // Most likely the session lock was lost; another slot (or worker) takes it over.
                me.set(SlotState::Failing(format!("receiving from a session: {e}")));
                connect::count(&ctx.function.stats, "receiving from a session", e);
                break;
            }
        }
    }
    // A probe that received nothing hands its turn back.
    drop(admission);
    held.cancel();
    let _ = renewal.await;
    if let Ok(receiver) = Arc::try_unwrap(receiver)
        && let Err(e) = receiver.into_inner().close().await
    {
        tracing::debug!(session_id, error = %e, "closing the session receiver failed");
    }
    tracing::debug!(
        function = ctx.function.function,
        session_id,
        "session released"
    );
}

/// Renews the session's lock before it ends while the session is held, for at most `limit`
/// (0: not at all).
async fn renew_session_lock(receiver: SharedReceiver, limit: Duration, held: CancellationToken) {
    let started = Instant::now();
    loop {
        let until = receiver.lock().await.session_locked_until();
        let remaining = until
            .and_then(|until| (until - Utc::now()).to_std().ok())
            .unwrap_or(Duration::ZERO);
        let delay = lock_renewal_delay(remaining).max(Duration::from_millis(100));
        if until.is_none() || limit.is_zero() || started.elapsed() + delay >= limit {
            return;
        }
        tokio::select! {
            _ = held.cancelled() => return,
            _ = tokio::time::sleep(delay) => {}
        }
        if let Err(e) = receiver.lock().await.renew_session_lock().await {
            tracing::warn!(error = %e, "renewing the session lock failed");
        }
    }
}
