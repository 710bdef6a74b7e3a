//! Entity settings a Service Bus trigger may declare.
//!
//! A `serviceBusTrigger` binding may carry an `entity` object with the settings of the queue or
//! subscription it receives from, as Service Bus names them (`defaultMessageTimeToLive`,
//! `deadLetteringOnMessageExpiration`, `autoDeleteOnIdle`, `maxDeliveryCount`, `lockDuration`)
//! and the namespace's `tier`, so that the Basic tier's limits can be checked on write. They
//! are validated when the function is written ([`check`]), compared with the live entity by
//! diagnostics ([`drift`]), and, when the connection has Manage rights, applied to the live
//! entity by the scheduler's reconciler ([`reconciled`]).
//!
//! Ranges are the service's, as `Azure.Messaging.ServiceBus/src/Administration/
//! AdministrationClientConstants.cs` states them: lock 5 s–5 min, TTL at least 1 s,
//! `autoDeleteOnIdle` at least 5 min, `maxDeliveryCount` at least 1. Reference document 001:
//! on the Basic tier the default TTL is 14 days and that is also the maximum.

mod duration;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

pub use duration::{EntityDuration, TIMESPAN_MAX, parse_iso8601, to_iso8601};

use super::expiry::{AUTO_DELETE_ON_IDLE_MIN, BASIC_TIER_MAX_TTL};

const MIN_LOCK_DURATION: Duration = Duration::from_secs(5);
const MAX_LOCK_DURATION: Duration = Duration::from_secs(5 * 60);
const MIN_TIME_TO_LIVE: Duration = Duration::from_secs(1);

/// The namespace's pricing tier; only Basic changes what an entity may declare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum NamespaceTier {
    #[serde(alias = "Basic")]
    Basic,
    #[serde(alias = "Standard")]
    Standard,
    #[serde(alias = "Premium")]
    Premium,
}

/// The `entity` object of a `serviceBusTrigger` binding: settings Shoal checks and keeps the
/// live queue or subscription at. Absent properties are left as the entity has them.
/// Durations are .NET TimeSpans (`00:05:00`) or ISO 8601 (`PT5M`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EntitySettings {
    /// The namespace's tier, so that Basic's limits are checked on write (Basic: no topics, no
    /// sessions, TTL at most 14 days).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(inline)]
    pub tier: Option<NamespaceTier>,
    /// How long a message lives when its sender sets no TTL, and the cap on one it does set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, example = "14.00:00:00")]
    pub default_message_time_to_live: Option<EntityDuration>,
    /// Expired messages go to the dead-letter queue instead of being dropped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dead_lettering_on_message_expiration: Option<bool>,
    /// Idle time after which Service Bus deletes the entity; at least 5 minutes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, example = "01:00:00")]
    pub auto_delete_on_idle: Option<EntityDuration>,
    /// Deliveries before a message is dead-lettered; at least 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_delivery_count: Option<i64>,
    /// Peek-lock duration, 5 seconds to 5 minutes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, example = "00:01:00")]
    pub lock_duration: Option<EntityDuration>,
}

impl EntitySettings {
    /// Whether anything about the live entity is declared (the tier alone is not).
    pub fn declares_entity(&self) -> bool {
        self.default_message_time_to_live.is_some()
            || self.dead_lettering_on_message_expiration.is_some()
            || self.auto_delete_on_idle.is_some()
            || self.max_delivery_count.is_some()
            || self.lock_duration.is_some()
    }
}

/// What else of the binding the checks need.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EntityContext {
    /// The binding names a topic subscription (Basic has no topics).
    pub topic: bool,
    /// `isSessionsEnabled` (Basic has no sessions).
    pub sessions: bool,
}

/// Every problem with `settings`, as (property under `entity`, message).
pub fn check(settings: &EntitySettings, context: EntityContext) -> Vec<(&'static str, String)> {
    let mut problems = Vec::new();
    let basic = settings.tier == Some(NamespaceTier::Basic);
    if let Some(ttl) = &settings.default_message_time_to_live {
        let value = ttl.as_duration();
        if value < MIN_TIME_TO_LIVE {
            problems.push((
                "defaultMessageTimeToLive",
                "must be at least 1 second".into(),
            ));
        } else if basic && value > BASIC_TIER_MAX_TTL {
            problems.push((
                "defaultMessageTimeToLive",
                format!("{ttl} exceeds the Basic tier's maximum of 14 days (14.00:00:00)"),
            ));
        }
    }
    if let Some(idle) = &settings.auto_delete_on_idle
        && idle.as_duration() < AUTO_DELETE_ON_IDLE_MIN
    {
        problems.push((
            "autoDeleteOnIdle",
            format!("{idle} is below Service Bus's minimum of 5 minutes (00:05:00)"),
        ));
    }
    if let Some(lock) = &settings.lock_duration {
        let value = lock.as_duration();
        if !(MIN_LOCK_DURATION..=MAX_LOCK_DURATION).contains(&value) {
            problems.push((
                "lockDuration",
                format!("{lock} is outside Service Bus's range of 5 seconds to 5 minutes"),
            ));
        }
    }
    if let Some(count) = settings.max_delivery_count
        && !(1..=i64::from(i32::MAX)).contains(&count)
    {
        problems.push((
            "maxDeliveryCount",
            format!("must be between 1 and {}", i32::MAX),
        ));
    }
    if basic && context.topic {
        problems.push((
            "tier",
            "Basic tier namespaces have no topics; use a queue or a Standard or Premium namespace"
                .into(),
        ));
    }
    if basic && context.sessions {
        problems.push((
            "tier",
            "Basic tier namespaces have no sessions; turn isSessionsEnabled off or use a Standard or Premium namespace"
                .into(),
        ));
    }
    problems
}

/// The settings of a live queue or subscription that a function may declare, as the
/// management API reports them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LiveEntitySettings {
    #[schema(value_type = String)]
    pub default_message_time_to_live: Duration,
    pub dead_lettering_on_message_expiration: bool,
    #[schema(value_type = String)]
    pub auto_delete_on_idle: Duration,
    pub max_delivery_count: u32,
    #[schema(value_type = String)]
    pub lock_duration: Duration,
}

/// One declared setting the live entity does not have.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SettingDrift {
    /// The property under `entity`, e.g. `lockDuration`.
    pub setting: String,
    pub declared: String,
    pub live: String,
}

/// The declared settings that differ from the live entity, in declaration order. Durations are
/// shown as `TimeSpan`s (`TimeSpan.MaxValue` as `unlimited`).
pub fn drift(declared: &EntitySettings, live: &LiveEntitySettings) -> Vec<SettingDrift> {
    let mut out = Vec::new();
    let mut duration = |setting: &str, want: &Option<EntityDuration>, have: Duration| {
        if let Some(want) = want
            && want.as_duration() != have
        {
            out.push(SettingDrift {
                setting: setting.to_owned(),
                declared: want.to_string(),
                live: show(have),
            });
        }
    };
    duration(
        "defaultMessageTimeToLive",
        &declared.default_message_time_to_live,
        live.default_message_time_to_live,
    );
    duration(
        "autoDeleteOnIdle",
        &declared.auto_delete_on_idle,
        live.auto_delete_on_idle,
    );
    duration("lockDuration", &declared.lock_duration, live.lock_duration);
    if let Some(want) = declared.dead_lettering_on_message_expiration
        && want != live.dead_lettering_on_message_expiration
    {
        out.push(SettingDrift {
            setting: "deadLetteringOnMessageExpiration".into(),
            declared: want.to_string(),
            live: live.dead_lettering_on_message_expiration.to_string(),
        });
    }
    if let Some(want) = declared.max_delivery_count
        && want != i64::from(live.max_delivery_count)
    {
        out.push(SettingDrift {
            setting: "maxDeliveryCount".into(),
            declared: want.to_string(),
            live: live.max_delivery_count.to_string(),
        });
    }
    out
}

/// The live settings with the declared ones put in: what the reconciler writes back. Equal to
/// `live` exactly when [`drift`] is empty, so reconciling twice changes nothing.
pub fn reconciled(declared: &EntitySettings, live: &LiveEntitySettings) -> LiveEntitySettings {
    let pick = |want: &Option<EntityDuration>, have: Duration| {
        want.as_ref().map_or(have, EntityDuration::as_duration)
    };
    LiveEntitySettings {
        default_message_time_to_live: pick(
            &declared.default_message_time_to_live,
            live.default_message_time_to_live,
        ),
        dead_lettering_on_message_expiration: declared
            .dead_lettering_on_message_expiration
            .unwrap_or(live.dead_lettering_on_message_expiration),
        auto_delete_on_idle: pick(&declared.auto_delete_on_idle, live.auto_delete_on_idle),
        max_delivery_count: declared
            .max_delivery_count
            .and_then(|c| u32::try_from(c).ok())
            .unwrap_or(live.max_delivery_count),
        lock_duration: pick(&declared.lock_duration, live.lock_duration),
    }
}

fn show(duration: Duration) -> String {
    if duration >= TIMESPAN_MAX {
        "unlimited".to_owned()
    } else {
        EntityDuration::from_duration(duration).to_string()
    }
}

#[cfg(test)]
mod tests;
