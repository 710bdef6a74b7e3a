//! The scheduler's configuration, validated by the CLI before it starts.

use std::time::Duration;

use shoal_connectors::ConnectorOptions;
use shoal_domain::placement::DEFAULT_BALANCE;
use shoal_domain::quotas::Quotas;
use shoal_egress::Egress;

#[derive(Clone, Debug)]
pub struct SchedulerConfig {
    /// Unique among schedulers: the lease holder's name.
    pub name: String,
    /// How often the leader decides and places (and renews its lease).
    pub tick: Duration,
    /// How long the lease lasts without renewal; a standby takes over after it lapses.
    pub lease_ttl: Duration,
    /// Scale-in uses the largest recommendation of this window, so a dip does not stop
    /// instances that the next burst needs again.
    pub scale_in_window: Duration,
    /// Bounded-load factor for placement: no worker holds more than this times the average.
    pub balance: f64,
    pub metrics: MetricsConfig,
    pub connector: ConnectorOptions,
    /// Where tenants' queues, namespaces and brokers may be read (each tenant's allowances are
    /// added per app): strict unless the operator allows more (`--egress-allow`).
    pub egress: Egress,
    /// Where Entra ID reaches Shoal's API (`--public-url`): queue lengths behind identity-based
    /// connections are read signed in as the app's identity, with client assertions the
    /// scheduler signs as the federation issuer under it.
    pub public_url: Option<url::Url>,
    /// Workers silent for this long after their lease lapsed are removed from the registry.
    pub forget_workers_after: Duration,
    /// The quotas of tenants whose own limits do not say (`--tenant-defaults`); the scheduler
    /// uses `maxInstances`.
    pub tenant_defaults: Quotas,
}

/// How trigger metrics are read: many apps on one storage account must not hammer it.
#[derive(Clone, Debug)]
pub struct MetricsConfig {
    /// A queue's length is read at most this often (readings are cached in between).
    pub min_interval: Duration,
    /// At most this many reads per storage account per tick; the stalest queues go first, so
    /// every queue is read in turn when an account holds more.
    pub reads_per_account_per_tick: usize,
    /// Reads in flight at once per account.
    pub concurrency_per_account: usize,
}

impl SchedulerConfig {
    pub fn new(name: impl Into<String>) -> SchedulerConfig {
        SchedulerConfig {
            name: name.into(),
            tick: Duration::from_secs(1),
            lease_ttl: Duration::from_secs(10),
            scale_in_window: Duration::from_secs(300),
            balance: DEFAULT_BALANCE,
            metrics: MetricsConfig {
                min_interval: Duration::from_secs(1),
                reads_per_account_per_tick: 200,
                concurrency_per_account: 8,
            },
            connector: ConnectorOptions::default(),
            egress: Egress::strict(),
            public_url: None,
            forget_workers_after: Duration::from_secs(3600),
            tenant_defaults: Quotas::default(),
        }
    }

    /// How long a tick may wait for metric reads: what does not answer in time is used on the
    /// next tick, so a slow account cannot stall every app's decision.
    pub fn metrics_budget(&self) -> Duration {
        self.tick / 2
    }
}
