//! Why a function's listener does not start: each variant names the step that failed, reads as
//! the listener's status ("stopped: …"), and counts under a stable label in
//! `shoal_worker_listeners_not_started_total` (see `metrics.rs`), so an operator sees which
//! step keeps failing across apps without reading their statuses.

use crate::connections::ConnectionError;

#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// The handler's URL is refused by the egress policy by its text.
    #[error("handler.url: {0}")]
    Handler(String),
    /// The trigger's source (queue, entity, topic, schedule, time zone) does not resolve from
    /// the app's settings, or its binding no longer reads.
    #[error("{0}")]
    Source(String),
    /// The connection the trigger (or its dead-letter target) names.
    #[error("{0}")]
    Connection(#[from] ConnectionError),
    /// Where a stream trigger's failed events go (`deadLetter`; the message names the key).
    #[error("{0}")]
    DeadLetter(String),
    /// One of the function's output bindings.
    #[error("{0}")]
    Output(String),
    /// A kind was handed another kind's binding: a registry mistake, never the tenant's.
    #[error("not a {0}")]
    Mismatch(&'static str),
}

impl BindError {
    /// Every label [`BindError::label`] returns, so each series exists from the start.
    pub const LABELS: [&'static str; 8] = [
        "handler_refused",
        "source_unresolved",
        "connection_unresolved",
        "egress_refused",
        "connection_client",
        "dead_letter",
        "output",
        "binding_mismatch",
    ];

    /// The `reason` label: stable, snake_case.
    pub fn label(&self) -> &'static str {
        match self {
            BindError::Handler(_) => "handler_refused",
            BindError::Source(_) => "source_unresolved",
            BindError::Connection(ConnectionError::Unresolved(_)) => "connection_unresolved",
            BindError::Connection(ConnectionError::Refused(_)) => "egress_refused",
            BindError::Connection(ConnectionError::Client(_)) => "connection_client",
            BindError::DeadLetter(_) => "dead_letter",
            BindError::Output(_) => "output",
            BindError::Mismatch(_) => "binding_mismatch",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_has_its_own_stable_label_and_reads_as_before() {
        let cases = [
            (
                BindError::Handler("refused".into()),
                "handler_refused",
                "handler.url: refused",
            ),
            (
                BindError::Source("queueName: %Q% is not set".into()),
                "source_unresolved",
                "queueName: %Q% is not set",
            ),
            (
                ConnectionError::Unresolved("no setting".into()).into(),
                "connection_unresolved",
                "no setting",
            ),
            (
                ConnectionError::Refused("Rabbit: 10.0.0.1 is refused".into()).into(),
                "egress_refused",
                "Rabbit: 10.0.0.1 is refused",
            ),
            (
                ConnectionError::Client(
                    shoal_connectors::QueueError::InvalidConnection("bad key".into()).into(),
                )
                .into(),
                "connection_client",
                "invalid connection: bad key",
            ),
            (
                BindError::DeadLetter("deadLetter.topic: x".into()),
                "dead_letter",
                "deadLetter.topic: x",
            ),
            (BindError::Output("out: x".into()), "output", "out: x"),
            (
                BindError::Mismatch("queue trigger"),
                "binding_mismatch",
                "not a queue trigger",
            ),
        ];
        let mut seen = std::collections::BTreeSet::new();
        for (error, label, shown) in &cases {
            assert_eq!(error.label(), *label);
            assert_eq!(error.to_string(), *shown);
            assert!(BindError::LABELS.contains(label));
            seen.insert(*label);
        }
        assert_eq!(seen.len(), BindError::LABELS.len());
    }
}
