//! A `rabbitMQTrigger`'s queues as diagnostics see them: each declared passively (nothing is
//! created or changed) on a connection of its own, since a queue the broker does not know
//! closes the channel that asked. The wording is the domain's
//! (`shoal_domain::diagnostics::check_broker_queues`).

use std::time::Duration;

use shoal_connectors::amqp::lapin::ErrorKind;
use shoal_connectors::amqp::lapin::options::QueueDeclareOptions;
use shoal_connectors::amqp::lapin::protocol::{AMQPErrorKind, AMQPSoftError};
use shoal_connectors::amqp::lapin::types::FieldTable;
use shoal_connectors::amqp::{self, AmqpError, Confirms};
use shoal_domain::binding_kinds::BrokerSource;
use shoal_domain::binding_kinds::rabbitmq::dead_letter_source;
use shoal_domain::diagnostics::{Check, QueueProbe, check_broker_queues};

use super::broker;
use crate::routes::kinds::Target;

/// Longest diagnostics wait for one queue's answer (as for a Service Bus namespace).
const PROBE_TIMEOUT: Duration = Duration::from_secs(8);

pub(super) async fn probe(function: &str, target: Target<'_>) -> Vec<Check> {
    let Ok(source) = broker(&target) else {
        return Vec::new();
    };
    let queue = declare(source, &target).await;
    // A dead-letter name that does not resolve is reported by the binding's own checks.
    let dead = dead_letter_source(target.binding, &target.context.settings)
        .ok()
        .flatten();
    let dead_probe = match (&dead, &queue) {
        (Some(dead), QueueProbe::Found { .. } | QueueProbe::NotFound(_)) => {
            Some(declare(dead, &target).await)
        }
        _ => None,
    };
    check_broker_queues(
        function,
        target.binding.name().as_str(),
        source,
        &queue,
        dead.as_ref()
            .map(|d| d.entity.as_str())
            .zip(dead_probe.as_ref()),
    )
}

async fn declare(source: &BrokerSource, target: &Target<'_>) -> QueueProbe {
    let looked = tokio::time::timeout(PROBE_TIMEOUT, async {
        let opened = amqp::channel(
            &source.uri,
            &target.context.egress,
            "shoal api diagnostics",
            Confirms::Off,
            amqp::CONSUMES_NOTHING,
        )
        .await;
        let opened = match opened {
            Ok(opened) => opened,
            Err(e @ AmqpError::Refused { .. }) => return QueueProbe::NotChecked(e.to_string()),
            Err(e) => return QueueProbe::Unreachable(e.to_string()),
        };
        let passive = QueueDeclareOptions {
            passive: true,
            ..QueueDeclareOptions::default()
        };
        let declared = opened
            .channel
            .queue_declare(
                source.entity.as_str().into(),
                passive,
                FieldTable::default(),
            )
            .await;
        let _ = opened.connection.close(200, "done".into()).await;
        match declared {
            Ok(queue) => QueueProbe::Found {
                ready: queue.message_count(),
                consumers: queue.consumer_count(),
            },
            Err(e) if is_not_found(&e) => QueueProbe::NotFound(e.to_string()),
            Err(e) => QueueProbe::Unreachable(e.to_string()),
        }
    })
    .await;
    looked.unwrap_or_else(|_| {
        QueueProbe::Unreachable(format!("no answer within {} s", PROBE_TIMEOUT.as_secs()))
    })
}

/// Whether the broker closed the channel with 404 `NOT_FOUND` (the queue does not exist).
fn is_not_found(e: &amqp::lapin::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::ProtocolError(error)
            if *error.kind() == AMQPErrorKind::Soft(AMQPSoftError::NOTFOUND)
    )
}
