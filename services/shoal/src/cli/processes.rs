//! The arguments of the long-running processes beside the API: `shoal worker` and
//! `shoal scheduler`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::parsers::*;
use super::{DatabaseArgs, EgressArgs, OutboundArgs, SecretArgs, Switch, TenantDefaultsArgs};
use crate::telemetry::LogFormat;

#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The worker's name, unique among workers (letters, digits, `.`, `_`, `-`).
    #[arg(long, env = "SHOAL_WORKER_NAME", value_parser = parse_worker_name)]
    pub name: String,
    /// Host one instance of every running app, with no scheduler (no claims, no self-fencing).
    /// By default the worker hosts exactly the app instances the scheduler assigns to it.
    #[arg(long, env = "SHOAL_WORKER_ALL_APPS", default_value_t = false)]
    pub all_apps: bool,
    /// Most app instances the scheduler may place on this worker.
    #[arg(long, env = "SHOAL_WORKER_CAPACITY", default_value_t = 100,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub capacity: u32,
    /// How long after its last heartbeat the worker counts as dead and its instances move
    /// elsewhere, e.g. `10s`. It heartbeats every quarter of this, and stops its listeners by
    /// itself once 80 % of it passes without a heartbeat reaching Postgres.
    #[arg(long, env = "SHOAL_WORKER_LEASE_TTL", default_value = "10s", value_parser = parse_ttl)]
    pub lease_ttl: Duration,
    /// Address of the worker's `/metrics` and `/healthz`.
    #[arg(long, env = "SHOAL_WORKER_LISTEN", default_value = "127.0.0.1:9464")]
    pub listen: SocketAddr,
    #[command(flatten)]
    pub database: DatabaseArgs,
    #[command(flatten)]
    pub secret: SecretArgs,
    /// How long a shutdown waits for in-flight invocations before releasing their messages,
    /// e.g. `30s`, `2m`.
    #[arg(long, env = "SHOAL_DRAIN_DEADLINE", default_value = "30s", value_parser = parse_ttl)]
    pub drain_deadline: Duration,
    /// How often the worker adds its functions' final failures to their circuit breakers and
    /// re-reads the breakers without a notification, e.g. `1s`, `500ms` (10 ms to 60 s). A
    /// breaker opens within about one tick of the failure that crosses its threshold.
    #[arg(long, env = "SHOAL_BREAKER_TICK", default_value = "1s", value_parser = parse_breaker_tick)]
    pub breaker_tick: Duration,
    /// Record every handler attempt as invocation telemetry (per-minute counts, duration
    /// percentiles and the latest failures with their logs, which the API's `invocations`
    /// endpoints and the dashboard's monitor show): `on` (default) or `off`. Off, the worker
    /// records nothing and writes no telemetry rows; listener counters are kept either way.
    #[arg(
        long,
        env = "SHOAL_INVOCATION_TELEMETRY",
        value_enum,
        default_value = "on"
    )]
    pub invocation_telemetry: Switch,
    /// A PEM file of extra CA certificates to trust for storage endpoints and token requests
    /// (private endpoints, emulators with their own CA).
    #[arg(long, env = "SHOAL_EXTRA_CA_FILE")]
    pub extra_ca_file: Option<PathBuf>,
    /// Use local-development `host.json` defaults (`maxPollingInterval` 2 s).
    #[arg(long, env = "SHOAL_LOCAL_DEVELOPMENT", default_value_t = false)]
    pub local_development: bool,
    /// Where Entra ID reaches Shoal's API (the same as `shoal serve --public-url`): connections
    /// sign in as their app's identity with client assertions issued under it. Without it,
    /// such connections do not start and their listener says why.
    #[arg(long, env = "SHOAL_PUBLIC_URL", value_parser = parse_public_url)]
    pub public_url: Option<url::Url>,
    #[command(flatten)]
    pub outbound: OutboundArgs,
    /// The largest message body the worker takes from a tenant's broker, in bytes (1024 to
    /// 1073741824). A RabbitMQ message over it is never held: it is rejected to its queue's
    /// dead-letter exchange unread.
    #[arg(
        long,
        env = "SHOAL_MAX_MESSAGE_BYTES",
        default_value_t = shoal_worker::DEFAULT_MAX_MESSAGE_BYTES,
        value_parser = parse_byte_limit
    )]
    pub max_message_bytes: u64,
    /// What one listener may hold in message bodies at once, in bytes (1024 to 1073741824, at
    /// least `--max-message-bytes`). A RabbitMQ listener takes at most this over
    /// `--max-message-bytes` messages at a time, whatever its `prefetchCount` asks.
    #[arg(
        long,
        env = "SHOAL_MAX_HELD_BYTES",
        default_value_t = shoal_worker::DEFAULT_MAX_HELD_BYTES,
        value_parser = parse_byte_limit
    )]
    pub max_held_bytes: u64,
    #[command(flatten)]
    pub timings: WorkerTimings,
    #[command(flatten)]
    pub tracing: super::TracingArgs,
    #[arg(long, env = "SHOAL_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,
}

/// Internal timing constants, overridable for tests only (hidden from `--help`): production
/// keeps Azure's 10-minute invisibility and a 5-second refresh and heartbeat.
#[derive(Debug, Args)]
pub struct WorkerTimings {
    #[arg(long, hide = true, env = "SHOAL_TEST_INVISIBILITY_MS", value_parser = parse_millis)]
    pub test_invisibility_ms: Option<Duration>,
    #[arg(long, hide = true, env = "SHOAL_TEST_REFRESH_MS", value_parser = parse_millis)]
    pub test_refresh_ms: Option<Duration>,
    #[arg(long, hide = true, env = "SHOAL_TEST_HEARTBEAT_MS", value_parser = parse_millis)]
    pub test_heartbeat_ms: Option<Duration>,
    /// Divides every retry's wait (a parked 10-minute retry comes back in 10 s at 60).
    #[arg(long, hide = true, env = "SHOAL_TEST_RETRY_DELAY_DIVISOR",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub test_retry_delay_divisor: Option<u32>,
}

#[derive(Debug, Args)]
pub struct SchedulerArgs {
    /// The scheduler's name, unique among schedulers: the lease holder (letters, digits, `.`,
    /// `_`, `-`; default: the host name and process id).
    #[arg(long, env = "SHOAL_SCHEDULER_NAME", value_parser = parse_worker_name)]
    pub name: Option<String>,
    /// How often the leader decides and places, e.g. `1s`, `500ms`.
    #[arg(long, env = "SHOAL_SCHEDULER_TICK", default_value = "1s", value_parser = parse_ttl)]
    pub tick: Duration,
    /// How long the leader's lease lasts unrenewed; a standby takes over once it lapses.
    #[arg(long, env = "SHOAL_SCHEDULER_LEASE_TTL", default_value = "10s", value_parser = parse_ttl)]
    pub lease_ttl: Duration,
    /// Scale-in waits for the largest recommendation of this window (stabilisation).
    #[arg(long, env = "SHOAL_SCALE_IN_WINDOW", default_value = "5m", value_parser = parse_ttl)]
    pub scale_in_window: Duration,
    /// Most queue-length reads per storage account per tick (stalest queues first).
    #[arg(long, env = "SHOAL_METRIC_READS_PER_ACCOUNT", default_value_t = 200,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub metric_reads_per_account: u32,
    /// Address of the scheduler's `/metrics` and `/healthz`.
    #[arg(long, env = "SHOAL_SCHEDULER_LISTEN", default_value = "127.0.0.1:9465")]
    pub listen: SocketAddr,
    /// Where tenants' queues, namespaces and brokers may be read beyond public addresses.
    #[command(flatten)]
    pub egress: EgressArgs,
    #[command(flatten)]
    pub database: DatabaseArgs,
    #[command(flatten)]
    pub secret: SecretArgs,
    /// A PEM file of extra CA certificates to trust for storage endpoints and token requests.
    #[arg(long, env = "SHOAL_EXTRA_CA_FILE")]
    pub extra_ca_file: Option<PathBuf>,
    /// Where Entra ID reaches Shoal's API (the same as `shoal serve --public-url`): queue
    /// lengths behind identity-based connections are read signed in as the app's identity.
    #[arg(long, env = "SHOAL_PUBLIC_URL", value_parser = parse_public_url)]
    pub public_url: Option<url::Url>,
    /// Tenants' instance quotas where their own limits do not set `maxInstances`.
    #[command(flatten)]
    pub tenant_defaults: TenantDefaultsArgs,
    #[command(flatten)]
    pub tracing: super::TracingArgs,
    #[arg(long, env = "SHOAL_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,
}
