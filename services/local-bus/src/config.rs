//! The stand-in's configuration: the shape of the Service Bus emulator's `Config.json`
//! (`UserConfig.Namespaces[].Queues/Topics[].Properties`, see
//! `Azure/azure-service-bus-emulator-installer` `ServiceBus-Emulator/Config/Config.json`) plus
//! what the stand-in needs beyond it: `UserConfig.SharedAccessPolicies`, `UserConfig.Tier`
//! (`Standard` | `Basic`) and `AutoDeleteOnIdle` on entities. Unknown keys are errors naming
//! their JSON path; settings the stand-in cannot honour (forwarding, duplicate detection, filter
//! rules) are refused rather than accepted without effect.

use std::path::Path;
use std::time::Duration;

use base64::Engine;
use serde::Deserialize;
use shoal_domain::service_bus_entity::expiry;

use crate::duration;
use crate::error::LocalBusError;

mod raw;

use raw::RawRoot;
pub use raw::settings_from_description;

/// Azure's defaults for a new entity.
pub const DEFAULT_LOCK_DURATION: Duration = Duration::from_secs(60);
pub const DEFAULT_MAX_DELIVERY_COUNT: u32 = 10;
/// Azure's bounds on `LockDuration` (5 s – 5 min).
const MIN_LOCK_DURATION: Duration = Duration::from_secs(5);
const MAX_LOCK_DURATION: Duration = Duration::from_secs(300);
const DEFAULT_DUPLICATE_DETECTION_WINDOW: Duration = Duration::from_secs(600);

/// The policy names the stand-in adds when the configuration does not cover a role.
pub const DEFAULT_MANAGE_POLICY: &str = "RootManageSharedAccessKey";
pub const DEFAULT_LISTEN_POLICY: &str = "ListenOnly";

/// Rights a SAS policy grants (Azure's `AccessRights`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rights {
    pub manage: bool,
    pub send: bool,
    pub listen: bool,
}

impl Rights {
    pub const ALL: Rights = Rights {
        manage: true,
        send: true,
        listen: true,
    };
    pub const LISTEN: Rights = Rights {
        manage: false,
        send: false,
        listen: true,
    };
    pub const SEND: Rights = Rights {
        manage: false,
        send: true,
        listen: false,
    };
    pub const MANAGE: Rights = Rights {
        manage: true,
        send: false,
        listen: false,
    };

    /// Whether these rights include every right `needed` asks for.
    pub fn covers(&self, needed: Rights) -> bool {
        (!needed.manage || self.manage)
            && (!needed.send || self.send)
            && (!needed.listen || self.listen)
    }
}

/// A namespace-level shared access policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SasPolicy {
    pub name: String,
    pub key: String,
    pub rights: Rights,
}

/// Settings of a queue or subscription (topics use `default_ttl` and `auto_delete_on_idle`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntitySettings {
    pub lock_duration: Duration,
    pub max_delivery_count: u32,
    /// `None` = never (`TimeSpan.MaxValue`).
    pub default_ttl: Option<Duration>,
    pub dead_lettering_on_expiration: bool,
    pub requires_session: bool,
    /// `None` = never.
    pub auto_delete_on_idle: Option<Duration>,
    pub duplicate_detection_window: Duration,
}

impl Default for EntitySettings {
    fn default() -> Self {
        EntitySettings {
            lock_duration: DEFAULT_LOCK_DURATION,
            max_delivery_count: DEFAULT_MAX_DELIVERY_COUNT,
            default_ttl: None,
            dead_lettering_on_expiration: false,
            requires_session: false,
            auto_delete_on_idle: None,
            duplicate_detection_window: DEFAULT_DUPLICATE_DETECTION_WINDOW,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueConfig {
    pub name: String,
    pub settings: EntitySettings,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubscriptionConfig {
    pub name: String,
    pub settings: EntitySettings,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicConfig {
    pub name: String,
    pub settings: EntitySettings,
    pub subscriptions: Vec<SubscriptionConfig>,
}

/// Everything the stand-in serves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalBusConfig {
    pub namespace: String,
    /// Basic tier: no topics, no sessions, TTL at most 14 days (and 14 days by default).
    pub basic_tier: bool,
    pub policies: Vec<SasPolicy>,
    pub queues: Vec<QueueConfig>,
    pub topics: Vec<TopicConfig>,
}

impl Default for LocalBusConfig {
    fn default() -> Self {
        let mut config = LocalBusConfig {
            namespace: "localbus".to_owned(),
            basic_tier: false,
            policies: Vec::new(),
            queues: Vec::new(),
            topics: Vec::new(),
        };
        config.add_default_policies();
        config
    }
}

impl LocalBusConfig {
    pub fn from_json(text: &str) -> Result<Self, LocalBusError> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let raw: RawRoot = serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
            let path = e.path().to_string();
            LocalBusError::config(path, e.into_inner().to_string())
        })?;
        raw.resolve()
    }

    pub fn from_file(path: &Path) -> Result<Self, LocalBusError> {
        let text = std::fs::read_to_string(path).map_err(|source| LocalBusError::ConfigFile {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_json(&text)
    }

    /// The first policy with Manage (and so Send and Listen).
    pub fn manage_policy(&self) -> Option<&SasPolicy> {
        self.policies.iter().find(|p| p.rights.covers(Rights::ALL))
    }

    /// The first policy with Listen and nothing else.
    pub fn listen_only_policy(&self) -> Option<&SasPolicy> {
        self.policies.iter().find(|p| p.rights == Rights::LISTEN)
    }

    fn add_default_policies(&mut self) {
        if self.manage_policy().is_none() {
            self.policies.push(SasPolicy {
                name: DEFAULT_MANAGE_POLICY.to_owned(),
                key: development_key(DEFAULT_MANAGE_POLICY),
                rights: Rights::ALL,
            });
        }
        if self.listen_only_policy().is_none() {
            self.policies.push(SasPolicy {
                name: DEFAULT_LISTEN_POLICY.to_owned(),
                key: development_key(DEFAULT_LISTEN_POLICY),
                rights: Rights::LISTEN,
            });
        }
    }
}

/// A fixed, obviously non-secret key per default policy, so connection strings stay stable
/// across runs of a development setup.
fn development_key(policy: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(format!("local-bus-development-key:{policy}"))
}

#[cfg(test)]
mod tests;
