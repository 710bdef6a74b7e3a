//! What diagnostics say of a broker trigger's queues as the API found them on the broker (a
//! kind of `binding_kinds` whose API part looks, such as RabbitMQ): the queue the trigger
//! consumes, and the queue its failed messages are read from when the binding names one. The
//! subject is `entity`, as for a Service Bus trigger's live probe.

use super::{Check, CheckStatus};
use crate::binding_kinds::BrokerSource;

/// What the API found of one queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueProbe {
    Found {
        ready: u32,
        consumers: u32,
    },
    /// The broker says there is no such queue (its words).
    NotFound(String),
    /// The broker did not answer (network, TLS, refused credentials, timeout).
    Unreachable(String),
    /// Not looked at (the egress policy refuses the broker's address, so its answer would tell
    /// open ports of internal addresses from closed ones).
    NotChecked(String),
}

/// The checks for a broker trigger's queue and, with `dead_letter` (its name and probe), the
/// queue its failed messages are read from.
pub fn check_broker_queues(
    function: &str,
    binding: &str,
    source: &BrokerSource,
    queue: &QueueProbe,
    dead_letter: Option<(&str, &QueueProbe)>,
) -> Vec<Check> {
    let check = |key: Option<&str>, status: CheckStatus, detail: String| Check {
        function: Some(function.to_owned()),
        binding: Some(binding.to_owned()),
        key: key.map(str::to_owned),
        subject: "entity".to_owned(),
        status,
        detail,
    };
    let (kind, name, address) = (source.entity_kind, &source.entity, source.address());
    let mut checks = vec![match queue {
        QueueProbe::Found { ready, consumers } => check(
            None,
            CheckStatus::Ok,
            format!(
                "{kind} {name} exists on {address}: {ready} messages ready, {consumers} consumers"
            ),
        ),
        QueueProbe::NotFound(why) => check(
            None,
            CheckStatus::Error,
            format!(
                "{kind} {name} does not exist on {address} ({why}): the listener cannot consume until it is declared there"
            ),
        ),
        QueueProbe::Unreachable(why) => check(
            None,
            CheckStatus::Error,
            format!("the broker at {address} cannot be reached: {why}"),
        ),
        QueueProbe::NotChecked(why) => check(
            None,
            CheckStatus::Warning,
            format!("{kind} {name} was not checked: {why}"),
        ),
    }];
    let key = Some("deadLetterQueueName");
    match dead_letter {
        None => {}
        // Already said of the broker as a whole.
        Some((_, QueueProbe::Unreachable(_) | QueueProbe::NotChecked(_))) => {}
        Some((dead, QueueProbe::Found { ready, .. })) => checks.push(check(
            key,
            CheckStatus::Ok,
            format!(
                "{kind} {dead} exists: {ready} failed messages wait there; the poison routes read and replay it"
            ),
        )),
        Some((dead, QueueProbe::NotFound(_))) => checks.push(check(
            key,
            CheckStatus::Warning,
            format!(
                "{kind} {dead} does not exist on {address}: the poison routes cannot read it, and a failed message goes only where {kind} {name}'s x-dead-letter-exchange routes it (dropped if it has none)"
            ),
        )),
    }
    checks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source() -> BrokerSource {
        BrokerSource {
            kind: "rabbitMQTrigger",
            setting: "Rabbit".into(),
            uri: "amqp://user:secret@broker.example:5672/%2f".into(),
            entity_kind: "queue",
            entity: "orders".into(),
        }
    }

    #[test]
    fn each_probe_has_its_status_and_words() {
        let found = QueueProbe::Found {
            ready: 3,
            consumers: 1,
        };
        let gone = QueueProbe::NotFound("NOT_FOUND - no queue".into());
        let down = QueueProbe::Unreachable("connection refused".into());
        let refused = QueueProbe::NotChecked("the egress policy refuses it".into());
        // (queue, dead letter, the statuses in order, words every detail holds)
        let cases: Vec<(&QueueProbe, Option<&QueueProbe>, Vec<CheckStatus>, &str)> = vec![
            (
                &found,
                None,
                vec![CheckStatus::Ok],
                "3 messages ready, 1 consumers",
            ),
            (
                &found,
                Some(&found),
                vec![CheckStatus::Ok, CheckStatus::Ok],
                "exists",
            ),
            (
                &found,
                Some(&gone),
                vec![CheckStatus::Ok, CheckStatus::Warning],
                "orders",
            ),
            (&gone, None, vec![CheckStatus::Error], "does not exist"),
            (
                &gone,
                Some(&gone),
                vec![CheckStatus::Error, CheckStatus::Warning],
                "does not exist",
            ),
            (
                &down,
                Some(&down),
                vec![CheckStatus::Error],
                "cannot be reached: connection refused",
            ),
            (
                &refused,
                Some(&refused),
                vec![CheckStatus::Warning],
                "not checked",
            ),
        ];
        for (queue, dead, statuses, words) in cases {
            let checks = check_broker_queues(
                "f",
                "msg",
                &source(),
                queue,
                dead.map(|d| ("orders-dlq", d)),
            );
            let got: Vec<_> = checks.iter().map(|c| c.status).collect();
            assert_eq!(got, statuses, "{queue:?} / {dead:?}");
            for c in &checks {
                assert!(c.detail.contains(words), "{}", c.detail);
                assert!(!c.detail.contains("secret"), "{}", c.detail);
                assert_eq!(c.subject, "entity");
            }
            if let Some(dl) = checks.get(1) {
                assert_eq!(dl.key.as_deref(), Some("deadLetterQueueName"));
                assert!(dl.detail.contains("orders-dlq"), "{}", dl.detail);
            }
        }
    }
}
