//! Why one call of the handler failed, by kind: each failed attempt is counted under a stable
//! label in `shoal_worker_attempts_failed_total` (see `metrics.rs`), and its reason is kept as
//! text where it is shown (the invocation telemetry, the retry state, logs).

use shoal_invoker::InvocationError;

/// The handler answered, but asked for the message to be tried again later (`retryAfter`).
pub const RETRY_ASKED: &str = "retry_asked";
/// The trigger refused the handler's answer (a batch answer it cannot read).
pub const REFUSED: &str = "answer_refused";
/// The answer's output bindings could not be written.
pub const OUTPUT: &str = "output";
/// Part of a batch failed (`batchItemFailures`).
pub const PARTLY: &str = "partly";

/// Every label a failed attempt counts under: the invoker's (`InvocationError::label`) and the
/// worker's own.
pub fn labels() -> impl Iterator<Item = &'static str> {
    InvocationError::LABELS
        .into_iter()
        .chain([RETRY_ASKED, REFUSED, OUTPUT, PARTLY])
}

/// One failed call: its kind (a label above) and the reason shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptFailure {
    pub kind: &'static str,
    pub reason: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_distinct_snake_case() {
        let all: Vec<_> = labels().collect();
        let distinct: std::collections::BTreeSet<_> = all.iter().collect();
        assert_eq!(all.len(), distinct.len(), "{all:?}");
        for label in all {
            assert!(
                label.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{label}"
            );
        }
    }
}
