//! The command line: every option has a `SHOAL_*` environment variable (Postgres is
//! `DATABASE_URL`) and is validated before anything starts.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use shoal_store::crypto::SecretKey;

use crate::telemetry::LogFormat;

#[derive(Debug, Parser)]
#[command(
    name = "shoal",
    version,
    about = "Control plane for event-driven function apps"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Apply database migrations.
    Migrate(DatabaseArgs),
    /// Serve the management API.
    Serve(ServeArgs),
    /// Print the OpenAPI document.
    Openapi,
    /// Print a bearer token signed with Shoal's key (for operators and scripts).
    Token(TokenArgs),
    /// Run a worker: listeners for hosted apps' trigger functions, invoking their handlers.
    Worker(WorkerArgs),
    /// Run the scheduler: scale decisions and placement of app instances on workers (one
    /// leads; more instances stand by).
    Scheduler(SchedulerArgs),
    /// Run everything locally on embedded defaults.
    Dev(DevArgs),
}

impl Command {
    pub fn log_format(&self) -> LogFormat {
        match self {
            Command::Serve(args) => args.log_format,
            Command::Dev(args) => args.log_format,
            Command::Worker(args) => args.log_format,
            Command::Scheduler(args) => args.log_format,
            _ => LogFormat::Text,
        }
    }
}

#[derive(Debug, Args)]
pub struct DatabaseArgs {
    /// Postgres connection URL.
    #[arg(long = "database-url", env = "DATABASE_URL", hide_env_values = true)]
    pub url: String,
}

#[derive(Debug, Args)]
pub struct SecretArgs {
    /// Base64 of 32 random bytes; encrypts secrets at rest (`openssl rand -base64 32`).
    #[arg(long = "secret-key", env = "SHOAL_SECRET_KEY", hide_env_values = true, value_parser = parse_secret_key)]
    pub key: SecretKey,
}

#[derive(Debug, Args)]
pub struct IssuerArgs {
    /// The `iss` of tokens Shoal issues and accepts.
    #[arg(long, env = "SHOAL_ISSUER", default_value = shoal_api::tokens::DEFAULT_ISSUER)]
    pub issuer: String,
    /// The `aud` of tokens Shoal issues and accepts.
    #[arg(long, env = "SHOAL_AUDIENCE", default_value = shoal_api::tokens::DEFAULT_AUDIENCE)]
    pub audience: String,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "SHOAL_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    #[command(flatten)]
    pub database: DatabaseArgs,
    #[command(flatten)]
    pub secret: SecretArgs,
    #[command(flatten)]
    pub issuer: IssuerArgs,
    /// Largest accepted request body, in bytes.
    #[arg(long, env = "SHOAL_MAX_BODY_BYTES", default_value_t = shoal_api::DEFAULT_MAX_BODY_BYTES,
          value_parser = clap::value_parser!(usize))]
    pub max_body_bytes: usize,
    /// Postgres connections in the pool (default: 2 per core, at least 4).
    #[arg(long, env = "SHOAL_DB_MAX_CONNECTIONS",
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub db_max_connections: Option<u32>,
    /// Apply pending migrations before serving.
    #[arg(long, env = "SHOAL_MIGRATE", default_value_t = false)]
    pub migrate: bool,
    #[arg(long, env = "SHOAL_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("scope").required(true).args(["platform_admin", "tenant"])))]
pub struct TokenArgs {
    /// The token's subject (who it identifies).
    #[arg(long)]
    pub subject: String,
    /// A platform administrator's token.
    #[arg(long)]
    pub platform_admin: bool,
    /// The tenant the token is for.
    #[arg(long)]
    pub tenant: Option<String>,
    /// The role within the tenant.
    #[arg(long, value_parser = ["Owner", "Contributor", "Reader"], default_value = "Owner", requires = "tenant")]
    pub role: String,
    /// Lifetime, e.g. `15m`, `1h`, `24h` (at most 24h).
    #[arg(long, default_value = "1h", value_parser = parse_ttl)]
    pub ttl: Duration,
    #[command(flatten)]
    pub database: DatabaseArgs,
    #[command(flatten)]
    pub secret: SecretArgs,
    #[command(flatten)]
    pub issuer: IssuerArgs,
}

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
    /// A PEM file of extra CA certificates to trust for storage endpoints and token requests
    /// (private endpoints, emulators with their own CA).
    #[arg(long, env = "SHOAL_EXTRA_CA_FILE")]
    pub extra_ca_file: Option<PathBuf>,
    /// Use local-development `host.json` defaults (`maxPollingInterval` 2 s).
    #[arg(long, env = "SHOAL_LOCAL_DEVELOPMENT", default_value_t = false)]
    pub local_development: bool,
    #[command(flatten)]
    pub timings: WorkerTimings,
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
    #[command(flatten)]
    pub database: DatabaseArgs,
    #[command(flatten)]
    pub secret: SecretArgs,
    /// A PEM file of extra CA certificates to trust for storage endpoints and token requests.
    #[arg(long, env = "SHOAL_EXTRA_CA_FILE")]
    pub extra_ca_file: Option<PathBuf>,
    #[arg(long, env = "SHOAL_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,
}

#[derive(Debug, Args)]
pub struct DevArgs {
    /// Address of the API.
    #[arg(long, env = "SHOAL_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Where `dev` keeps its state (Postgres data, the generated secret key).
    #[arg(long, env = "SHOAL_DEV_DIR", default_value = ".shoal")]
    pub dir: PathBuf,
    /// Use this Postgres instead of a private cluster.
    #[arg(long = "database-url", env = "DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,
    #[arg(long, env = "SHOAL_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,
}

fn parse_worker_name(text: &str) -> Result<String, String> {
    let ok = !text.is_empty()
        && text.len() <= 128
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(text.to_owned())
    } else {
        Err("must be 1-128 letters, digits, '.', '_' or '-'".into())
    }
}

fn parse_millis(text: &str) -> Result<Duration, String> {
    match text.trim().parse::<u64>() {
        Ok(ms) if ms > 0 => Ok(Duration::from_millis(ms)),
        _ => Err("must be a positive number of milliseconds".into()),
    }
}

fn parse_secret_key(text: &str) -> Result<SecretKey, String> {
    SecretKey::from_base64(text)
}

/// Parses `500ms`, `30s`, `15m`, `1h`, `1d` (or plain seconds) within (0, 24h].
pub fn parse_ttl(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration like 15m or 1h"))?;
    let ttl = match unit {
        "ms" => Duration::from_millis(number),
        "" | "s" => Duration::from_secs(number),
        "m" => Duration::from_secs(number.saturating_mul(60)),
        "h" => Duration::from_secs(number.saturating_mul(3600)),
        "d" => Duration::from_secs(number.saturating_mul(86_400)),
        _ => return Err(format!("unknown unit `{unit}` (use ms, s, m, h or d)")),
    };
    if ttl.is_zero() || ttl > shoal_api::tokens::MAX_TTL {
        return Err("must be more than 0 and at most 24h".into());
    }
    Ok(ttl)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_parsing() {
        assert_eq!(parse_ttl("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_ttl("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_ttl("15m").unwrap(), Duration::from_secs(900));
        assert_eq!(parse_ttl("250ms").unwrap(), Duration::from_millis(250));
        for bad in ["0", "0ms", "25h", "1w", "h", "-1h", "", "1.5s"] {
            assert!(parse_ttl(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn token_needs_a_scope() {
        let err = Cli::try_parse_from([
            "shoal",
            "token",
            "--subject",
            "x",
            "--database-url",
            "postgres://x",
            "--secret-key",
            &SecretKey::generate().to_base64(),
        ])
        .unwrap_err();
        assert!(err.to_string().contains("--platform-admin"), "{err}");
    }
}
