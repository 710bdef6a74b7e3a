//! Whether an app's handler takes connections, as this worker sees it: shared by every
//! function of the app on this worker (see `Breakers::register`).
//!
//! A connection failure (refused, a connect timeout, a name that does not resolve — not a 5xx,
//! which is an answer) is never a message's failed attempt: the delivery keeps its message in
//! hand (invisible, or locked) and waits until the handler answers again ([`HandlerHealth::
//! wait_for_answer`]). Meanwhile one task per app on this worker probes the handler, as Azure's
//! host waits for its custom handler (see `shoal_invoker::pressure`), at intervals that grow
//! from [`run::FIRST_PROBE`] to [`run::LONGEST_PROBE`]. A run of [`run::UNREACHABLE_AFTER`] connection
//! failures (deliveries' and probes' alike, with no answer between) says the handler is
//! unreachable: the sync task opens every breaker of the app for every worker (cause
//! `handlerUnreachable`), so no listener of the app receives any more. The first answered
//! probe closes them again, so listening resumes within one probe interval of the handler
//! coming back.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use shoal_domain::apps::health_check::HealthCheck;
use shoal_invoker::{InvocationError, Invoker};
use tokio::sync::{Notify, watch};
use url::Url;
mod run;

pub use run::{AppKey, ProbePace, Reach, Report, Run};

/// How long a probe may take: the handler's answer to it is not read.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// Where the app's handler is, how to reach it, and its declared health check.
#[derive(Clone)]
struct Target {
    handler: Url,
    invoker: Invoker,
    check: Option<HealthCheck>,
}

/// One app's handler on this worker.
pub struct HandlerHealth {
    pub key: AppKey,
    run: Mutex<Run>,
    reach: watch::Sender<Reach>,
    /// Where to probe, and through which invoker (the tenant's egress): set by the function
    /// hosts of the app.
    target: Mutex<Option<Target>>,
    probing: AtomicBool,
    /// The health-check task runs (while the app declares `handler.health`).
    checking: AtomicBool,
    /// Wakes the sync task to tell Postgres.
    sync: Arc<Notify>,
}

impl std::fmt::Debug for HandlerHealth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandlerHealth")
            .field("key", &self.key)
            .field("reach", &self.reach())
            .finish_non_exhaustive()
    }
}

impl HandlerHealth {
    pub fn new(key: AppKey, sync: Arc<Notify>) -> HandlerHealth {
        HandlerHealth {
            key,
            run: Mutex::new(Run::default()),
            reach: watch::Sender::new(Reach::default()),
            target: Mutex::new(None),
            probing: AtomicBool::new(false),
            checking: AtomicBool::new(false),
            sync,
        }
    }

    /// The handler the app's functions call now, and its health check if the app declares
    /// one (which starts the checks; they stop when it is no longer declared).
    pub fn aim(self: &Arc<Self>, handler: Url, invoker: Invoker, check: Option<HealthCheck>) {
        let checked = check.is_some();
        let had = self
            .target()
            .replace(Target {
                handler,
                invoker,
                check,
            })
            .is_some_and(|t| t.check.is_some());
        if checked {
            self.start_checking();
        } else if had && self.update(Run::checks_removed) {
            self.sync.notify_one();
        }
    }

    fn target(&self) -> std::sync::MutexGuard<'_, Option<Target>> {
        self.target.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn declared_check(&self) -> Option<HealthCheck> {
        self.target().as_ref().and_then(|t| t.check.clone())
    }

    pub fn reach(&self) -> Reach {
        *self.reach.borrow()
    }

    pub fn unreachable_since(&self) -> Option<DateTime<Utc>> {
        self.reach().unreachable_since
    }

    /// A call could not connect: counts towards the run, and starts the prober.
    pub fn connection_failed(self: &Arc<Self>, reason: &str) {
        let became = self.update(|run| run.connection_failed(Utc::now(), reason));
        if became {
            tracing::warn!(
                tenant = self.key.tenant,
                app = self.key.app,
                reason,
                "the app's handler is unreachable; its listeners pause on every worker and messages in hand wait for it"
            );
            self.sync.notify_one();
        }
        self.start_probing();
    }

    /// A call was answered (whatever its status).
    pub fn answered(&self) {
        if !self.run().failing() && self.reach().unreachable_since.is_none() {
            return;
        }
        let had_report = self.update(|run| run.answered());
        if had_report {
            tracing::info!(
                tenant = self.key.tenant,
                app = self.key.app,
                "the app's handler answers again"
            );
            self.sync.notify_one();
        }
    }

    /// Waits until the handler answers after `seen` (a [`Reach::answers`] read before the call
    /// that failed), or until `deadline`. False when the deadline came first.
    pub async fn wait_for_answer(self: &Arc<Self>, seen: u64, deadline: Option<Instant>) -> bool {
        self.start_probing();
        let mut reach = self.reach.subscribe();
        let deadline = deadline.map(tokio::time::Instant::from_std);
        loop {
            if reach.borrow_and_update().answers != seen {
                return true;
            }
            tokio::select! {
                changed = reach.changed() => if changed.is_err() { return false },
                _ = async { match deadline {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending::<()>().await,
                } } => return false,
            }
        }
    }

    /// Postgres's reading (see [`Run::in_store`]); starts probing when it says unreachable.
    pub fn in_store(self: &Arc<Self>, open_since: Option<DateTime<Utc>>) {
        let learnt = self.update(|run| run.in_store(open_since));
        if learnt || open_since.is_some() {
            self.start_probing();
        }
    }

    pub fn report(&self) -> Option<Report> {
        self.run().report()
    }

    /// Starts the probe task unless one runs. It holds the health weakly, and ends at the
    /// first answer or when the app is no longer hosted here. An app with a health check
    /// needs none: its checks run all the time and say when the handler is back.
    fn start_probing(self: &Arc<Self>) {
        if self.declared_check().is_some() || self.probing.swap(true, Ordering::AcqRel) {
            return;
        }
        let weak = Arc::downgrade(self);
        tokio::spawn(probe_until_answered(weak));
    }

    /// Starts the health-check task unless one runs; it ends when the app no longer declares
    /// a check or is no longer hosted here.
    fn start_checking(self: &Arc<Self>) {
        if self.checking.swap(true, Ordering::AcqRel) {
            return;
        }
        tokio::spawn(check_while_declared(Arc::downgrade(self)));
    }

    /// One health check's outcome.
    fn checked(&self, check: &HealthCheck, outcome: Result<u16, InvocationError>) {
        let failure = match outcome {
            Ok(status) if (200..400).contains(&status) => None,
            Ok(status) => Some(format!("health check GET {} answered {status}", check.path)),
            Err(e) => Some(format!("health check GET {} failed: {e}", check.path)),
        };
        match failure {
            None => {
                if self.update(|run| run.check_passed(check.success_threshold)) {
                    tracing::info!(
                        tenant = self.key.tenant,
                        app = self.key.app,
                        "the app's handler passes its health check again"
                    );
                    self.sync.notify_one();
                }
            }
            Some(reason) => {
                tracing::debug!(app = self.key.app, reason, "health check failed");
                let threshold = check.failure_threshold;
                if self.update(|run| run.check_failed(Utc::now(), &reason, threshold)) {
                    tracing::warn!(
                        tenant = self.key.tenant,
                        app = self.key.app,
                        reason,
                        "the app's handler fails its health check; its listeners pause on every worker and messages in hand wait for it"
                    );
                    self.sync.notify_one();
                }
            }
        }
    }

    fn update<T>(&self, f: impl FnOnce(&mut Run) -> T) -> T {
        let mut run = self.run();
        let result = f(&mut run);
        let reach = run.reach();
        drop(run);
        self.reach.send_if_modified(|current| {
            let changed = *current != reach;
            *current = reach;
            changed
        });
        result
    }

    fn run(&self) -> std::sync::MutexGuard<'_, Run> {
        self.run.lock().unwrap_or_else(|p| p.into_inner())
    }
}

async fn probe_until_answered(health: Weak<HandlerHealth>) {
    let mut pace = ProbePace::default();
    loop {
        tokio::time::sleep(pace.next()).await;
        let Some(health) = health.upgrade() else {
            return;
        };
        let target = health.target().clone();
        let Some(Target {
            handler, invoker, ..
        }) = target
        else {
            continue;
        };
        match invoker.probe(&handler, PROBE_TIMEOUT).await {
            Err(InvocationError::Unreachable(reason)) => {
                tracing::debug!(
                    app = health.key.app,
                    reason,
                    "probing the handler: no connection"
                );
                if health.update(|run| run.connection_failed(Utc::now(), &reason)) {
                    health.sync.notify_one();
                }
            }
            // Any answer, or a failure after connecting, says it takes connections again (as
            // Azure's readiness check decides).
            _ => {
                health.probing.store(false, Ordering::Release);
                health.answered();
                // A failure that raced the end of probing restarts it.
                if health.run().failing() {
                    health.start_probing();
                }
                return;
            }
        }
    }
}

/// Checks the handler every `intervalSeconds` while the app declares a check, the first at
/// once. Each check is awaited before the next is timed (the timeout is at most the interval),
/// so checks never pile up on a slow handler.
async fn check_while_declared(health: Weak<HandlerHealth>) {
    loop {
        let Some(strong) = health.upgrade() else {
            return;
        };
        let Some(Target {
            handler,
            invoker,
            check: Some(check),
        }) = strong.target().clone()
        else {
            strong.checking.store(false, Ordering::Release);
            // Declared again between the read and the store: the aim that did it saw the
            // task still running.
            if strong.declared_check().is_some() {
                strong.start_checking();
            }
            return;
        };
        let timeout = Duration::from_secs(u64::from(check.timeout_seconds));
        let outcome = match check.url(&handler) {
            Ok(url) => invoker.probe(&url, timeout).await,
            Err(e) => Err(InvocationError::Connect(format!("the health URL: {e}"))),
        };
        strong.checked(&check, outcome);
        drop(strong);
        tokio::time::sleep(Duration::from_secs(u64::from(check.interval_seconds))).await;
    }
}
