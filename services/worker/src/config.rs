//! The worker's configuration, validated by the CLI before the worker starts.

use std::time::Duration;

use shoal_connectors::ConnectorOptions;
use shoal_domain::host_config::HostDefaults;
use shoal_domain::queue_trigger::INVISIBILITY;

/// Which app instances the worker hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hosting {
    /// One instance of every running app (until the scheduler assigns instances).
    AllApps,
}

#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// Unique among workers; the key of its registry row.
    pub name: String,
    pub hosting: Hosting,
    /// `host.json` defaults where an app leaves a setting out (`shoal dev` polls every 2 s).
    pub host_defaults: HostDefaults,
    /// How often the hosted apps' configuration is re-read.
    pub refresh_interval: Duration,
    pub heartbeat_interval: Duration,
    /// How long a shutdown waits for in-flight invocations before releasing their messages.
    pub drain_deadline: Duration,
    /// How long received messages stay invisible (renewed at half). Azure's 10 minutes; only
    /// tests shorten it, to see a crashed worker's messages reappear.
    pub invisibility: Duration,
    pub connector: ConnectorOptions,
}

impl WorkerConfig {
    pub fn new(name: impl Into<String>) -> WorkerConfig {
        WorkerConfig {
            name: name.into(),
            hosting: Hosting::AllApps,
            host_defaults: HostDefaults::AZURE,
            refresh_interval: Duration::from_secs(5),
            heartbeat_interval: Duration::from_secs(5),
            drain_deadline: Duration::from_secs(30),
            invisibility: INVISIBILITY,
            connector: ConnectorOptions::default(),
        }
    }
}
