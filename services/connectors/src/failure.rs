//! One error for whichever service a caller talks to, for the code that handles every service
//! alike (the worker's error counts): each service keeps its own error type, with a stable
//! label per variant, and [`ConnectorError`] says which service it came from. Strings are made
//! only where an error is shown.

use crate::amqp::AmqpError;
use crate::error::QueueError;
use crate::kafka::KafkaError;
use crate::service_bus::ServiceBusError;

#[derive(Debug, thiserror::Error)]
pub enum ConnectorError {
    #[error(transparent)]
    StorageQueue(#[from] QueueError),
    #[error(transparent)]
    ServiceBus(#[from] ServiceBusError),
    #[error(transparent)]
    Kafka(#[from] KafkaError),
    #[error(transparent)]
    Amqp(#[from] AmqpError),
}

impl ConnectorError {
    /// Every `(service, label)` pair [`ConnectorError::service`] and
    /// [`ConnectorError::label`] return, so each series exists from the start.
    pub fn labels() -> impl Iterator<Item = (&'static str, &'static str)> {
        let of = |service: &'static str, labels: &'static [&'static str]| {
            labels.iter().map(move |label| (service, *label))
        };
        of("storage_queue", &QueueError::LABELS)
            .chain(of("service_bus", &ServiceBusError::LABELS))
            .chain(of("kafka", &KafkaError::LABELS))
            .chain(of("amqp", &AmqpError::LABELS))
    }

    /// The service: `storage_queue`, `service_bus`, `kafka` (Kafka and Event Hubs' Kafka
    /// endpoint) or `amqp` (RabbitMQ).
    pub fn service(&self) -> &'static str {
        match self {
            ConnectorError::StorageQueue(_) => "storage_queue",
            ConnectorError::ServiceBus(_) => "service_bus",
            ConnectorError::Kafka(_) => "kafka",
            ConnectorError::Amqp(_) => "amqp",
        }
    }

    /// What went wrong, in the service's own stable label.
    pub fn label(&self) -> &'static str {
        match self {
            ConnectorError::StorageQueue(e) => e.label(),
            ConnectorError::ServiceBus(e) => e.label(),
            ConnectorError::Kafka(e) => e.label(),
            ConnectorError::Amqp(e) => e.label(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::time::Duration;

    use super::*;

    #[test]
    fn every_variant_of_every_service_has_a_listed_label() {
        let text = || "text".to_owned();
        let op = || "receive".to_owned();
        let errors: Vec<ConnectorError> = vec![
            QueueError::QueueNotFound { queue: text() }.into(),
            QueueError::EntityNotFound { entity: text() }.into(),
            QueueError::MessageNotFound {
                queue: text(),
                message_id: text(),
            }
            .into(),
            QueueError::Unauthorized(text()).into(),
            QueueError::Unavailable(text()).into(),
            QueueError::Tls(text()).into(),
            QueueError::InvalidConnection(text()).into(),
            QueueError::Other(text()).into(),
            ServiceBusError::InvalidConnection(text()).into(),
            ServiceBusError::Unauthorized {
                op: op(),
                message: text(),
            }
            .into(),
            ServiceBusError::EntityNotFound {
                op: op(),
                message: text(),
            }
            .into(),
            ServiceBusError::LockLost {
                op: op(),
                message: text(),
            }
            .into(),
            ServiceBusError::Unavailable {
                op: op(),
                message: text(),
            }
            .into(),
            ServiceBusError::NoAnswer {
                op: op(),
                after: Duration::from_secs(1),
            }
            .into(),
            KafkaError::InvalidConfiguration(text()).into(),
            KafkaError::InvalidRequest(text()).into(),
            KafkaError::Refused(text()).into(),
            KafkaError::TopicNotFound { topic: text() }.into(),
            KafkaError::Unauthorized {
                op: "fetch",
                message: text(),
            }
            .into(),
            KafkaError::Rebalanced {
                op: "commit",
                message: text(),
            }
            .into(),
            KafkaError::Unavailable {
                op: "fetch",
                message: text(),
            }
            .into(),
            KafkaError::Other {
                op: "fetch",
                message: text(),
            }
            .into(),
            AmqpError::Refused {
                address: text(),
                message: text(),
            }
            .into(),
            AmqpError::Uri.into(),
            AmqpError::Timeout { address: text() }.into(),
        ];
        let listed: BTreeSet<_> = ConnectorError::labels().collect();
        let seen: BTreeSet<_> = errors.iter().map(|e| (e.service(), e.label())).collect();
        // Each variant its own label (AMQP's `broker` wraps lapin's error, not built here).
        assert_eq!(seen.len(), errors.len(), "labels are distinct: {seen:?}");
        assert!(seen.is_subset(&listed), "{:?}", seen.difference(&listed));
        assert_eq!(
            listed.difference(&seen).collect::<Vec<_>>(),
            vec![&("amqp", "broker")]
        );
        for (_, label) in &listed {
            assert!(
                label.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{label} is snake_case"
            );
        }
    }

    #[test]
    fn the_message_is_the_services_own() {
        let e: ConnectorError = QueueError::QueueNotFound {
            queue: "orders".into(),
        }
        .into();
        assert_eq!(e.to_string(), "queue orders does not exist");
        assert_eq!(
            (e.service(), e.label()),
            ("storage_queue", "queue_not_found")
        );
    }
}
