//! The Service Bus entity a trigger listens to or an output binding sends to. Names may be
//! `%Setting%` references, resolved from the app's settings like the queue trigger's names
//! (Azure resolves them through `INameResolver` for every `ServiceBusTrigger` attribute
//! property).

use std::collections::BTreeMap;

use super::{ServiceBusOutputBinding, ServiceBusTriggerBinding};
pub use crate::service_bus_entity::path::EntityPath;
use crate::service_bus_entity::path::{NameKind, check_name, resolve_name, resolve_trigger_entity};

/// The entity a `serviceBusTrigger` listens to. The binding was validated on write (a queue, or
/// a topic with a subscription); a setting it names may have changed since, hence the errors.
pub fn trigger_entity(
    binding: &ServiceBusTriggerBinding,
    settings: &BTreeMap<String, String>,
) -> Result<EntityPath, String> {
    resolve_trigger_entity(
        binding.queue_name.as_deref(),
        binding.topic_name.as_deref(),
        binding.subscription_name.as_deref(),
        settings,
    )
}

/// The queue or topic a `serviceBus` output binding sends to. A name with binding expressions
/// comes back as written: its writer resolves it per invocation and checks the result with
/// [`check_output_entity`] (`ServiceBusAttribute.QueueOrTopicName` is `[AutoResolve]` in
/// azure-sdk-for-net `Microsoft.Azure.WebJobs.Extensions.ServiceBus`, `src/ServiceBusAttribute.cs`).
pub fn output_entity(
    binding: &ServiceBusOutputBinding,
    settings: &BTreeMap<String, String>,
) -> Result<String, String> {
    let (kind, written) = output_kind(binding)?;
    if crate::binding_expressions::has_expressions(written) {
        return Ok(written.to_owned());
    }
    let name = resolve_name(written, settings)?;
    check_name(kind, &name).map_err(|e| format!("{written} resolves to {name:?}: {e}"))?;
    Ok(name)
}

fn output_kind(binding: &ServiceBusOutputBinding) -> Result<(NameKind, &str), String> {
    match (&binding.queue_name, &binding.topic_name) {
        (Some(queue), None) => Ok((NameKind::Queue, queue)),
        (None, Some(topic)) => Ok((NameKind::Topic, topic)),
        _ => Err("a Service Bus output binding needs queueName or topicName".into()),
    }
}

/// Checks what an output's binding expressions resolved to, as a written name is checked.
pub fn check_output_entity(
    binding: &ServiceBusOutputBinding,
    resolved: &str,
) -> Result<(), String> {
    let (kind, written) = output_kind(binding)?;
    check_name(kind, resolved).map_err(|e| format!("{written} resolves to {resolved:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscription_paths_read_as_service_bus_names_them() {
        let path = EntityPath::Subscription {
            topic: "orders".into(),
            subscription: "billing".into(),
        };
        assert_eq!(path.management_path(), "orders/Subscriptions/billing");
        assert_eq!(EntityPath::Queue("q".into()).management_path(), "q");
    }
}
