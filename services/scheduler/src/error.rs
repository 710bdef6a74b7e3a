//! What goes wrong in the scheduler's loop. None of it stops the scheduler: the loop logs it,
//! counts it under [`SchedulerError::metric_label`] (`shoal_scheduler_errors_total`) and tries
//! again next round.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;
use shoal_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum SchedulerError {
    #[error("renewing the lease failed: {0}")]
    RenewLease(#[source] StoreError),
    #[error("renewing the lease timed out")]
    RenewLeaseTimedOut,
    #[error("the lease lapsed without renewal")]
    LeaseLapsed,
    #[error("taking over failed: {0}")]
    TakeOver(#[source] StoreError),
    #[error("the lease of epoch {epoch} was lost")]
    Fenced { epoch: i64 },
    #[error("tick failed: {0}")]
    Tick(#[source] StoreError),
    #[error("tick took longer than half the lease")]
    TickTimedOut,
    #[error("releasing the lease failed: {0}")]
    ReleaseLease(#[source] StoreError),
    #[error("releasing the lease timed out")]
    ReleaseLeaseTimedOut,
    /// The scheduler's task panicked or was cancelled.
    #[error("the scheduler task ended abnormally: {0}")]
    Task(#[from] tokio::task::JoinError),
}

impl SchedulerError {
    /// A stable snake_case name, the `error` label of the errors counter.
    pub fn metric_label(&self) -> &'static str {
        match self {
            SchedulerError::RenewLease(_) => "renew_lease",
            SchedulerError::RenewLeaseTimedOut => "renew_lease_timed_out",
            SchedulerError::LeaseLapsed => "lease_lapsed",
            SchedulerError::TakeOver(_) => "take_over",
            SchedulerError::Fenced { .. } => "fenced",
            SchedulerError::Tick(_) => "tick",
            SchedulerError::TickTimedOut => "tick_timed_out",
            SchedulerError::ReleaseLease(_) => "release_lease",
            SchedulerError::ReleaseLeaseTimedOut => "release_lease_timed_out",
            SchedulerError::Task(_) => "task",
        }
    }
}

/// `shoal_scheduler_errors_total{error=…}`: the loop's failures by
/// [`SchedulerError::metric_label`].
#[derive(Clone, Debug, Default)]
pub struct ErrorCounter(Family<ErrorLabels, Counter>);

#[derive(Clone, Debug, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct ErrorLabels {
    error: &'static str,
}

impl ErrorCounter {
    pub fn count(&self, error: &SchedulerError) {
        self.0
            .get_or_create(&ErrorLabels {
                error: error.metric_label(),
            })
            .inc();
    }

    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "scheduler_errors",
            "Failures of the scheduler's loop by kind (each retried next round)",
            self.0.clone(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_variant_has_a_stable_snake_case_label() {
        let ended = tokio::spawn(std::future::pending::<()>());
        ended.abort();
        let aborted = ended.await.expect_err("aborted");
        let cases = [
            (
                SchedulerError::RenewLease(StoreError::NotFound),
                "renew_lease",
            ),
            (SchedulerError::RenewLeaseTimedOut, "renew_lease_timed_out"),
            (SchedulerError::LeaseLapsed, "lease_lapsed"),
            (SchedulerError::TakeOver(StoreError::NotFound), "take_over"),
            (SchedulerError::Fenced { epoch: 3 }, "fenced"),
            (SchedulerError::Tick(StoreError::NotFound), "tick"),
            (SchedulerError::TickTimedOut, "tick_timed_out"),
            (
                SchedulerError::ReleaseLease(StoreError::NotFound),
                "release_lease",
            ),
            (
                SchedulerError::ReleaseLeaseTimedOut,
                "release_lease_timed_out",
            ),
            (SchedulerError::Task(aborted), "task"),
        ];
        for (error, label) in cases {
            assert_eq!(error.metric_label(), label, "{error}");
            assert!(
                label.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{label} is snake_case"
            );
        }
    }
}
