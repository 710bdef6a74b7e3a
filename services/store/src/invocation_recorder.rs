//! Invocation telemetry as a process gathers it: every handler attempt adds to per-function,
//! per-minute counts and a duration histogram, a failed one is kept with its error and the
//! handler's `Logs`, and every attempt, successes too, goes to the invocation log the explorer
//! searches ([`crate::invocation_log`]) with its delivery's key, message id, RetryCount,
//! DequeueCount/DeliveryCount and trace context. Workers record their deliveries here, and the
//! API's webhook ingress its HTTP-triggered calls, so the explorer and the monitor show every
//! invocation whichever process made it. The call path only takes a short lock and updates
//! memory ([`InvocationTelemetry::record`]); a task writes what gathered every [`FLUSH_EVERY`]
//! in one transaction ([`Flusher`]), so the log costs no round trip per call.
//!
//! Bounded: at most [`MAX_FAILURES_PER_FLUSH`] failures, [`MAX_ATTEMPTS_PER_FLUSH`] logged
//! attempts and [`MAX_MINUTE_KEYS`] function-minutes wait for a flush, log lines are cut to
//! [`MAX_LOG_LINES`] of [`MAX_LOG_LINE_CHARS`] (and, in the invocation log, to
//! `shoal_domain::invocation_log::MAX_LOG_BYTES` in all); what does not fit is counted and
//! dropped, never queued. A flush that fails is logged and dropped too: telemetry never holds
//! back a call or grows without bound.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::invocation_log::{self, AttemptRecord, Status, TraceIds};
use crate::invocation_telemetry::{self, FailureRecord, MinuteRecord};
use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use shoal_domain::invocation_log::{RequestFacts, bounded_logs};
use shoal_domain::invocation_stats::{BUCKETS, bucket_of};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// Once a second, so `shoal invocations tail` and the dashboard's monitor show an attempt within
/// about two seconds of the handler's answer; a flush with nothing gathered writes nothing.
pub const FLUSH_EVERY: Duration = Duration::from_secs(1);
/// How long one flush may take before it is dropped; longer than [`FLUSH_EVERY`] because a write
/// under load may queue behind others, and the next tick waits for it (missed ticks are delayed).
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);
pub const MAX_FAILURES_PER_FLUSH: usize = 100;
/// Attempts for the invocation log per flush (a second): a process making more than this many
/// attempts a second logs the first of them; the minute counts still see every one.
pub const MAX_ATTEMPTS_PER_FLUSH: usize = 1_000;
pub const MAX_MINUTE_KEYS: usize = 10_000;
pub const MAX_LOG_LINES: usize = 50;
pub const MAX_LOG_LINE_CHARS: usize = 2_000;
/// Handler logs waiting for their attempt's outcome; more means attempts were cancelled.
const MAX_PENDING_LOGS: usize = 1_024;
/// Prune old rows every this many flushes (about every five minutes).
const PRUNE_EVERY_FLUSHES: u64 = 300;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct MinuteKey {
    tenant: String,
    app: String,
    function: String,
    minute: DateTime<Utc>,
}

#[derive(Debug, Default)]
struct Counts {
    invocations: i64,
    failures: i64,
    buckets: Vec<i64>,
}

#[derive(Debug, Default)]
struct Pending {
    minutes: HashMap<MinuteKey, Counts>,
    failures: Vec<FailureRecord>,
    attempts: Vec<AttemptRecord>,
    /// Logs of attempts under way, by invocation id, until their outcome is recorded.
    logs: HashMap<Uuid, Vec<String>>,
    dropped: u64,
}

/// The function an attempt belongs to.
#[derive(Clone, Copy, Debug)]
pub struct Target<'a> {
    pub tenant: &'a str,
    pub app: &'a str,
    pub function: &'a str,
}

/// What the invocation log keeps of an attempt beside its outcome.
#[derive(Clone, Debug, Default)]
pub struct Delivery {
    /// The delivery's `webhook-id`: the same for every attempt at one message.
    pub key: String,
    /// The attempt's RetryCount under the function's retry policy.
    pub retry_count: u32,
    /// Read from the request body (`shoal_domain::invocation_log::facts_of`).
    pub facts: RequestFacts,
    /// The trace context the handler received on this attempt (its `traceparent`).
    pub trace: Option<TraceIds>,
}

/// A process's telemetry, shared by all its listeners (a worker) or requests (the ingress).
#[derive(Debug, Default)]
pub struct InvocationTelemetry {
    pending: Mutex<Pending>,
}

impl InvocationTelemetry {
    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keeps a handler's `Logs` until its attempt's outcome is recorded (kept only if it
    /// failed).
    pub fn handler_logs(&self, invocation_id: Uuid, logs: &[String]) {
        let mut pending = self.lock();
        if pending.logs.len() >= MAX_PENDING_LOGS {
            pending.logs.clear();
        }
        let cut = logs
            .iter()
            .take(MAX_LOG_LINES)
            .map(|l| l.chars().take(MAX_LOG_LINE_CHARS).collect())
            .collect();
        pending.logs.insert(invocation_id, cut);
    }

    /// Adds one attempt of `target`.
    pub fn record(
        &self,
        target: Target<'_>,
        invocation_id: Uuid,
        delivery: Delivery,
        at: DateTime<Utc>,
        duration: Duration,
        failure: Option<&str>,
    ) {
        let minute = at.duration_trunc(TimeDelta::minutes(1)).unwrap_or(at);
        let duration_ms = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
        let mut pending = self.lock();
        let logs = pending.logs.remove(&invocation_id).unwrap_or_default();
        let minute_key = MinuteKey {
            tenant: target.tenant.to_owned(),
            app: target.app.to_owned(),
            function: target.function.to_owned(),
            minute,
        };
        if pending.minutes.len() >= MAX_MINUTE_KEYS && !pending.minutes.contains_key(&minute_key) {
            pending.dropped += 1;
            return;
        }
        let counts = pending.minutes.entry(minute_key).or_default();
        if counts.buckets.is_empty() {
            counts.buckets = vec![0; BUCKETS];
        }
        counts.invocations += 1;
        counts.buckets[bucket_of(duration_ms)] += 1;
        if failure.is_some() {
            counts.failures += 1;
        }
        let duration_ms = i64::try_from(duration_ms).unwrap_or(i64::MAX);
        let error = failure.map(|e| e.chars().take(MAX_LOG_LINE_CHARS).collect::<String>());
        if pending.attempts.len() < MAX_ATTEMPTS_PER_FLUSH {
            let payload = delivery.facts.payload;
            pending.attempts.push(AttemptRecord {
                tenant: target.tenant.to_owned(),
                app: target.app.to_owned(),
                function: target.function.to_owned(),
                delivery_key: delivery.key,
                message_id: delivery.facts.message_id,
                invocation_id,
                at,
                retry_count: i32::try_from(delivery.retry_count).unwrap_or(i32::MAX),
                delivery_count: delivery.facts.delivery_count,
                worker: String::new(),
                duration_ms,
                status: if failure.is_some() {
                    Status::Failed
                } else {
                    Status::Succeeded
                },
                error: error.clone(),
                logs: bounded_logs(&logs),
                trace: delivery.trace,
                payload_truncated: payload.as_ref().is_some_and(|p| p.truncated),
                payload_preview: payload.map(|p| p.text),
            });
        } else {
            pending.dropped += 1;
        }
        let Some(error) = error else { return };
        if pending.failures.len() >= MAX_FAILURES_PER_FLUSH {
            pending.dropped += 1;
            return;
        }
        pending.failures.push(FailureRecord {
            tenant: target.tenant.to_owned(),
            app: target.app.to_owned(),
            function: target.function.to_owned(),
            at,
            invocation_id,
            worker: String::new(),
            duration_ms,
            error,
            logs,
        });
    }

    /// Takes what gathered since the last flush, as rows made by `worker` (a worker's name, or
    /// the API process's for the ingress); and how many records were dropped for lack of
    /// room.
    fn take(&self, worker: &str) -> Gathered {
        let mut pending = self.lock();
        let minutes = std::mem::take(&mut pending.minutes)
            .into_iter()
            .map(|(k, c)| MinuteRecord {
                tenant: k.tenant,
                app: k.app,
                function: k.function,
                minute: k.minute,
                worker: worker.to_owned(),
                invocations: c.invocations,
                failures: c.failures,
                duration_buckets: c.buckets,
            })
            .collect();
        let failures = std::mem::take(&mut pending.failures)
            .into_iter()
            .map(|f| FailureRecord {
                worker: worker.to_owned(),
                ..f
            })
            .collect();
        let attempts = std::mem::take(&mut pending.attempts)
            .into_iter()
            .map(|a| AttemptRecord {
                worker: worker.to_owned(),
                ..a
            })
            .collect();
        Gathered {
            minutes,
            failures,
            attempts,
            dropped: std::mem::take(&mut pending.dropped),
        }
    }
}

/// What one flush writes.
struct Gathered {
    minutes: Vec<MinuteRecord>,
    failures: Vec<FailureRecord>,
    attempts: Vec<AttemptRecord>,
    dropped: u64,
}

/// Writes a process's telemetry every [`FLUSH_EVERY`], and once more when stopped; `worker`
/// is the name its rows carry (what the explorer shows as the attempt's worker).
pub struct Flusher {
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl Flusher {
    pub fn start(
        pool: sqlx::PgPool,
        worker: String,
        telemetry: Arc<InvocationTelemetry>,
    ) -> Flusher {
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        let task = tokio::spawn(async move {
            let mut every = tokio::time::interval(FLUSH_EVERY);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut flushes = 0u64;
            loop {
                tokio::select! {
                    _ = stopped.cancelled() => break,
                    _ = every.tick() => {}
                }
                flushes += 1;
                flush(
                    &pool,
                    &worker,
                    &telemetry,
                    flushes.is_multiple_of(PRUNE_EVERY_FLUSHES),
                )
                .await;
            }
            flush(&pool, &worker, &telemetry, false).await;
        });
        Flusher { stop, task }
    }

    /// Stops the periodic flushes after a last one.
    pub async fn stop(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

async fn flush(pool: &sqlx::PgPool, worker: &str, telemetry: &InvocationTelemetry, prune: bool) {
    let Gathered {
        minutes,
        failures,
        attempts,
        dropped,
    } = telemetry.take(worker);
    if dropped > 0 {
        tracing::warn!(dropped, "invocation telemetry was full; records dropped");
    }
    if minutes.is_empty() && failures.is_empty() && !prune {
        return;
    }
    let result = async {
        let mut tx = crate::begin_platform(pool).await?;
        invocation_telemetry::record(&mut tx, &minutes, &failures).await?;
        invocation_log::record(&mut tx, &attempts).await?;
        if prune {
            invocation_telemetry::prune(&mut tx).await?;
        }
        crate::commit(tx).await
    };
    match tokio::time::timeout(WRITE_TIMEOUT, result).await {
        Ok(Ok(())) => {}
        Ok(Err(error)) => {
            tracing::warn!(%error, minutes = minutes.len(), failures = failures.len(), "could not write invocation telemetry; dropped");
        }
        Err(_) => tracing::warn!("writing invocation telemetry timed out; dropped"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(function: &str) -> Target<'_> {
        Target {
            tenant: "contoso",
            app: "orders",
            function,
        }
    }

    fn delivery(key: &str) -> Delivery {
        Delivery {
            key: key.to_owned(),
            ..Delivery::default()
        }
    }

    #[test]
    fn attempts_add_up_per_function_and_minute_and_failures_keep_their_logs() {
        let telemetry = InvocationTelemetry::default();
        let at = "2026-11-24T10:00:30Z".parse::<DateTime<Utc>>().unwrap();
        let (ok, failed) = (Uuid::now_v7(), Uuid::now_v7());
        telemetry.handler_logs(ok, &["fine".into()]);
        telemetry.record(
            key("ship"),
            ok,
            delivery("m1"),
            at,
            Duration::from_millis(8),
            None,
        );
        telemetry.handler_logs(failed, &["boom".into()]);
        let retried = Delivery {
            retry_count: 1,
            facts: RequestFacts {
                message_id: Some("q-2".into()),
                delivery_count: Some(3),
                payload: None,
            },
            trace: Some(TraceIds {
                trace_id: "4bf92f3577b34da6a3ce929d0e0e4736".into(),
                span_id: "00f067aa0ba902b7".into(),
            }),
            ..delivery("m2")
        };
        telemetry.record(
            key("ship"),
            failed,
            retried,
            at,
            Duration::from_millis(250),
            Some("500"),
        );
        telemetry.record(
            key("bill"),
            Uuid::now_v7(),
            delivery("m3"),
            at,
            Duration::from_millis(1),
            None,
        );

        let Gathered {
            mut minutes,
            failures,
            attempts,
            dropped,
        } = telemetry.take("w1");
        minutes.sort_by(|a, b| a.function.cmp(&b.function));
        assert_eq!(dropped, 0);
        assert_eq!(minutes.len(), 2);
        let ship = &minutes[1];
        assert_eq!(
            (
                ship.function.as_str(),
                ship.invocations,
                ship.failures,
                ship.worker.as_str()
            ),
            ("ship", 2, 1, "w1")
        );
        assert_eq!(
            ship.minute,
            "2026-11-24T10:00:00Z".parse::<DateTime<Utc>>().unwrap()
        );
        assert_eq!(ship.duration_buckets[bucket_of(8)], 1);
        assert_eq!(ship.duration_buckets[bucket_of(250)], 1);
        assert_eq!(failures.len(), 1);
        assert_eq!(failures[0].invocation_id, failed);
        assert_eq!(failures[0].error, "500");
        assert_eq!(failures[0].logs, ["boom"]);
        assert_eq!(failures[0].worker, "w1");
        // Every attempt goes to the invocation log, successes with their logs too.
        assert_eq!(attempts.len(), 3);
        assert_eq!(
            (
                attempts[0].delivery_key.as_str(),
                attempts[0].status,
                attempts[0].logs.clone()
            ),
            ("m1", Status::Succeeded, vec!["fine".to_owned()])
        );
        let second = &attempts[1];
        assert_eq!(second.status, Status::Failed);
        assert_eq!(second.error.as_deref(), Some("500"));
        assert_eq!((second.retry_count, second.delivery_count), (1, Some(3)));
        assert_eq!(second.message_id.as_deref(), Some("q-2"));
        assert_eq!(
            second
                .trace
                .as_ref()
                .map(|t| (t.trace_id.as_str(), t.span_id.as_str())),
            Some(("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"))
        );
        assert_eq!(attempts[0].trace, None);
        assert!(attempts.iter().all(|a| a.worker == "w1"));
        // Taken means gone.
        let gathered = telemetry.take("w1");
        assert!(gathered.minutes.is_empty() && gathered.failures.is_empty());
        assert!(gathered.attempts.is_empty());
    }

    #[test]
    fn what_does_not_fit_is_counted_and_dropped() {
        let telemetry = InvocationTelemetry::default();
        let at = Utc::now();
        for _ in 0..MAX_FAILURES_PER_FLUSH + 5 {
            telemetry.record(
                key("ship"),
                Uuid::now_v7(),
                delivery("m"),
                at,
                Duration::ZERO,
                Some("no"),
            );
        }
        let long: Vec<String> = (0..MAX_LOG_LINES + 10)
            .map(|_| "x".repeat(MAX_LOG_LINE_CHARS + 10))
            .collect();
        let id = Uuid::now_v7();
        telemetry.handler_logs(id, &long);
        let gathered = telemetry.take("w1");
        assert_eq!(gathered.failures.len(), MAX_FAILURES_PER_FLUSH);
        assert_eq!(gathered.attempts.len(), MAX_FAILURES_PER_FLUSH + 5);
        assert_eq!(gathered.dropped, 5);
        // Every attempt still counts in its minute.
        assert_eq!(
            gathered.minutes[0].failures,
            i64::try_from(MAX_FAILURES_PER_FLUSH + 5).unwrap()
        );
        let kept = telemetry.lock().logs.remove(&id).unwrap();
        assert_eq!(kept.len(), MAX_LOG_LINES);
        assert!(kept.iter().all(|l| l.chars().count() == MAX_LOG_LINE_CHARS));
        // The invocation log keeps a known number of attempts a flush.
        for _ in 0..MAX_ATTEMPTS_PER_FLUSH + 2 {
            telemetry.record(
                key("ship"),
                Uuid::now_v7(),
                delivery("m"),
                at,
                Duration::ZERO,
                None,
            );
        }
        let gathered = telemetry.take("w1");
        assert_eq!(gathered.attempts.len(), MAX_ATTEMPTS_PER_FLUSH);
        assert_eq!(gathered.dropped, 2);
    }
}
