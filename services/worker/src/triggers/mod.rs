//! The trigger kinds the worker can listen for, each behind [`TriggerKind`]. Adding one is a
//! module here and a line in [`KINDS`].

pub mod backoff;
pub mod kind;
pub mod rabbitmq;
pub mod service_bus;
pub mod storage_queue;
pub mod stream;
pub mod timer;

use shoal_domain::bindings::Binding;

use crate::triggers::kind::TriggerKind;
use crate::triggers::rabbitmq::RabbitMqTrigger;
use crate::triggers::service_bus::ServiceBusTrigger;
use crate::triggers::storage_queue::StorageQueueTrigger;
use crate::triggers::stream::StreamTrigger;
use crate::triggers::timer::TimerTrigger;

/// Every trigger kind with a listener.
const KINDS: &[&dyn TriggerKind] = &[
    &StorageQueueTrigger,
    &ServiceBusTrigger,
    &StreamTrigger::KAFKA,
    &StreamTrigger::EVENT_HUBS,
    &TimerTrigger,
    &RabbitMqTrigger,
];

/// The kind that listens for `trigger`, if the worker has one.
pub fn kind_of(trigger: &Binding) -> Option<&'static dyn TriggerKind> {
    KINDS
        .iter()
        .copied()
        .find(|kind| kind.binding_type() == trigger.type_name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_handles_its_own_binding_type_once() {
        let mut types: Vec<&str> = KINDS.iter().map(|k| k.binding_type()).collect();
        types.sort();
        types.dedup();
        assert_eq!(types.len(), KINDS.len());
        assert!(types.contains(&"queueTrigger"));
        assert!(types.contains(&"serviceBusTrigger"));
        assert!(types.contains(&"kafkaTrigger"));
        assert!(types.contains(&"eventHubTrigger"));
    }

    /// The domain's table of triggers something runs is what the scheduler scales and what
    /// diagnostics report on, so it must name exactly the kinds here (and `httpTrigger`, which
    /// the webhook ingress serves).
    #[test]
    fn the_kinds_are_the_triggers_the_domain_says_something_runs() {
        let mut kinds: Vec<&str> = KINDS.iter().map(|k| k.binding_type()).collect();
        kinds.push("httpTrigger");
        kinds.sort();
        let mut runners: Vec<&str> = shoal_domain::bindings::triggers_with_runner().collect();
        runners.sort();
        assert_eq!(kinds, runners);
    }
}
