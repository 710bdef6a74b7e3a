//! The configuration file as written (`Raw*`, deserialized with unknown keys refused) and its
//! resolution into [`LocalBusConfig`]: names checked, policies, durations and the expiry rules
//! applied, each error naming its JSON path.

use super::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "PascalCase")]
pub(super) struct RawRoot {
    user_config: RawUserConfig,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "PascalCase")]
struct RawUserConfig {
    namespaces: Vec<RawNamespace>,
    /// The emulator's logging switch; the stand-in logs through `tracing`, so it is accepted
    /// (configs copied from the emulator carry it) and documented as ignored.
    #[serde(default)]
    #[allow(dead_code)]
    logging: Option<RawLogging>,
    #[serde(default)]
    shared_access_policies: Vec<RawPolicy>,
    #[serde(default)]
    tier: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "PascalCase")]
struct RawLogging {
    #[allow(dead_code)]
    r#type: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "PascalCase")]
struct RawPolicy {
    name: String,
    key: String,
    rights: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "PascalCase")]
struct RawNamespace {
    name: String,
    #[serde(default)]
    queues: Vec<RawQueue>,
    #[serde(default)]
    topics: Vec<RawTopic>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "PascalCase")]
struct RawQueue {
    name: String,
    #[serde(default)]
    properties: RawProperties,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "PascalCase")]
struct RawTopic {
    name: String,
    #[serde(default)]
    properties: RawTopicProperties,
    #[serde(default)]
    subscriptions: Vec<RawSubscription>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "PascalCase")]
struct RawSubscription {
    name: String,
    #[serde(default)]
    properties: RawProperties,
    #[serde(default)]
    rules: Vec<serde_json::Value>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "PascalCase")]
struct RawProperties {
    dead_lettering_on_message_expiration: Option<bool>,
    default_message_time_to_live: Option<String>,
    duplicate_detection_history_time_window: Option<String>,
    forward_dead_lettered_messages_to: Option<String>,
    forward_to: Option<String>,
    lock_duration: Option<String>,
    max_delivery_count: Option<u32>,
    requires_duplicate_detection: Option<bool>,
    requires_session: Option<bool>,
    auto_delete_on_idle: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "PascalCase")]
struct RawTopicProperties {
    default_message_time_to_live: Option<String>,
    duplicate_detection_history_time_window: Option<String>,
    requires_duplicate_detection: Option<bool>,
    auto_delete_on_idle: Option<String>,
}

impl RawRoot {
    pub(super) fn resolve(self) -> Result<LocalBusConfig, LocalBusError> {
        let user = self.user_config;
        let basic_tier = match user.tier.as_deref() {
            None | Some("Standard") | Some("Premium") => false,
            Some("Basic") => true,
            Some(other) => {
                return Err(LocalBusError::config(
                    "UserConfig.Tier",
                    format!("expected \"Basic\", \"Standard\" or \"Premium\", got {other:?}"),
                ));
            }
        };
        let [namespace] = <[RawNamespace; 1]>::try_from(user.namespaces).map_err(|_| {
            LocalBusError::config(
                "UserConfig.Namespaces",
                "exactly one namespace is supported",
            )
        })?;
        check_name("UserConfig.Namespaces[0].Name", &namespace.name)?;
        let mut config = LocalBusConfig {
            namespace: namespace.name,
            basic_tier,
            policies: Vec::new(),
            queues: Vec::new(),
            topics: Vec::new(),
        };
        for (i, policy) in user.shared_access_policies.into_iter().enumerate() {
            let path = format!("UserConfig.SharedAccessPolicies[{i}]");
            config.policies.push(resolve_policy(&path, policy)?);
        }
        config.add_default_policies();
        let mut names = std::collections::HashSet::new();
        for (i, queue) in namespace.queues.into_iter().enumerate() {
            let path = format!("UserConfig.Namespaces[0].Queues[{i}]");
            check_name(&format!("{path}.Name"), &queue.name)?;
            if !names.insert(queue.name.to_lowercase()) {
                return Err(LocalBusError::config(
                    format!("{path}.Name"),
                    "duplicate entity name",
                ));
            }
            let settings =
                resolve_properties(&format!("{path}.Properties"), queue.properties, basic_tier)?;
            config.queues.push(QueueConfig {
                name: queue.name,
                settings,
            });
        }
        for (i, topic) in namespace.topics.into_iter().enumerate() {
            let path = format!("UserConfig.Namespaces[0].Topics[{i}]");
            if basic_tier {
                return Err(LocalBusError::config(path, "the Basic tier has no topics"));
            }
            check_name(&format!("{path}.Name"), &topic.name)?;
            if !names.insert(topic.name.to_lowercase()) {
                return Err(LocalBusError::config(
                    format!("{path}.Name"),
                    "duplicate entity name",
                ));
            }
            let settings =
                resolve_topic_properties(&format!("{path}.Properties"), topic.properties, false)?;
            let mut subscriptions = Vec::new();
            let mut sub_names = std::collections::HashSet::new();
            for (j, sub) in topic.subscriptions.into_iter().enumerate() {
                let sub_path = format!("{path}.Subscriptions[{j}]");
                check_name(&format!("{sub_path}.Name"), &sub.name)?;
                if !sub_names.insert(sub.name.to_lowercase()) {
                    return Err(LocalBusError::config(
                        format!("{sub_path}.Name"),
                        "duplicate subscription name",
                    ));
                }
                if !sub.rules.is_empty() {
                    return Err(LocalBusError::config(
                        format!("{sub_path}.Rules"),
                        "subscription filter rules are not supported by the local stand-in; every subscription receives every message",
                    ));
                }
                let mut sub_settings =
                    resolve_properties(&format!("{sub_path}.Properties"), sub.properties, false)?;
                // The topic's TTL applies when smaller than the subscription's (document 001).
                sub_settings.default_ttl =
                    expiry::effective_ttl(sub_settings.default_ttl, settings.default_ttl);
                subscriptions.push(SubscriptionConfig {
                    name: sub.name,
                    settings: sub_settings,
                });
            }
            config.topics.push(TopicConfig {
                name: topic.name,
                settings,
                subscriptions,
            });
        }
        Ok(config)
    }
}

fn check_name(path: &str, name: &str) -> Result<(), LocalBusError> {
    // Azure: letters, digits, periods, hyphens, underscores (and slashes in queue paths, which
    // the stand-in does not support), at most 260 characters.
    let ok = !name.is_empty()
        && name.len() <= 260
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if ok {
        Ok(())
    } else {
        Err(LocalBusError::config(
            path,
            "must be 1–260 letters, digits, '.', '-' or '_'",
        ))
    }
}

fn resolve_policy(path: &str, raw: RawPolicy) -> Result<SasPolicy, LocalBusError> {
    check_name(&format!("{path}.Name"), &raw.name)?;
    if raw.key.len() < 8 {
        return Err(LocalBusError::config(
            format!("{path}.Key"),
            "must be at least 8 characters",
        ));
    }
    let mut rights = Rights::default();
    for (i, right) in raw.rights.iter().enumerate() {
        match right.as_str() {
            "Manage" => rights.manage = true,
            "Send" => rights.send = true,
            "Listen" => rights.listen = true,
            other => {
                return Err(LocalBusError::config(
                    format!("{path}.Rights[{i}]"),
                    format!("expected \"Manage\", \"Send\" or \"Listen\", got {other:?}"),
                ));
            }
        }
    }
    if rights == Rights::default() {
        return Err(LocalBusError::config(
            format!("{path}.Rights"),
            "must name at least one right",
        ));
    }
    // Azure refuses a Manage rule without Send and Listen.
    if rights.manage && !(rights.send && rights.listen) {
        return Err(LocalBusError::config(
            format!("{path}.Rights"),
            "Manage requires Send and Listen",
        ));
    }
    Ok(SasPolicy {
        name: raw.name,
        key: raw.key,
        rights,
    })
}

pub(super) fn parse_duration(path: &str, text: &str) -> Result<Option<Duration>, LocalBusError> {
    duration::parse(text).map_err(|message| LocalBusError::config(path, message))
}

fn resolve_properties(
    path: &str,
    raw: RawProperties,
    basic_tier: bool,
) -> Result<EntitySettings, LocalBusError> {
    let mut settings = EntitySettings::default();
    if let Some(value) = raw.lock_duration {
        let p = format!("{path}.LockDuration");
        let lock = parse_duration(&p, &value)?
            .filter(|d| (MIN_LOCK_DURATION..=MAX_LOCK_DURATION).contains(d))
            .ok_or_else(|| LocalBusError::config(&p, "must be between PT5S and PT5M"))?;
        settings.lock_duration = lock;
    }
    if let Some(count) = raw.max_delivery_count {
        if count == 0 {
            return Err(LocalBusError::config(
                format!("{path}.MaxDeliveryCount"),
                "must be at least 1",
            ));
        }
        settings.max_delivery_count = count;
    }
    settings.dead_lettering_on_expiration =
        raw.dead_lettering_on_message_expiration.unwrap_or(false);
    settings.requires_session = raw.requires_session.unwrap_or(false);
    if settings.requires_session && basic_tier {
        return Err(LocalBusError::config(
            format!("{path}.RequiresSession"),
            "the Basic tier has no sessions",
        ));
    }
    for (key, value) in [
        ("ForwardTo", &raw.forward_to),
        (
            "ForwardDeadLetteredMessagesTo",
            &raw.forward_dead_lettered_messages_to,
        ),
    ] {
        if value.as_deref().is_some_and(|v| !v.is_empty()) {
            return Err(LocalBusError::config(
                format!("{path}.{key}"),
                "auto-forwarding is not supported by the local stand-in (leave it \"\")",
            ));
        }
    }
    let common = resolve_common(
        path,
        raw.default_message_time_to_live,
        raw.duplicate_detection_history_time_window,
        raw.requires_duplicate_detection,
        raw.auto_delete_on_idle,
        basic_tier,
    )?;
    settings.default_ttl = common.default_ttl;
    settings.auto_delete_on_idle = common.auto_delete_on_idle;
    settings.duplicate_detection_window = common.duplicate_detection_window;
    Ok(settings)
}

fn resolve_topic_properties(
    path: &str,
    raw: RawTopicProperties,
    basic_tier: bool,
) -> Result<EntitySettings, LocalBusError> {
    resolve_common(
        path,
        raw.default_message_time_to_live,
        raw.duplicate_detection_history_time_window,
        raw.requires_duplicate_detection,
        raw.auto_delete_on_idle,
        basic_tier,
    )
}

pub(super) fn resolve_common(
    path: &str,
    ttl: Option<String>,
    window: Option<String>,
    duplicate_detection: Option<bool>,
    auto_delete: Option<String>,
    basic_tier: bool,
) -> Result<EntitySettings, LocalBusError> {
    let mut settings = EntitySettings::default();
    let ttl_path = format!("{path}.DefaultMessageTimeToLive");
    let configured = match ttl {
        Some(text) => parse_duration(&ttl_path, &text)?,
        None => None,
    };
    if configured == Some(Duration::ZERO) {
        return Err(LocalBusError::config(&ttl_path, "must be longer than zero"));
    }
    // Unset (or "never") on Basic → the 14-day default and cap (document 001).
    settings.default_ttl = expiry::entity_default_ttl(configured, basic_tier)
        .map_err(|e| LocalBusError::config(&ttl_path, e.to_string()))?;
    if let Some(text) = window {
        let p = format!("{path}.DuplicateDetectionHistoryTimeWindow");
        settings.duplicate_detection_window = parse_duration(&p, &text)?
            .filter(|d| *d >= Duration::from_secs(20) && *d <= Duration::from_secs(7 * 86_400))
            .ok_or_else(|| LocalBusError::config(&p, "must be between PT20S and P7D"))?;
    }
    if duplicate_detection == Some(true) {
        return Err(LocalBusError::config(
            format!("{path}.RequiresDuplicateDetection"),
            "duplicate detection is not supported by the local stand-in (set it to false)",
        ));
    }
    if let Some(text) = auto_delete {
        let p = format!("{path}.AutoDeleteOnIdle");
        let idle = parse_duration(&p, &text)?;
        expiry::check_auto_delete_on_idle(idle)
            .map_err(|e| LocalBusError::config(&p, e.to_string()))?;
        settings.auto_delete_on_idle = idle;
    }
    Ok(settings)
}

/// Settings from an ATOM entity description's flat elements (`LockDuration`, `MaxDeliveryCount`,
/// ...), validated as the configuration file is; errors name `<description>.<Element>`.
/// Elements the stand-in has no setting for are reported back by Azure but change nothing
/// here: `MaxSizeInMegabytes`, `EnableBatchedOperations`, `UserMetadata`, `SizeInBytes`, counts
/// and timestamps (documented in docs/local-bus.md).
pub fn settings_from_description(
    description: &str,
    fields: &std::collections::HashMap<String, String>,
    basic_tier: bool,
) -> Result<EntitySettings, LocalBusError> {
    let text = |key: &str| fields.get(key).cloned();
    let flag = |key: &str| -> Result<Option<bool>, LocalBusError> {
        match fields.get(key).map(String::as_str) {
            None => Ok(None),
            Some("true") => Ok(Some(true)),
            Some("false") => Ok(Some(false)),
            Some(other) => Err(LocalBusError::config(
                format!("{description}.{key}"),
                format!("expected true or false, got {other:?}"),
            )),
        }
    };
    for (key, refused) in [
        ("EnablePartitioning", "partitioning"),
        ("EnableExpress", "express entities"),
    ] {
        if flag(key)? == Some(true) {
            return Err(LocalBusError::config(
                format!("{description}.{key}"),
                format!("{refused} is not supported by the local stand-in"),
            ));
        }
    }
    if let Some(status) = fields.get("Status").filter(|s| s.as_str() != "Active") {
        return Err(LocalBusError::config(
            format!("{description}.Status"),
            format!("only Active is supported by the local stand-in, got {status:?}"),
        ));
    }
    if description == "TopicDescription" {
        return resolve_topic_properties(
            description,
            RawTopicProperties {
                default_message_time_to_live: text("DefaultMessageTimeToLive"),
                duplicate_detection_history_time_window: text(
                    "DuplicateDetectionHistoryTimeWindow",
                ),
                requires_duplicate_detection: flag("RequiresDuplicateDetection")?,
                auto_delete_on_idle: text("AutoDeleteOnIdle"),
            },
            basic_tier,
        );
    }
    let max_delivery_count = match fields.get("MaxDeliveryCount") {
        None => None,
        Some(n) => Some(n.parse::<u32>().map_err(|_| {
            LocalBusError::config(
                format!("{description}.MaxDeliveryCount"),
                format!("expected a whole number, got {n:?}"),
            )
        })?),
    };
    resolve_properties(
        description,
        RawProperties {
            dead_lettering_on_message_expiration: flag("DeadLetteringOnMessageExpiration")?,
            default_message_time_to_live: text("DefaultMessageTimeToLive"),
            duplicate_detection_history_time_window: text("DuplicateDetectionHistoryTimeWindow"),
            forward_dead_lettered_messages_to: text("ForwardDeadLetteredMessagesTo"),
            forward_to: text("ForwardTo"),
            lock_duration: text("LockDuration"),
            max_delivery_count,
            requires_duplicate_detection: flag("RequiresDuplicateDetection")?,
            requires_session: flag("RequiresSession")?,
            auto_delete_on_idle: text("AutoDeleteOnIdle"),
        },
        basic_tier,
    )
}
