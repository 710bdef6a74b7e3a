//! What goes wrong talking to a Kafka-protocol broker. librdkafka's messages quote property
//! values when it rejects them (a password among them, possibly); every message built from its
//! errors goes through the connection's `Redactor`.

use rdkafka::error::{KafkaError as RdKafkaError, RDKafkaErrorCode as Code};

use crate::error::Redactor;

#[derive(Debug, Clone, thiserror::Error)]
pub enum KafkaError {
    /// The properties cannot make a client (unknown property, invalid value, missing
    /// `bootstrap.servers`).
    #[error("invalid Kafka configuration: {0}")]
    InvalidConfiguration(String),
    /// The caller asked for something that cannot be done (an empty group, a negative offset).
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// A broker (bootstrap or advertised) is at an address the egress policy refuses:
    /// `<setting>[: broker N advertises host:port]: <reason>`. Nothing was sent to it.
    #[error("{0}")]
    Refused(String),
    #[error("topic {topic} does not exist")]
    TopicNotFound { topic: String },
    /// SASL authentication failed, or the principal may not use the topic, group or cluster.
    #[error("not authorized to {op}: {message}")]
    Unauthorized { op: &'static str, message: String },
    /// The group rebalanced under this member (its generation is gone, the partition is no
    /// longer its own): the offsets were not committed, and whoever owns the partitions now
    /// reads the events after the last commit again.
    #[error("{op}: the consumer group rebalanced: {message}")]
    Rebalanced { op: &'static str, message: String },
    /// Brokers unreachable, timeouts, a coordinator or leader moving: worth retrying later.
    #[error("{op} failed: {message}")]
    Unavailable { op: &'static str, message: String },
    #[error("{op} failed: {message}")]
    Other { op: &'static str, message: String },
}

impl KafkaError {
    /// Every label [`KafkaError::label`] returns.
    pub const LABELS: [&'static str; 8] = [
        "invalid_configuration",
        "invalid_request",
        "egress_refused",
        "topic_not_found",
        "unauthorized",
        "rebalanced",
        "unavailable",
        "other",
    ];

    /// A stable label for metrics, one per variant.
    pub fn label(&self) -> &'static str {
        match self {
            KafkaError::InvalidConfiguration(_) => "invalid_configuration",
            KafkaError::InvalidRequest(_) => "invalid_request",
            KafkaError::Refused(_) => "egress_refused",
            KafkaError::TopicNotFound { .. } => "topic_not_found",
            KafkaError::Unauthorized { .. } => "unauthorized",
            KafkaError::Rebalanced { .. } => "rebalanced",
            KafkaError::Unavailable { .. } => "unavailable",
            KafkaError::Other { .. } => "other",
        }
    }

    /// Whether retrying the same call later may succeed without anyone changing anything.
    pub fn is_transient(&self) -> bool {
        matches!(self, KafkaError::Unavailable { .. })
    }

    /// Maps librdkafka's error from operation `op` (on `topic`, when there is one).
    pub(crate) fn from_rdkafka(
        redactor: &Redactor,
        op: &'static str,
        topic: Option<&str>,
        err: &RdKafkaError,
    ) -> KafkaError {
        let message = redactor.redact(&err.to_string());
        match err {
            RdKafkaError::ClientConfig(..) | RdKafkaError::ClientCreation(_) => {
                return KafkaError::InvalidConfiguration(message);
            }
            RdKafkaError::Canceled => {
                return KafkaError::Unavailable {
                    op,
                    message: "the client was closed before the broker answered".into(),
                };
            }
            _ => {}
        }
        match err.rdkafka_error_code() {
            Some(code) => KafkaError::from_code(op, topic, code, message),
            None => KafkaError::Other { op, message },
        }
    }

    /// Maps an error code (from a per-topic or per-partition result) for operation `op`.
    pub(crate) fn from_code(
        op: &'static str,
        topic: Option<&str>,
        code: Code,
        message: String,
    ) -> KafkaError {
        match Class::of(code) {
            Class::TopicNotFound => match topic {
                Some(topic) => KafkaError::TopicNotFound {
                    topic: topic.to_owned(),
                },
                None => KafkaError::Other { op, message },
            },
            Class::Unauthorized => KafkaError::Unauthorized { op, message },
            Class::Rebalanced => KafkaError::Rebalanced { op, message },
            Class::Unavailable => KafkaError::Unavailable { op, message },
            Class::InvalidConfiguration => KafkaError::InvalidConfiguration(message),
            Class::Other => KafkaError::Other { op, message },
        }
    }
}

/// The kinds of error code, apart from the message they come with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    TopicNotFound,
    Unauthorized,
    Rebalanced,
    Unavailable,
    InvalidConfiguration,
    Other,
}

impl Class {
    fn of(code: Code) -> Class {
        match code {
            Code::UnknownTopicOrPartition | Code::UnknownTopic | Code::UnknownTopicId => {
                Class::TopicNotFound
            }
            Code::Authentication
            | Code::SaslAuthenticationFailed
            | Code::TopicAuthorizationFailed
            | Code::GroupAuthorizationFailed
            | Code::ClusterAuthorizationFailed
            | Code::UnacceptableCredential
            | Code::IllegalSASLState => Class::Unauthorized,
            Code::IllegalGeneration
            | Code::UnknownMemberId
            | Code::RebalanceInProgress
            | Code::AssignmentLost
            | Code::FencedInstanceId
            | Code::FencedMemberEpoch
            | Code::StaleMemberEpoch
            | Code::State => Class::Rebalanced,
            Code::BrokerTransportFailure
            | Code::Resolve
            | Code::AllBrokersDown
            | Code::OperationTimedOut
            | Code::MessageTimedOut
            | Code::TimedOutQueue
            | Code::QueueFull
            | Code::WaitingForCoordinator
            | Code::Retry
            | Code::LeaderNotAvailable
            | Code::NotLeaderForPartition
            | Code::RequestTimedOut
            | Code::BrokerNotAvailable
            | Code::ReplicaNotAvailable
            | Code::NetworkException
            | Code::CoordinatorLoadInProgress
            | Code::CoordinatorNotAvailable
            | Code::NotCoordinator
            | Code::NotEnoughReplicas
            | Code::NotEnoughReplicasAfterAppend
            | Code::KafkaStorageError
            | Code::ThrottlingQuotaExceeded
            | Code::UnstableOffsetCommit
            | Code::OffsetNotAvailable
            | Code::PreferredLeaderNotAvailable
            | Code::FencedLeaderEpoch
            | Code::UnknownLeaderEpoch
            | Code::RebootstrapRequired => Class::Unavailable,
            Code::SSL | Code::UnsupportedSASLMechanism | Code::InvalidArgument => {
                Class::InvalidConfiguration
            }
            _ => Class::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_map_to_the_variants_callers_act_on() {
        let cases = [
            (Code::AllBrokersDown, "Unavailable", true),
            (Code::BrokerTransportFailure, "Unavailable", true),
            (Code::CoordinatorNotAvailable, "Unavailable", true),
            (Code::NotCoordinator, "Unavailable", true),
            (Code::RequestTimedOut, "Unavailable", true),
            (Code::UnknownTopicOrPartition, "TopicNotFound", false),
            (Code::SaslAuthenticationFailed, "Unauthorized", false),
            (Code::TopicAuthorizationFailed, "Unauthorized", false),
            (Code::GroupAuthorizationFailed, "Unauthorized", false),
            (Code::IllegalGeneration, "Rebalanced", false),
            (Code::UnknownMemberId, "Rebalanced", false),
            (Code::RebalanceInProgress, "Rebalanced", false),
            (Code::SSL, "InvalidConfiguration", false),
            (Code::InvalidMessage, "Other", false),
        ];
        for (code, want, transient) in cases {
            let got = KafkaError::from_code("commit", Some("orders"), code, "m".into());
            assert!(format!("{got:?}").starts_with(want), "{code:?}: {got:?}");
            assert_eq!(got.is_transient(), transient, "{code:?}");
        }
    }

    #[test]
    fn configuration_errors_never_quote_a_secret() {
        let redactor = Redactor::new(["hunter2-secret".to_owned()]);
        let rejected = RdKafkaError::ClientConfig(
            rdkafka::types::RDKafkaConfRes::RD_KAFKA_CONF_INVALID,
            "Invalid value \"hunter2-secret\" for configuration property \"sasl.password\"".into(),
            "sasl.password".into(),
            "hunter2-secret".into(),
        );
        let err = KafkaError::from_rdkafka(&redactor, "create consumer", None, &rejected);
        let shown = err.to_string();
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(
            matches!(err, KafkaError::InvalidConfiguration(_)),
            "{err:?}"
        );
    }
}
