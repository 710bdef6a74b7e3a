//! The worker's configuration, validated by the CLI before the worker starts.

use std::time::Duration;

use shoal_connectors::ConnectorOptions;
use shoal_domain::host_config::HostDefaults;
use shoal_domain::queue_trigger::INVISIBILITY;
use shoal_egress::Egress;
use shoal_invoker::DEFAULT_MAX_RESPONSE_BYTES;

/// Which app instances the worker hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hosting {
    /// Exactly the instances the scheduler assigned to this worker (the default): it acts only
    /// on assignments of the current leader's epoch, claims each instance before its listeners
    /// start, and stops everything when its own lease lapses.
    Assigned,
    /// One instance (index 0) of every running app, with no scheduler, claims or self-fencing:
    /// for a single worker, or tests that need no scheduler.
    AllApps,
}

#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// Unique among workers; the key of its registry row.
    pub name: String,
    pub hosting: Hosting,
    /// Most app instances the scheduler may place on this worker (written with every
    /// heartbeat).
    pub capacity: u32,
    /// How long after its last heartbeat the worker counts as dead and its instances move.
    /// The worker stops its listeners on its own before that (see `lease.rs`).
    pub lease_ttl: Duration,
    /// `host.json` defaults where an app leaves a setting out (`shoal dev` polls every 2 s).
    pub host_defaults: HostDefaults,
    /// How often the hosted apps' configuration and assignments are re-read even when no
    /// notification arrives (notifications normally bring changes within a second).
    pub refresh_interval: Duration,
    /// None: a quarter of `lease_ttl`, so three beats may fail before the lease is lost.
    pub heartbeat_interval: Option<Duration>,
    /// How long a shutdown waits for in-flight invocations before releasing their messages.
    pub drain_deadline: Duration,
    /// How long received messages stay invisible (renewed at half). Azure's 10 minutes; only
    /// tests shorten it, to see a crashed worker's messages reappear.
    pub invisibility: Duration,
    /// Every retry's wait is divided by this: 1. Only tests raise it, to see a long retry
    /// parked and resumed without waiting for it (whether a retry is parked is decided on the
    /// undivided wait).
    pub retry_divisor: u32,
    pub connector: ConnectorOptions,
    /// Where Entra ID reaches Shoal's API (`--public-url`): the worker signs client assertions
    /// for app identities as the federation issuer under it. Without it, connections that must
    /// sign in as an app's identity do not start (the listener's status says why).
    pub public_url: Option<url::Url>,
    /// How long one database step (a heartbeat, a claim or release, connecting the
    /// notification listener) may wait on Postgres before the attempt counts as failed: 5 s.
    /// Heartbeats and claims use at most half the lease TTL, so a short lease is not outlived
    /// by a hung step.
    pub database_step_timeout: Duration,
    /// How often a refused claim, a failed release or a failed read of the hosted apps is
    /// retried besides on every notification: 250 ms.
    pub claim_retry: Duration,
    /// How long one read of the hosted apps may take before it counts as failed (the current
    /// instances keep running and the read is retried): 30 s.
    pub load_timeout: Duration,
    /// How often the worker adds its functions' final failures to their circuit breakers in
    /// Postgres and re-reads the breakers' states when no notification arrives: 1 s. A breaker
    /// opens within about a tick of the failure that crosses its threshold.
    pub breaker_tick: Duration,
    /// Whether handler attempts are recorded as invocation telemetry (per-minute counts,
    /// duration percentiles and the latest failures the dashboard's monitor shows): on by
    /// default. Off, the worker neither records attempts nor writes telemetry rows; its
    /// listener counters (heartbeats, `/metrics`) are kept either way.
    pub invocation_telemetry: bool,
    /// Where handlers, `notifyUrl`s and the apps' queue and namespace endpoints may be reached
    /// (`--egress-allow`); strict unless an operator allows more.
    pub egress: Egress,
    /// The most a handler's answer may weigh (`--max-response-bytes`); larger answers fail
    /// the invocation without being buffered.
    pub max_response_bytes: usize,
    /// The largest message body a worker takes from a broker a tenant chose
    /// (`--max-message-bytes`): a larger one is never held, and is settled unread (a RabbitMQ
    /// message is rejected to its queue's dead-letter exchange).
    pub max_message_bytes: u64,
    /// What one listener may hold in message bodies at once (`--max-held-bytes`): a RabbitMQ
    /// listener takes at most this over `max_message_bytes` messages at a time, whatever its
    /// `prefetchCount` asks.
    pub max_held_bytes: u64,
}

/// The default of [`WorkerConfig::max_message_bytes`]: 1 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: u64 = 1 << 20;

/// The default of [`WorkerConfig::max_held_bytes`]: 32 MiB, so Azure's default
/// `prefetchCount` of 30 fits at the default message size.
pub const DEFAULT_MAX_HELD_BYTES: u64 = 32 << 20;

/// The default of [`WorkerConfig::database_step_timeout`].
pub(crate) const DEFAULT_DATABASE_STEP_TIMEOUT: Duration = Duration::from_secs(5);

/// What a lease's holder gives up at the end of it: the worker counts its lease as lost when
/// this share of the TTL remains, so it has stopped polling before the database lets another
/// worker claim its instances.
pub const LEASE_MARGIN: f64 = 0.2;

impl WorkerConfig {
    pub fn new(name: impl Into<String>) -> WorkerConfig {
        WorkerConfig {
            name: name.into(),
            hosting: Hosting::Assigned,
            capacity: 100,
            lease_ttl: Duration::from_secs(10),
            host_defaults: HostDefaults::AZURE,
            refresh_interval: Duration::from_secs(5),
            heartbeat_interval: None,
            drain_deadline: Duration::from_secs(30),
            invisibility: INVISIBILITY,
            retry_divisor: 1,
            connector: ConnectorOptions::default(),
            public_url: None,
            database_step_timeout: DEFAULT_DATABASE_STEP_TIMEOUT,
            claim_retry: Duration::from_millis(250),
            load_timeout: Duration::from_secs(30),
            breaker_tick: Duration::from_secs(1),
            invocation_telemetry: true,
            egress: Egress::strict(),
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_held_bytes: DEFAULT_MAX_HELD_BYTES,
        }
    }

    /// How many messages a listener may hold at once: what [`Self::max_held_bytes`] holds of
    /// messages of [`Self::max_message_bytes`], at least one. Reported with every heartbeat: a
    /// RabbitMQ listener holds `held_at_once(prefetchCount, this)`
    /// (`shoal_domain::binding_kinds::rabbitmq`), and the scheduler counts an instance as
    /// taking no more.
    pub fn held_messages(&self) -> u16 {
        let fits = self.max_held_bytes / self.max_message_bytes.max(1);
        u16::try_from(fits.max(1)).unwrap_or(u16::MAX)
    }

    pub fn heartbeat_every(&self) -> Duration {
        self.heartbeat_interval.unwrap_or(self.lease_ttl / 4)
    }

    /// How long the worker trusts its lease after sending a heartbeat that succeeded.
    pub fn lease_valid_for(&self) -> Duration {
        self.lease_ttl.mul_f64(1.0 - LEASE_MARGIN)
    }

    /// Refuses timings under which the worker would lose its lease between two heartbeats.
    pub fn validate(&self) -> Result<(), String> {
        if self.lease_ttl.is_zero() {
            return Err("the lease TTL must be positive".into());
        }
        let every = self.heartbeat_every();
        if every.is_zero() || every >= self.lease_valid_for() {
            return Err(format!(
                "heartbeats every {every:?} cannot keep a {:?} lease (they must come more often \
                 than every {:?})",
                self.lease_ttl,
                self.lease_valid_for()
            ));
        }
        if self.breaker_tick < Duration::from_millis(10)
            || self.breaker_tick > Duration::from_secs(60)
        {
            return Err(format!(
                "the circuit breakers' tick must be between 10ms and 60s, not {:?}",
                self.breaker_tick
            ));
        }
        if self.max_message_bytes == 0 || self.max_held_bytes < self.max_message_bytes {
            return Err(format!(
                "the held-bytes limit ({}) must be at least the message limit ({}), which must \
                 be positive",
                self.max_held_bytes, self.max_message_bytes
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heartbeats_default_to_a_quarter_of_the_lease() {
        let mut config = WorkerConfig::new("w");
        assert_eq!(config.hosting, Hosting::Assigned);
        assert_eq!(config.heartbeat_every(), Duration::from_millis(2500));
        assert_eq!(config.lease_valid_for(), Duration::from_secs(8));
        assert!(config.validate().is_ok());
        config.heartbeat_interval = Some(Duration::from_millis(200));
        assert_eq!(config.heartbeat_every(), Duration::from_millis(200));
    }

    #[test]
    fn database_timings_default_to_todays_values() {
        let config = WorkerConfig::new("w");
        assert_eq!(config.database_step_timeout, Duration::from_secs(5));
        assert_eq!(config.claim_retry, Duration::from_millis(250));
        assert_eq!(config.load_timeout, Duration::from_secs(30));
    }

    #[test]
    fn heartbeats_slower_than_the_lease_are_refused() {
        let mut config = WorkerConfig::new("w");
        config.lease_ttl = Duration::from_secs(1);
        config.heartbeat_interval = Some(Duration::from_millis(800));
        assert!(config.validate().is_err());
        config.heartbeat_interval = Some(Duration::from_millis(799));
        assert!(config.validate().is_ok());
    }

    #[test]
    fn held_messages_follow_the_byte_limits() {
        let mut config = WorkerConfig::new("w");
        // 32 MiB of 1 MiB messages: Azure's default prefetchCount of 30 fits.
        assert_eq!(config.held_messages(), 32);
        config.max_message_bytes = 64 << 10;
        assert_eq!(config.held_messages(), 512);
        config.max_message_bytes = 1;
        config.max_held_bytes = u64::MAX;
        assert_eq!(config.held_messages(), u16::MAX);
        config.max_message_bytes = 3 << 20;
        config.max_held_bytes = 4 << 20;
        assert_eq!(config.held_messages(), 1);
        assert!(config.validate().is_ok());
        config.max_held_bytes = (3 << 20) - 1;
        let refused = config.validate().unwrap_err();
        assert!(refused.contains("held-bytes limit"), "{refused}");
        config.max_message_bytes = 0;
        assert!(config.validate().is_err());
    }
}
