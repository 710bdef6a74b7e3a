//! A timer's listener: read where the schedule stands, wait for its next occurrence, move the
//! status on from it (only the worker whose move lands fires it) and invoke, under the
//! function's retry policy and circuit breaker.
//!
//! The status is moved on before the invocation, not after it as Azure's listener does: the
//! move is what elects the one worker to fire, so a worker that stops between the move and the
//! call loses that one occurrence rather than two workers firing it. An occurrence whose
//! handler stays unreachable (or keeps throttling) until the next one is due is given up.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use shoal_domain::timer_trigger::{
    Reason, ScheduleStatus, TimerInvocation, after_invocation, next_after, start, timer_payload,
    until_next,
};
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;
use uuid::Uuid;

use super::BoundTimer;
use super::status_store::StatusStore;
use crate::breaker::Turn;
use crate::invocation::{FunctionHost, Hold, Retries, Unsettled};
use crate::triggers::backoff::Retry;

/// How late past its occurrence an invocation may still start as that occurrence: beyond it
/// (the breaker held the function, or the worker could not reach Postgres) the listener starts
/// over, and the occurrence is past due (monitored) or skipped.
const LATE: Duration = Duration::from_secs(5);

pub(super) async fn run(
    timer: BoundTimer,
    function: Arc<FunctionHost>,
    stop: CancellationToken,
    abandon: CancellationToken,
) {
    let store = StatusStore::of(&function, timer.fenced);
    let stats = function.stats.clone();
    stats.set_status("listening");
    let mut retry = Retry::default();
    // `runOnStartup` runs once, when the listener starts.
    let mut starting = true;
    while !stop.is_cancelled() {
        let read = match store.get().await {
            Ok(read) => read,
            Err(e) => {
                stats.set_status(format!("reading the schedule status failed: {e}"));
                if !retry.pause(&stop).await {
                    break;
                }
                continue;
            }
        };
        let now = Utc::now();
        let Some(started) = start(
            read.as_ref(),
            &timer.schedule,
            timer.tz,
            now,
            timer.monitor,
            timer.run_on_startup && starting,
        ) else {
            stats.set_status("the schedule has no occurrence left");
            stop.cancelled().await;
            break;
        };
        let mut read = read;
        if started.write {
            match store.advance(read.as_ref(), &started.status).await {
                Ok(true) => read = Some(started.status),
                // Another instance moved it first: start again from what it wrote.
                Ok(false) => {
                    if !pause_briefly(&stop).await {
                        break;
                    }
                    continue;
                }
                Err(e) => {
                    stats.set_status(format!("writing the schedule status failed: {e}"));
                    if !retry.pause(&stop).await {
                        break;
                    }
                    continue;
                }
            }
        }
        starting = false;
        retry.reset();
        stats.set_status("listening");
        let status = started.status;
        let reason = match started.immediate {
            Some(reason) => reason,
            None => {
                tokio::select! {
                    _ = stop.cancelled() => break,
                    _ = tokio::time::sleep(until_next(&status, Utc::now())) => {}
                }
                Reason::Scheduled
            }
        };
        // Waits while the breaker is open.
        let Some(admission) = function.breaker.admit(&stop).await else {
            break;
        };
        let now = Utc::now();
        if reason == Reason::Scheduled && (now - status.next).to_std().unwrap_or_default() > LATE {
            // Held past its time: the next round sees it missed.
            continue;
        }
        let Some(after) = after_invocation(&status, &timer.schedule, timer.tz, now, reason) else {
            continue;
        };
        match store.advance(read.as_ref(), &after).await {
            Ok(true) => {}
            // Fired elsewhere, or this worker no longer holds the instance.
            Ok(false) => continue,
            Err(e) => {
                stats.set_status(format!("claiming the occurrence failed: {e}"));
                if !retry.pause(&stop).await {
                    break;
                }
                continue;
            }
        }
        let occurrence = match reason {
            Reason::Scheduled => status.next,
            Reason::PastDue { .. } | Reason::RunOnStartup => now,
        };
        let turn = admission.turn();
        tokio::select! {
            () = invoke(&timer, &function, turn, &status, reason, occurrence) => {}
            _ = abandon.cancelled() => break,
        }
    }
    stats.set_status("stopped");
}

/// Calls the handler for one occurrence, under the retry policy, holding it while the handler
/// is unreachable or throttling until the schedule's next occurrence.
async fn invoke(
    timer: &BoundTimer,
    function: &FunctionHost,
    mut turn: Turn,
    status: &ScheduleStatus,
    reason: Reason,
    occurrence: DateTime<Utc>,
) {
    function.stats.received();
    let invocation_id = Uuid::now_v7();
    // One idempotency key per occurrence: a retry of it is the same occurrence to the handler.
    let webhook_id = format!("timer-{}", occurrence.timestamp_micros());
    let span = tracing::info_span!("delivery", tenant = function.tenant, app = function.app,
        instance = function.instance, function = function.function, occurrence = %occurrence,
        past_due = reason.is_past_due(), invocation_id = %invocation_id);
    async {
        let payload = || {
            let rand_guid = Uuid::new_v4().to_string();
            Ok(timer_payload(&TimerInvocation {
                binding: &timer.binding,
                function: &function.function,
                schedule: &timer.schedule,
                status: timer.monitor.then_some(status),
                is_past_due: reason.is_past_due(),
                tz: timer.tz,
                now: Utc::now(),
                rand_guid: &rand_guid,
            }))
        };
        let hold = Hold {
            until: next_after(&timer.schedule, occurrence, timer.tz)
                .and_then(|next| (next - Utc::now()).to_std().ok())
                .map(|wait| Instant::now() + wait),
        };
        let result = function
            .invoke_holding_with(
                &mut turn,
                &webhook_id,
                invocation_id,
                payload,
                |_| Ok(()),
                hold,
                Retries::default(),
            )
            .await;
        match result {
            Ok(()) => function.stats.succeeded(),
            Err(Unsettled::Failed(failure)) => {
                function.stats.failed();
                tracing::warn!(
                    reason = failure.reason,
                    "the timer's invocation failed; the schedule goes on"
                );
            }
            Err(Unsettled::HoldEnded(why)) => {
                tracing::warn!(
                    why,
                    "the handler could not take the occurrence before the next was due; it is given up"
                );
            }
            // Retries::default() parks nothing.
            Err(Unsettled::Parked(_)) => {}
        }
    }
    .instrument(span)
    .await;
}

/// A short wait before reading the status again after another instance moved it.
async fn pause_briefly(stop: &CancellationToken) -> bool {
    tokio::select! {
        _ = stop.cancelled() => false,
        _ = tokio::time::sleep(Duration::from_millis(100)) => true,
    }
}
