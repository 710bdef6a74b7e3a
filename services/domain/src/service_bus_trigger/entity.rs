//! The Service Bus entity a trigger listens to or an output binding sends to. Names may be
//! `%Setting%` references, resolved from the app's settings like the queue trigger's names
//! (Azure resolves them through `INameResolver` for every `ServiceBusTrigger` attribute
//! property).

use std::collections::BTreeMap;
use std::fmt;

use crate::bindings::{ServiceBusOutputBinding, ServiceBusTriggerBinding};

/// A queue, or a topic's subscription, of a namespace.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum EntityPath {
    Queue(String),
    Subscription { topic: String, subscription: String },
}

impl fmt::Display for EntityPath {
    /// The entity path as Service Bus names it (`<topic>/Subscriptions/<subscription>`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EntityPath::Queue(q) => f.write_str(q),
            EntityPath::Subscription {
                topic,
                subscription,
            } => write!(f, "{topic}/Subscriptions/{subscription}"),
        }
    }
}

/// The entity a `serviceBusTrigger` listens to. The binding was validated on write (a queue, or
/// a topic with a subscription); a setting it names may have changed since, hence the errors.
pub fn trigger_entity(
    binding: &ServiceBusTriggerBinding,
    settings: &BTreeMap<String, String>,
) -> Result<EntityPath, String> {
    match (
        &binding.queue_name,
        &binding.topic_name,
        &binding.subscription_name,
    ) {
        (Some(queue), None, _) => Ok(EntityPath::Queue(resolve_name(queue, settings)?)),
        (None, Some(topic), Some(subscription)) => Ok(EntityPath::Subscription {
            topic: resolve_name(topic, settings)?,
            subscription: resolve_name(subscription, settings)?,
        }),
        _ => Err("a Service Bus trigger needs queueName, or topicName and subscriptionName".into()),
    }
}

/// The queue or topic a `serviceBus` output binding sends to.
pub fn output_entity(
    binding: &ServiceBusOutputBinding,
    settings: &BTreeMap<String, String>,
) -> Result<String, String> {
    match (&binding.queue_name, &binding.topic_name) {
        (Some(queue), None) => resolve_name(queue, settings),
        (None, Some(topic)) => resolve_name(topic, settings),
        _ => Err("a Service Bus output binding needs queueName or topicName".into()),
    }
}

/// A literal name as is, or the (trimmed, non-empty) value of the setting `%Name%` refers to,
/// matched case-insensitively like every other setting. Errors name the setting, never values.
pub fn resolve_name(name: &str, settings: &BTreeMap<String, String>) -> Result<String, String> {
    let name = name.trim();
    let Some(setting) = name.strip_prefix('%').and_then(|r| r.strip_suffix('%')) else {
        if name.is_empty() {
            return Err("the entity name is empty".into());
        }
        return Ok(name.to_owned());
    };
    let value = settings
        .get(setting)
        .or_else(|| {
            settings
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(setting))
                .map(|(_, v)| v)
        })
        .map(|v| v.trim())
        .filter(|v| !v.is_empty())
        .ok_or_else(|| format!("app setting {setting} is not set"))?;
    if value.contains('%') {
        return Err(format!("app setting {setting} is not a valid entity name"));
    }
    Ok(value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> BTreeMap<String, String> {
        BTreeMap::from([
            ("OrdersQueue".to_owned(), " orders ".to_owned()),
            ("Blank".to_owned(), "  ".to_owned()),
            ("Nested".to_owned(), "%OrdersQueue%".to_owned()),
        ])
    }

    #[test]
    fn names_resolve_literally_or_from_a_setting() {
        let cases: [(&str, Result<&str, &str>); 6] = [
            ("orders", Ok("orders")),
            ("%OrdersQueue%", Ok("orders")),
            ("%ordersqueue%", Ok("orders")),
            ("%Missing%", Err("app setting Missing is not set")),
            ("%Blank%", Err("app setting Blank is not set")),
            (
                "%Nested%",
                Err("app setting Nested is not a valid entity name"),
            ),
        ];
        for (name, expected) in cases {
            assert_eq!(
                resolve_name(name, &settings()).as_deref(),
                expected.map_err(str::to_owned).as_deref(),
                "{name}"
            );
        }
    }

    #[test]
    fn subscription_paths_read_as_service_bus_names_them() {
        let path = EntityPath::Subscription {
            topic: "orders".into(),
            subscription: "billing".into(),
        };
        assert_eq!(path.to_string(), "orders/Subscriptions/billing");
        assert_eq!(EntityPath::Queue("q".into()).to_string(), "q");
    }
}
