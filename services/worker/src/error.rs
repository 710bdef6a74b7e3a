//! What goes wrong in the worker's runtime and is retried: each variant names the step that
//! failed, logs with its cause, and counts under a stable label in `shoal_worker_errors_total`
//! (see `metrics.rs`), so an operator sees which step keeps failing without reading logs.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use shoal_connectors::ConnectorError;
use shoal_store::StoreError;

/// A failure of the source a trigger listens to, whatever its kind: the service's own error,
/// counted by service and label in `shoal_worker_source_errors_total`.
pub type TriggerSourceError = ConnectorError;

/// An output binding's write failure: shown as the attempt's `output` failure, never counted
/// by service (an output can fail before it reaches one: a name that does not resolve).
pub type OutputWriteError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// Reading the app instances to host; the current ones keep running.
    #[error("reading the hosted apps failed: {0}")]
    LoadHostedApps(#[source] DatabaseError),
    /// Claiming an instance before it starts; it stays pending.
    #[error("claiming the instance failed: {0}")]
    Claim(#[source] DatabaseError),
    /// Giving claims back after instances drained.
    #[error("giving the claim back failed: {0}")]
    Release(#[source] DatabaseError),
    /// Writing the heartbeat that renews the worker's lease.
    #[error("heartbeat failed: {0}")]
    Heartbeat(#[source] DatabaseError),
    /// Receiving from a trigger's source; the listener polls again after its back-off.
    #[error("polling the trigger failed: {0}")]
    PollTrigger(#[source] TriggerSourceError),
    /// Settling a message (delete, release, poison); it is delivered again later.
    #[error("settling the message failed: {0}")]
    SettleMessage(#[source] TriggerSourceError),
}

/// One step against Postgres that did not complete.
#[derive(Debug, thiserror::Error)]
pub enum DatabaseError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("Postgres did not answer within {0:?}")]
    TimedOut(Duration),
}

impl WorkerError {
    /// Every label [`WorkerError::metric_label`] returns, so each series exists from the start.
    pub const LABELS: [&'static str; 6] = [
        "load_hosted_apps",
        "claim",
        "release",
        "heartbeat",
        "poll_trigger",
        "settle_message",
    ];

    /// The source's error, for a step that talked to one: `(service, label)`, as
    /// [`ConnectorError::labels`] lists them.
    pub fn source_label(&self) -> Option<(&'static str, &'static str)> {
        match self {
            WorkerError::PollTrigger(e) | WorkerError::SettleMessage(e) => {
                Some((e.service(), e.label()))
            }
            _ => None,
        }
    }

    /// The `error` label of the errors counter: stable, snake_case, one per variant.
    pub fn metric_label(&self) -> &'static str {
        match self {
            WorkerError::LoadHostedApps(_) => "load_hosted_apps",
            WorkerError::Claim(_) => "claim",
            WorkerError::Release(_) => "release",
            WorkerError::Heartbeat(_) => "heartbeat",
            WorkerError::PollTrigger(_) => "poll_trigger",
            WorkerError::SettleMessage(_) => "settle_message",
        }
    }
}

/// How many errors of each label the worker has met, read at scrape time. A label is one
/// string, or a tuple of them for a family with several labels (the source errors' service
/// and error).
#[derive(Debug)]
pub struct ErrorCounts<L: Ord + Copy = &'static str>(Mutex<BTreeMap<L, u64>>);

/// The source errors' counts, by `(service, label)`.
pub type SourceErrorCounts = ErrorCounts<(&'static str, &'static str)>;

impl Default for ErrorCounts {
    fn default() -> ErrorCounts {
        ErrorCounts::of(&WorkerError::LABELS)
    }
}

impl Default for SourceErrorCounts {
    fn default() -> SourceErrorCounts {
        ErrorCounts::of(&ConnectorError::labels().collect::<Vec<_>>())
    }
}

impl ErrorCounts {
    /// Counts the error under its step's label.
    pub fn count(&self, error: &WorkerError) {
        self.count_label(error.metric_label());
    }
}

impl<L: Ord + Copy> ErrorCounts<L> {
    /// Counts under `labels`, each at 0 from the start (another family than the runtime's
    /// errors, such as the listeners that did not start, by `BindError::label`).
    pub fn of(labels: &[L]) -> ErrorCounts<L> {
        ErrorCounts(Mutex::new(labels.iter().map(|l| (*l, 0)).collect()))
    }

    pub fn count_label(&self, label: L) {
        *self.lock().entry(label).or_default() += 1;
    }

    /// `(label, count)` for every label, in label order.
    pub fn snapshot(&self) -> Vec<(L, u64)> {
        self.lock().iter().map(|(l, n)| (*l, *n)).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<L, u64>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timed_out() -> DatabaseError {
        DatabaseError::TimedOut(Duration::from_secs(5))
    }

    fn source() -> TriggerSourceError {
        shoal_connectors::QueueError::Unavailable("queue unreachable".into()).into()
    }

    #[test]
    fn every_variant_has_its_own_stable_label() {
        let cases: [(WorkerError, &str); 6] = [
            (WorkerError::LoadHostedApps(timed_out()), "load_hosted_apps"),
            (WorkerError::Claim(timed_out()), "claim"),
            (WorkerError::Release(timed_out()), "release"),
            (WorkerError::Heartbeat(timed_out()), "heartbeat"),
            (WorkerError::PollTrigger(source()), "poll_trigger"),
            (WorkerError::SettleMessage(source()), "settle_message"),
        ];
        for (error, label) in &cases {
            assert_eq!(error.metric_label(), *label, "{error}");
            assert!(WorkerError::LABELS.contains(label));
        }
        let mut labels = WorkerError::LABELS.to_vec();
        labels.sort();
        labels.dedup();
        assert_eq!(labels.len(), cases.len(), "labels are distinct");
        // A step that talked to a source also says what the source said.
        assert_eq!(
            WorkerError::PollTrigger(source()).source_label(),
            Some(("storage_queue", "unavailable"))
        );
        assert_eq!(WorkerError::Claim(timed_out()).source_label(), None);
    }

    #[test]
    fn errors_are_counted_by_label_from_zero() {
        let counts = ErrorCounts::default();
        assert!(counts.snapshot().iter().all(|(_, n)| *n == 0));
        assert_eq!(counts.snapshot().len(), WorkerError::LABELS.len());
        counts.count(&WorkerError::Claim(timed_out()));
        counts.count(&WorkerError::Claim(timed_out()));
        counts.count(&WorkerError::Heartbeat(timed_out()));
        let snapshot: BTreeMap<_, _> = counts.snapshot().into_iter().collect();
        assert_eq!(snapshot["claim"], 2);
        assert_eq!(snapshot["heartbeat"], 1);
        assert_eq!(snapshot["release"], 0);
    }

    #[test]
    fn messages_name_the_step_and_its_cause() {
        let error = WorkerError::Heartbeat(timed_out());
        assert_eq!(
            error.to_string(),
            "heartbeat failed: Postgres did not answer within 5s"
        );
    }
}
