//! Where a Service Bus trigger or output binding points: a queue, or a topic with (for triggers)
//! one of its subscriptions, named as the service allows names.
//!
//! The rules are the service's, which are stricter than the .NET SDK's client-side check
//! (`Azure.Messaging.ServiceBus/src/Administration/QueueProperties.cs` only forbids `@ ? # *`
//! and a leading or trailing slash, then the service answers 400 "Entity segments can contain
//! only letters, numbers, periods (.), hyphens (-), and underscores (_)"): queue and topic paths
//! are 1–260 characters of segments separated by `/`, each segment of letters, digits, `.`, `-`
//! and `_`, the whole starting and ending with a letter or digit; subscription names are 1–50
//! of the same characters without `/` (`AdministrationClientConstants.cs`: 260 and 50). Names
//! beginning with `$` are the service's own (`$DeadLetterQueue`, `$management`, `$Default`) and
//! are refused with a message saying so. A `%Setting%` reference is resolved at run time and
//! checked then.

/// Longest queue or topic path (`QueueNameMaximumLength`, `TopicNameMaximumLength`).
pub const MAX_QUEUE_OR_TOPIC_PATH: usize = 260;
/// Longest subscription name (`SubscriptionNameMaximumLength`).
pub const MAX_SUBSCRIPTION_NAME: usize = 50;

/// What a name is, for the rules and the messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameKind {
    Queue,
    Topic,
    Subscription,
}

impl NameKind {
    fn noun(self) -> &'static str {
        match self {
            NameKind::Queue => "queue",
            NameKind::Topic => "topic",
            NameKind::Subscription => "subscription",
        }
    }

    fn max(self) -> usize {
        match self {
            NameKind::Queue | NameKind::Topic => MAX_QUEUE_OR_TOPIC_PATH,
            NameKind::Subscription => MAX_SUBSCRIPTION_NAME,
        }
    }
}

/// The entity a trigger receives from, as the management API addresses it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EntityPath {
    Queue(String),
    Subscription { topic: String, subscription: String },
}

impl EntityPath {
    /// The path under the namespace: `orders`, or `events/Subscriptions/audit` (the management
    /// API's spelling, `EntityNameFormatter.FormatSubscriptionPath`).
    pub fn management_path(&self) -> String {
        match self {
            EntityPath::Queue(queue) => queue.clone(),
            EntityPath::Subscription {
                topic,
                subscription,
            } => format!("{topic}/Subscriptions/{subscription}"),
        }
    }
}

impl std::fmt::Display for EntityPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EntityPath::Queue(queue) => write!(f, "queue {queue}"),
            EntityPath::Subscription {
                topic,
                subscription,
            } => write!(f, "subscription {subscription} of topic {topic}"),
        }
    }
}

/// `%Name%`: an app setting reference Azure resolves when the function starts.
pub fn is_setting_reference(value: &str) -> bool {
    value
        .strip_prefix('%')
        .and_then(|rest| rest.strip_suffix('%'))
        .is_some_and(|name| {
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | ':'))
        })
}

/// Checks one name; `Err` carries the message for the field. Setting references pass.
pub fn check_name(kind: NameKind, name: &str) -> Result<(), String> {
    if is_setting_reference(name) {
        return Ok(());
    }
    let noun = kind.noun();
    let max = kind.max();
    if name.is_empty() {
        return Err(format!("a {noun} name must not be empty"));
    }
    if name.starts_with('$') {
        return Err(format!(
            "names starting with '$' are reserved by Service Bus (e.g. $DeadLetterQueue); choose another {noun} name"
        ));
    }
    let length = name.chars().count();
    if length > max {
        return Err(format!(
            "a {noun} name may have at most {max} characters, this one has {length}"
        ));
    }
    let slash = kind != NameKind::Subscription;
    if let Some(bad) = name.chars().find(|c| {
        !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') || (slash && *c == '/'))
    }) {
        let allowed = if slash {
            "letters, digits, '.', '-', '_' and '/' between path segments"
        } else {
            "letters, digits, '.', '-' and '_' ('/' only in queue and topic paths)"
        };
        return Err(format!(
            "'{bad}' is not allowed in a {noun} name: use {allowed} (or an app setting reference like %Name%)"
        ));
    }
    if slash && name.split('/').any(str::is_empty) {
        return Err(format!(
            "a {noun} path must not start or end with '/' or contain '//'"
        ));
    }
    let alnum = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    if !alnum(name.chars().next()) || !alnum(name.chars().next_back()) {
        return Err(format!(
            "a {noun} name must start and end with a letter or digit"
        ));
    }
    Ok(())
}

/// One problem with a binding's entity: the property it belongs to and the message.
pub type EntityProblem = (&'static str, String);

/// Checks a binding's `queueName` / `topicName` / `subscriptionName`: exactly one of queue or
/// topic, a subscription with a topic only (and required with it when `trigger`), and every
/// name by [`check_name`]. Returns the entity when the binding names one validly.
pub fn check_binding_entity(
    queue: Option<&str>,
    topic: Option<&str>,
    subscription: Option<&str>,
    trigger: bool,
) -> Result<Option<EntityPath>, Vec<EntityProblem>> {
    let mut problems: Vec<EntityProblem> = Vec::new();
    match (queue, topic) {
        // The binding as a whole (an empty field is the binding's own path).
        (Some(_), Some(_)) => {
            problems.push(("", "set either queueName or topicName, not both".into()))
        }
        (None, None) if trigger => problems.push((
            "queueName",
            "queueName, or topicName with subscriptionName, is required".into(),
        )),
        (None, None) => problems.push(("queueName", "queueName or topicName is required".into())),
        _ => {}
    }
    for (field, kind, name) in [
        ("queueName", NameKind::Queue, queue),
        ("topicName", NameKind::Topic, topic),
        ("subscriptionName", NameKind::Subscription, subscription),
    ] {
        if let Some(name) = name
            && let Err(message) = check_name(kind, name)
        {
            problems.push((field, message));
        }
    }
    match (topic, subscription) {
        (_, Some(_)) if !trigger => problems.push((
            "subscriptionName",
            "is not a property of the serviceBus output binding (it sends to the topic)".into(),
        )),
        (None, Some(_)) => {
            problems.push(("subscriptionName", "is only used with topicName".into()))
        }
        (Some(_), None) if trigger => {
            problems.push(("subscriptionName", "is required with topicName".into()));
        }
        _ => {}
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(match (queue, topic, subscription) {
        (Some(queue), None, _) => Some(EntityPath::Queue(queue.to_owned())),
        (None, Some(topic), Some(subscription)) => Some(EntityPath::Subscription {
            topic: topic.to_owned(),
            subscription: subscription.to_owned(),
        }),
        _ => None,
    })
}

/// The entity a trigger receives from, its `%Setting%` names resolved from `settings` and
/// checked as literal names were checked on write.
pub fn resolve_trigger_entity(
    queue: Option<&str>,
    topic: Option<&str>,
    subscription: Option<&str>,
    settings: &std::collections::BTreeMap<String, String>,
) -> Result<EntityPath, String> {
    let name = |kind: NameKind, written: &str| -> Result<String, String> {
        let resolved = resolve_name(written, settings)?;
        check_name(kind, &resolved)
            .map_err(|e| format!("{written} resolves to {resolved:?}: {e}"))?;
        Ok(resolved)
    };
    match (queue, topic, subscription) {
        (Some(queue), _, _) => name(NameKind::Queue, queue).map(EntityPath::Queue),
        (None, Some(topic), Some(subscription)) => Ok(EntityPath::Subscription {
            topic: name(NameKind::Topic, topic)?,
            subscription: name(NameKind::Subscription, subscription)?,
        }),
        _ => Err("the trigger names no queue or topic subscription".to_owned()),
    }
}

/// A literal name as is, or the (trimmed, non-empty) value of the setting `%Name%` refers to,
/// matched case-insensitively like every other setting. Errors name the setting, never values.
pub fn resolve_name(
    name: &str,
    settings: &std::collections::BTreeMap<String, String>,
) -> Result<String, String> {
    let name = name.trim();
    let Some(setting) = name.strip_prefix('%').and_then(|r| r.strip_suffix('%')) else {
        if name.is_empty() {
            return Err("the entity name is empty".into());
        }
        return Ok(name.to_owned());
    };
    let value = crate::names::setting_value(settings, setting)?;
    if value.contains('%') {
        return Err(format!("app setting {setting} is not a valid entity name"));
    }
    Ok(value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

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
    fn names_as_the_service_allows_them() {
        let long_path = "a".repeat(260);
        let too_long_path = "a".repeat(261);
        let long_sub = "s".repeat(50);
        let too_long_sub = "s".repeat(51);
        let cases: &[(NameKind, &str, bool)] = &[
            (NameKind::Queue, "orders", true),
            (NameKind::Queue, "o", true),
            (NameKind::Queue, "Orders.v2-eu_west", true),
            (NameKind::Queue, "sales/orders", true),
            (NameKind::Queue, "a/b/c", true),
            (NameKind::Queue, &long_path, true),
            (NameKind::Queue, &too_long_path, false),
            (NameKind::Queue, "", false),
            (NameKind::Queue, "/orders", false),
            (NameKind::Queue, "orders/", false),
            (NameKind::Queue, "sales//orders", false),
            (NameKind::Queue, "-orders", false),
            (NameKind::Queue, "orders.", false),
            (NameKind::Queue, "orders#1", false),
            (NameKind::Queue, "orders@x", false),
            (NameKind::Queue, "or ders", false),
            (NameKind::Queue, "ördern", false),
            (NameKind::Queue, "$DeadLetterQueue", false),
            (NameKind::Queue, "%OrdersQueue%", true),
            (NameKind::Topic, "events/eu", true),
            (NameKind::Topic, "$management", false),
            (NameKind::Subscription, "audit", true),
            (NameKind::Subscription, &long_sub, true),
            (NameKind::Subscription, &too_long_sub, false),
            (NameKind::Subscription, "a/b", false),
            (NameKind::Subscription, "$Default", false),
            (NameKind::Subscription, "%Sub%", true),
        ];
        for (kind, name, ok) in cases {
            assert_eq!(
                check_name(*kind, name).is_ok(),
                *ok,
                "{kind:?} {name:?}: {:?}",
                check_name(*kind, name)
            );
        }
    }

    #[test]
    fn messages_name_the_rule_broken() {
        let msg = |kind, name: &str| check_name(kind, name).unwrap_err();
        assert!(msg(NameKind::Queue, "$x").contains("reserved"));
        assert!(msg(NameKind::Subscription, "a/b").contains("'/' is not allowed"));
        assert!(msg(NameKind::Queue, &"q".repeat(300)).contains("at most 260"));
        assert!(msg(NameKind::Subscription, &"q".repeat(51)).contains("at most 50"));
        assert!(msg(NameKind::Queue, "a//b").contains("'//'"));
    }

    #[test]
    fn queue_xor_topic_and_subscriptions_only_with_topics() {
        type Case<'a> = (
            Option<&'a str>,
            Option<&'a str>,
            Option<&'a str>,
            bool,
            Result<Option<EntityPath>, Vec<&'static str>>,
        );
        let queue = |q: &str| Ok(Some(EntityPath::Queue(q.into())));
        let cases: Vec<Case> = vec![
            (Some("q"), None, None, true, queue("q")),
            (
                None,
                Some("t"),
                Some("s"),
                true,
                Ok(Some(EntityPath::Subscription {
                    topic: "t".into(),
                    subscription: "s".into(),
                })),
            ),
            (None, Some("t"), None, false, Ok(None)),
            (Some("q"), None, None, false, queue("q")),
            (Some("q"), Some("t"), Some("s"), true, Err(vec![""])),
            (None, None, None, true, Err(vec!["queueName"])),
            (None, None, None, false, Err(vec!["queueName"])),
            (None, Some("t"), None, true, Err(vec!["subscriptionName"])),
            (
                Some("q"),
                None,
                Some("s"),
                true,
                Err(vec!["subscriptionName"]),
            ),
            (
                None,
                Some("t"),
                Some("s"),
                false,
                Err(vec!["subscriptionName"]),
            ),
            (Some("$q"), None, None, true, Err(vec!["queueName"])),
            (
                None,
                Some("t/"),
                Some("a/b"),
                true,
                Err(vec!["topicName", "subscriptionName"]),
            ),
        ];
        for (q, t, s, trigger, want) in cases {
            let got = check_binding_entity(q, t, s, trigger)
                .map_err(|problems| problems.into_iter().map(|(f, _)| f).collect::<Vec<_>>());
            assert_eq!(got, want, "{q:?} {t:?} {s:?} trigger={trigger}");
        }
    }

    #[test]
    fn setting_references_resolve_and_are_checked() {
        let settings = std::collections::BTreeMap::from([
            ("Q".to_owned(), "orders".to_owned()),
            ("Bad".to_owned(), "$x".to_owned()),
        ]);
        let resolve = |q, t, s| resolve_trigger_entity(q, t, s, &settings);
        assert_eq!(
            resolve(Some("%Q%"), None, None),
            Ok(EntityPath::Queue("orders".into()))
        );
        assert_eq!(
            resolve(None, Some("t"), Some("%Q%")),
            Ok(EntityPath::Subscription {
                topic: "t".into(),
                subscription: "orders".into()
            })
        );
        assert!(
            resolve(Some("%Missing%"), None, None)
                .unwrap_err()
                .contains("not set")
        );
        assert!(
            resolve(Some("%Bad%"), None, None)
                .unwrap_err()
                .contains("reserved")
        );
        assert!(resolve(None, Some("t"), None).is_err());
    }

    #[test]
    fn management_paths_as_the_admin_api_spells_them() {
        assert_eq!(EntityPath::Queue("a/b".into()).management_path(), "a/b");
        let sub = EntityPath::Subscription {
            topic: "events".into(),
            subscription: "audit".into(),
        };
        assert_eq!(sub.management_path(), "events/Subscriptions/audit");
        assert_eq!(sub.to_string(), "subscription audit of topic events");
    }
}
