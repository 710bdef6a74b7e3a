//! Per-listener statistics: counters the listener and its deliveries update lock-free, read by
//! heartbeats (`GET /v1/workers`) and `/metrics`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use shoal_domain::workers::{ListenerReport, MAX_UNDECLARED_OUTPUT_NAMES};

use crate::attempt_failure::{self, AttemptFailure};
use crate::bind_error::BindError;
use crate::breaker::handler::HandlerHealth;
use crate::concurrency::CallSlots;
use crate::error::{ErrorCounts, SourceErrorCounts, WorkerError};
use crate::hosted_apps::AppInstance;
use shoal_store::invocation_recorder::{Delivery, InvocationTelemetry, Target};

/// Identifies a listener: the function of an app instance and what it listens to.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ListenerKey {
    pub instance: AppInstance,
    pub function: String,
    pub trigger: &'static str,
    pub source: String,
}

#[derive(Debug)]
pub struct ListenerStats {
    pub key: ListenerKey,
    status: Mutex<String>,
    received: AtomicU64,
    succeeded: AtomicU64,
    failed: AtomicU64,
    retried: AtomicU64,
    /// Calls the handler answered 429/503: the message was deferred, not counted.
    deferred: AtomicU64,
    /// Messages parked at their source until a far-off retry is due.
    parked: AtomicU64,
    poisoned: AtomicU64,
    in_flight: AtomicU64,
    /// The app's handler as this worker sees it (set once the function is hosted).
    handler: std::sync::OnceLock<Arc<HandlerHealth>>,
    slots: std::sync::OnceLock<Arc<CallSlots>>,
    /// Unix milliseconds of the last poll; 0 before the first.
    last_poll_ms: AtomicI64,
    backoff_ms: AtomicU64,
    /// Why the connection's last token request failed (identity-based connections).
    token_error: Mutex<Option<String>>,
    undeclared_outputs: AtomicU64,
    /// The first undeclared output names seen, in the order seen.
    undeclared_names: Mutex<Vec<String>>,
    /// The worker's error counts, which the listener's failures add to.
    errors: Arc<ErrorCounts>,
    /// What the sources said when they failed, by service and label.
    source_errors: Arc<SourceErrorCounts>,
    /// The worker's failed handler calls by kind, which the listener's add to.
    failed_attempts: Arc<ErrorCounts>,
    /// The worker's invocation telemetry, which the listener's handler attempts add to; none
    /// when the worker runs with it off.
    telemetry: Option<Arc<InvocationTelemetry>>,
}

impl ListenerStats {
    fn new(
        key: ListenerKey,
        status: String,
        errors: Arc<ErrorCounts>,
        source_errors: Arc<SourceErrorCounts>,
        failed_attempts: Arc<ErrorCounts>,
        telemetry: Option<Arc<InvocationTelemetry>>,
    ) -> ListenerStats {
        ListenerStats {
            key,
            errors,
            source_errors,
            failed_attempts,
            telemetry,
            status: Mutex::new(status),
            received: AtomicU64::new(0),
            succeeded: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            retried: AtomicU64::new(0),
            deferred: AtomicU64::new(0),
            parked: AtomicU64::new(0),
            handler: std::sync::OnceLock::new(),
            slots: std::sync::OnceLock::new(),
            poisoned: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
            last_poll_ms: AtomicI64::new(0),
            backoff_ms: AtomicU64::new(0),
            token_error: Mutex::new(None),
            undeclared_outputs: AtomicU64::new(0),
            undeclared_names: Mutex::new(Vec::new()),
        }
    }

    pub fn set_status(&self, status: impl Into<String>) {
        *self.status.lock().unwrap_or_else(|p| p.into_inner()) = status.into();
    }

    /// Counts a failure of the listener that it retries (see [`WorkerError`]).
    pub fn error(&self, error: &WorkerError) {
        self.errors.count(error);
        if let Some(label) = error.source_label() {
            self.source_errors.count_label(label);
        }
    }

    pub fn set_token_error(&self, error: Option<String>) {
        *self.token_error.lock().unwrap_or_else(|p| p.into_inner()) = error;
    }

    pub fn received(&self) {
        self.received.fetch_add(1, Ordering::Relaxed);
    }
    pub fn succeeded(&self) {
        self.succeeded.fetch_add(1, Ordering::Relaxed);
    }
    pub fn failed(&self) {
        self.failed.fetch_add(1, Ordering::Relaxed);
    }
    pub fn retried(&self) {
        self.retried.fetch_add(1, Ordering::Relaxed);
    }
    pub fn deferred(&self) {
        self.deferred.fetch_add(1, Ordering::Relaxed);
    }
    pub fn parked(&self) {
        self.parked.fetch_add(1, Ordering::Relaxed);
    }
    /// Reports carry the instance's slots of the function's `maxConcurrency` from now on.
    pub fn watch_slots(&self, slots: Arc<CallSlots>) {
        let _ = self.slots.set(slots);
    }
    /// Reports say whether the app's handler is unreachable from now on.
    pub fn watch_handler(&self, health: Arc<HandlerHealth>) {
        let _ = self.handler.set(health);
    }
    pub fn poisoned(&self) {
        self.poisoned.fetch_add(1, Ordering::Relaxed);
    }
    pub fn set_in_flight(&self, n: usize) {
        self.in_flight.store(n as u64, Ordering::Relaxed);
    }
    pub fn polled(&self, at: DateTime<Utc>) {
        self.last_poll_ms
            .store(at.timestamp_millis(), Ordering::Relaxed);
    }
    pub fn set_backoff(&self, wait: Duration) {
        self.backoff_ms
            .store(wait.as_millis() as u64, Ordering::Relaxed);
    }

    /// Counts a successful invocation whose response set `Outputs` the function does not
    /// declare. Returns the names this listener had not seen yet (and still had room to
    /// remember), so the caller logs each once rather than once per message.
    pub fn undeclared_outputs(&self, names: &[String]) -> Vec<String> {
        self.undeclared_outputs.fetch_add(1, Ordering::Relaxed);
        let mut seen = self
            .undeclared_names
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let mut new = Vec::new();
        for name in names {
            if seen.len() < MAX_UNDECLARED_OUTPUT_NAMES && !seen.contains(name) {
                seen.push(name.clone());
                new.push(name.clone());
            }
        }
        new
    }

    pub fn report(&self) -> ListenerReport {
        let last_poll = match self.last_poll_ms.load(Ordering::Relaxed) {
            0 => None,
            ms => DateTime::from_timestamp_millis(ms),
        };
        ListenerReport {
            tenant: self.key.instance.tenant.clone(),
            app: self.key.instance.app.clone(),
            instance: self.key.instance.index,
            function: self.key.function.clone(),
            trigger: self.key.trigger.to_owned(),
            source: self.key.source.clone(),
            status: self
                .status
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
            received: self.received.load(Ordering::Relaxed),
            succeeded: self.succeeded.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            retried: self.retried.load(Ordering::Relaxed),
            deferred: self.deferred.load(Ordering::Relaxed),
            parked: self.parked.load(Ordering::Relaxed),
            handler_unreachable_since: self.handler.get().and_then(|h| h.unreachable_since()),
            poisoned: self.poisoned.load(Ordering::Relaxed),
            in_flight: self.in_flight.load(Ordering::Relaxed),
            last_poll,
            current_backoff_ms: self.backoff_ms.load(Ordering::Relaxed),
            last_token_error: self
                .token_error
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
            undeclared_outputs: self.undeclared_outputs.load(Ordering::Relaxed),
            undeclared_output_names: self
                .undeclared_names
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
            concurrency: self.slots.get().map(|s| s.report()),
        }
    }
}

impl ListenerStats {
    /// Keeps an attempt's handler `Logs` for its telemetry, until [`ListenerStats::observe`]
    /// records the outcome.
    pub fn handler_logs(&self, invocation_id: uuid::Uuid, logs: &[String]) {
        if let Some(telemetry) = &self.telemetry {
            telemetry.handler_logs(invocation_id, logs);
        }
    }

    /// Runs one handler attempt of this listener's function and records its duration and
    /// outcome in the invocation telemetry (when the worker records it), with what `delivery`
    /// says of it for the invocation log (read only then: a worker with telemetry off pays
    /// nothing for it).
    pub async fn observe<T>(
        &self,
        invocation_id: uuid::Uuid,
        delivery: impl FnOnce() -> Delivery,
        attempt: impl std::future::Future<Output = Result<T, AttemptFailure>>,
    ) -> Result<T, AttemptFailure> {
        let at = Utc::now();
        let started = std::time::Instant::now();
        let result = attempt.await;
        if let Err(failed) = &result {
            self.failed_attempts.count_label(failed.kind);
        }
        let Some(telemetry) = &self.telemetry else {
            return result;
        };
        let target = Target {
            tenant: &self.key.instance.tenant,
            app: &self.key.instance.app,
            function: &self.key.function,
        };
        let failure = result.as_ref().err().map(|f| f.reason.as_str());
        telemetry.record(
            target,
            invocation_id,
            delivery(),
            at,
            started.elapsed(),
            failure,
        );
        result
    }
}

/// The worker's live listeners. A listener is registered while it exists, so reports and
/// metrics show exactly the listeners running now.
#[derive(Debug)]
pub struct StatsRegistry {
    listeners: Mutex<BTreeMap<ListenerKey, Arc<ListenerStats>>>,
    errors: Arc<ErrorCounts>,
    /// What failing sources said, by service and label (`ConnectorError`).
    source_errors: Arc<SourceErrorCounts>,
    /// Listeners that did not start, by why (`BindError::label`).
    not_started: ErrorCounts,
    /// Failed handler calls, by kind (`attempt_failure`).
    failed_attempts: Arc<ErrorCounts>,
    telemetry: Option<Arc<InvocationTelemetry>>,
}

/// Telemetry on, as a worker records it by default.
impl Default for StatsRegistry {
    fn default() -> StatsRegistry {
        StatsRegistry::new(true)
    }
}

impl StatsRegistry {
    /// A registry whose listeners record invocation telemetry, or do not
    /// ([`crate::WorkerConfig::invocation_telemetry`]).
    pub fn new(invocation_telemetry: bool) -> StatsRegistry {
        StatsRegistry {
            listeners: Mutex::default(),
            errors: Arc::default(),
            source_errors: Arc::default(),
            not_started: ErrorCounts::of(&BindError::LABELS),
            failed_attempts: Arc::new(ErrorCounts::of(
                &attempt_failure::labels().collect::<Vec<_>>(),
            )),
            telemetry: invocation_telemetry.then(Arc::default),
        }
    }

    pub fn register(&self, key: ListenerKey, status: impl Into<String>) -> Arc<ListenerStats> {
        let stats = Arc::new(ListenerStats::new(
            key.clone(),
            status.into(),
            self.errors.clone(),
            self.source_errors.clone(),
            self.failed_attempts.clone(),
            self.telemetry.clone(),
        ));
        self.lock().insert(key, stats.clone());
        stats
    }

    /// Removes this listener's line, unless a newer listener of the same key (a restarted
    /// instance whose old listeners drain after the new ones started) has replaced it.
    pub fn unregister(&self, stats: &Arc<ListenerStats>) {
        let mut listeners = self.lock();
        if listeners
            .get(&stats.key)
            .is_some_and(|current| Arc::ptr_eq(current, stats))
        {
            listeners.remove(&stats.key);
        }
    }

    /// The worker's invocation telemetry, for its flusher; none when it is off.
    pub fn telemetry(&self) -> Option<Arc<InvocationTelemetry>> {
        self.telemetry.clone()
    }

    /// The worker's error counts by label (see [`WorkerError::metric_label`]).
    pub fn errors(&self) -> &ErrorCounts {
        &self.errors
    }

    /// What failing sources said, by `(service, label)` (see `ConnectorError`).
    pub fn source_errors(&self) -> &SourceErrorCounts {
        &self.source_errors
    }

    /// The listeners that did not start, by label (see [`BindError::label`]).
    pub fn not_started(&self) -> &ErrorCounts {
        &self.not_started
    }

    /// The failed handler calls, by kind (see `attempt_failure`).
    pub fn failed_attempts(&self) -> &ErrorCounts {
        &self.failed_attempts
    }

    pub fn reports(&self) -> Vec<ListenerReport> {
        self.lock().values().map(|s| s.report()).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<ListenerKey, Arc<ListenerStats>>> {
        self.listeners.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosted_apps::AppInstance;

    fn stats() -> ListenerStats {
        let key = ListenerKey {
            instance: AppInstance {
                tenant: "t".into(),
                app: "a".into(),
                index: 0,
            },
            function: "f".into(),
            trigger: "queueTrigger",
            source: "q".into(),
        };
        ListenerStats::new(
            key,
            "listening".into(),
            Arc::default(),
            Arc::default(),
            Arc::default(),
            Some(Arc::default()),
        )
    }

    #[test]
    fn a_source_failure_counts_its_step_and_what_the_source_said() {
        let registry = StatsRegistry::default();
        let stats = registry.register(stats().key, "listening");
        let lock_lost = shoal_connectors::ServiceBusError::LockLost {
            op: "complete".into(),
            message: "the lock expired".into(),
        };
        stats.error(&WorkerError::SettleMessage(lock_lost.into()));
        stats.error(&WorkerError::PollTrigger(
            shoal_connectors::QueueError::Unauthorized("403".into()).into(),
        ));
        let sources: BTreeMap<_, _> = registry.source_errors().snapshot().into_iter().collect();
        assert_eq!(sources[&("service_bus", "lock_lost")], 1);
        assert_eq!(sources[&("storage_queue", "unauthorized")], 1);
        assert_eq!(
            sources[&("kafka", "unavailable")],
            0,
            "every series from the start"
        );
        let steps: BTreeMap<_, _> = registry.errors().snapshot().into_iter().collect();
        assert_eq!((steps["settle_message"], steps["poll_trigger"]), (1, 1));
    }

    #[test]
    fn undeclared_output_names_are_new_once_and_bounded() {
        let stats = stats();
        let names = |list: &[&str]| list.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
        assert_eq!(stats.undeclared_outputs(&names(&["x", "y"])), ["x", "y"]);
        assert!(stats.undeclared_outputs(&names(&["y", "x"])).is_empty());
        let many: Vec<String> = (0..20).map(|i| format!("n{i}")).collect();
        let new = stats.undeclared_outputs(&many);
        assert_eq!(new.len(), MAX_UNDECLARED_OUTPUT_NAMES - 2);
        assert!(
            stats.undeclared_outputs(&many).is_empty(),
            "no room: nothing new to log"
        );
        let report = stats.report();
        assert_eq!(report.undeclared_outputs, 4, "every invocation counts");
        assert_eq!(
            report.undeclared_output_names.len(),
            MAX_UNDECLARED_OUTPUT_NAMES
        );
        assert_eq!(report.undeclared_output_names[..2], names(&["x", "y"]));
    }
}
