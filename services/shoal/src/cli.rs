//! The command line: every option has a `SHOAL_*` environment variable (Postgres is
//! `DATABASE_URL`) and is validated before anything starts.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use shoal_store::crypto::SecretKey;
use shoal_store::pool::DatabaseUrl;

use crate::telemetry::LogFormat;

mod limits;
mod outbound;
mod parsers;

pub use limits::{ApiLimitArgs, TenantDefaultsArgs};
pub use outbound::{EgressArgs, OutboundArgs};
pub use parsers::parse_ttl;
use parsers::*;

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
    /// Manage the token signing keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Run a worker: listeners for hosted apps' trigger functions, invoking their handlers.
    Worker(WorkerArgs),
    /// Run the scheduler: scale decisions and placement of app instances on workers (one
    /// leads; more instances stand by).
    Scheduler(SchedulerArgs),
    /// Run everything locally on embedded defaults.
    Dev(DevArgs),
    /// Run the local Service Bus stand-in on its own (for Compose and local clusters; a
    /// stand-in for development, not Azure Service Bus: docs/local-bus.md).
    LocalBus(LocalBusArgs),
}

impl Command {
    pub fn log_format(&self) -> LogFormat {
        match self {
            Command::Serve(args) => args.log_format,
            Command::Dev(args) => args.log_format,
            Command::Worker(args) => args.log_format,
            Command::Scheduler(args) => args.log_format,
            Command::LocalBus(args) => args.log_format,
            _ => LogFormat::Text,
        }
    }
}

#[derive(Debug, Args)]
pub struct DatabaseArgs {
    /// Postgres connection URL.
    #[arg(long = "database-url", env = "DATABASE_URL", hide_env_values = true)]
    pub url: DatabaseUrl,
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
    /// The base URL clients reach this API at: the discovery document's endpoints and apps'
    /// IDENTITY_ENDPOINT are built from it (default: http://<listen address>).
    #[arg(long, env = "SHOAL_PUBLIC_URL", value_parser = parse_public_url)]
    pub public_url: Option<url::Url>,
    /// Lifetime of tokens from /oauth2/token and the managed-identity endpoint, e.g. `15m`,
    /// `1h` (at most 24h).
    #[arg(long, env = "SHOAL_TOKEN_LIFETIME", default_value = "1h", value_parser = parse_ttl)]
    pub token_lifetime: Duration,
    #[command(flatten)]
    pub external: ExternalIssuerArgs,
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
    #[command(flatten)]
    pub dashboard: DashboardArgs,
    #[command(flatten)]
    pub outbound: OutboundArgs,
    #[command(flatten)]
    pub limits: ApiLimitArgs,
    #[arg(long, env = "SHOAL_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,
}

/// `serve` and `dev`: the OIDC providers whose users may be registered and sign in.
#[derive(Debug, Args)]
pub struct ExternalIssuerArgs {
    /// Accept tokens of an OIDC identity provider for the users registered with it:
    /// `issuer=URL,audience=AUD[,subject=oid|sub][,jwks=URL]` (subject: the claim users are
    /// registered by, default `oid` if present else `sub`; jwks: default from the issuer's
    /// discovery document). Repeatable; the variable takes several separated by `;`.
    #[arg(
        long = "external-issuer",
        env = "SHOAL_EXTERNAL_ISSUERS",
        value_name = "SPEC",
        value_delimiter = ';'
    )]
    pub external_issuers: Vec<shoal_api::external_issuers::ExternalIssuer>,
}

/// `shoal local-bus`: the stand-in `shoal dev` runs, as a process of its own.
#[derive(Debug, Args)]
pub struct LocalBusArgs {
    /// Address to listen on; AMQP 1.0 and the management API share the port. Keep port 5672
    /// where Shoal's workers connect: their Service Bus client dials 5672 whatever port the
    /// connection string names (docs/local-bus.md).
    #[arg(long, env = "SHOAL_LOCAL_BUS_LISTEN", default_value = "127.0.0.1:5672")]
    pub listen: SocketAddr,
    /// The entities and shared access policies, in the Service Bus emulator's `Config.json`
    /// shape (docs/local-bus.md). Without it: no entities (create them through the management
    /// API) and the fixed development policies.
    #[arg(long, env = "SHOAL_LOCAL_BUS_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The host name clients reach the stand-in by, put in the connection strings it prints
    /// (e.g. the Compose service's name; default: the listen address).
    #[arg(long, env = "SHOAL_LOCAL_BUS_HOST", value_name = "HOST", value_parser = parse_host)]
    pub host: Option<String>,
    #[arg(long, env = "SHOAL_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,
}

/// The dashboard served at `/`.
#[derive(Debug, Args)]
pub struct DashboardArgs {
    /// The built dashboard (`web/dist`, made by `make dev` or `npm run build` in web/). Without
    /// it, `web/dist` under the working directory is used when it exists; otherwise `/` serves
    /// no dashboard (the API is unaffected).
    #[arg(long, env = "SHOAL_WEB_DIR", value_name = "DIR")]
    pub web_dir: Option<PathBuf>,
    /// The environment's name, shown on every view of the dashboard (e.g. `production`).
    #[arg(long, env = "SHOAL_ENVIRONMENT", value_parser = parse_environment)]
    pub environment: Option<String>,
}

impl DashboardArgs {
    /// The dashboard's directory: the one given (which must hold an index.html), else
    /// `web/dist` if it was built here.
    pub fn web_dir(&self) -> anyhow::Result<Option<PathBuf>> {
        match &self.web_dir {
            Some(dir) if dir.join("index.html").is_file() => Ok(Some(dir.clone())),
            Some(dir) => anyhow::bail!(
                "--web-dir {}: no index.html there (build the dashboard with `npm run build` in web/)",
                dir.display()
            ),
            None => {
                let default = PathBuf::from(DEFAULT_WEB_DIR);
                Ok(default.join("index.html").is_file().then_some(default))
            }
        }
    }
}

/// Where `make dev` builds the dashboard, relative to the repository.
pub const DEFAULT_WEB_DIR: &str = "web/dist";

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
    /// The built-in role the token holds at the tenant's scope (evaluated like a role
    /// assignment).
    #[arg(long, value_parser = ["Owner", "Contributor", "Reader", "Function Invoker"], default_value = "Owner", requires = "tenant")]
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

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Create a new signing key that signs from now on; the current keys keep verifying the
    /// tokens they signed until the grace period ends, then are refused.
    Rotate(RotateArgs),
}

#[derive(Debug, Args)]
pub struct RotateArgs {
    /// How long the current keys keep verifying, e.g. `0s` (at once: a compromised key), `2h`,
    /// `1d` (at most 7d; default: the longest token lifetime plus a margin, 24h5m30s).
    #[arg(long, env = "SHOAL_KEY_ROTATION_GRACE", value_parser = parse_grace)]
    pub grace: Option<Duration>,
    #[command(flatten)]
    pub database: DatabaseArgs,
    #[command(flatten)]
    pub secret: SecretArgs,
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
    pub database_url: Option<DatabaseUrl>,
    #[command(flatten)]
    pub dashboard: DashboardArgs,
    /// Loopback is always allowed in `dev`, so handlers on this machine can be reached.
    #[command(flatten)]
    pub outbound: OutboundArgs,
    // As `serve --external-issuer`: users may be registered with these issuers and sign in.
    #[command(flatten)]
    pub external: ExternalIssuerArgs,
    #[arg(long, env = "SHOAL_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,
}

/// A setting that is either on or off, spelt as such on the command line and in `SHOAL_*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Switch {
    On,
    Off,
}

impl Switch {
    pub fn is_on(self) -> bool {
        self == Switch::On
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command's parsed configuration, printed with `{:?}` (as a panic or a debug log
    /// would), shows neither the database password nor the secret key.
    #[test]
    fn debug_of_the_configuration_shows_no_secret() {
        let key = SecretKey::generate().to_base64();
        let url = "postgres://shoal:hunter2-db-password@db.example.com/shoal";
        for command in [
            vec!["shoal", "serve"],
            vec!["shoal", "worker", "--name", "w1"],
            vec!["shoal", "scheduler"],
            vec!["shoal", "migrate"],
            vec!["shoal", "token", "--subject", "ops", "--platform-admin"],
            vec!["shoal", "keys", "rotate"],
        ] {
            let mut args = command.clone();
            if command[1] != "migrate" {
                args.extend(["--secret-key", key.as_str()]);
            }
            args.extend(["--database-url", url]);
            let cli = Cli::try_parse_from(&args).unwrap_or_else(|e| panic!("{command:?}: {e}"));
            let printed = format!("{cli:?}");
            assert!(!printed.contains("hunter2"), "{command:?}: {printed}");
            assert!(!printed.contains(&key), "{command:?}: {printed}");
            assert!(
                printed.contains("db.example.com"),
                "the rest of the URL is shown"
            );
        }
        let dev = Cli::try_parse_from(["shoal", "dev", "--database-url", url]).unwrap();
        assert!(!format!("{dev:?}").contains("hunter2"));
    }

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
    fn grace_and_public_url_parsing() {
        assert_eq!(parse_grace("0s").unwrap(), Duration::ZERO);
        assert_eq!(parse_grace("2d").unwrap(), Duration::from_secs(2 * 86_400));
        for bad in ["8d", "soon", "-1h"] {
            assert!(parse_grace(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_public_url("https://shoal.example.com/api/")
                .unwrap()
                .as_str(),
            "https://shoal.example.com/api/"
        );
        for bad in [
            "shoal.example.com",
            "ftp://x",
            "https://x/?a=1",
            "https://x/#f",
            "unix:/run/x",
        ] {
            assert!(parse_public_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn external_issuers_repeat_and_bad_ones_name_the_flag() {
        let key = SecretKey::generate().to_base64();
        let serve = |specs: &[&str]| {
            let mut args = vec![
                "shoal",
                "serve",
                "--database-url",
                "postgres://x",
                "--secret-key",
                key.as_str(),
            ];
            for spec in specs {
                args.extend(["--external-issuer", *spec]);
            }
            Cli::try_parse_from(args)
        };
        let Command::Serve(args) = serve(&[
            "issuer=https://login.example.com/x/v2.0,audience=api://shoal",
            "issuer=http://127.0.0.1:9000/realms/dev,audience=shoal,subject=sub;\
             issuer=https://kc.example.com,audience=shoal,jwks=https://kc.example.com/certs",
        ])
        .unwrap()
        .command
        else {
            panic!("serve parses as serve");
        };
        let issuers: Vec<&str> = args
            .external
            .external_issuers
            .iter()
            .map(|i| i.issuer.as_str())
            .collect();
        assert_eq!(
            issuers,
            [
                "https://login.example.com/x/v2.0",
                "http://127.0.0.1:9000/realms/dev",
                "https://kc.example.com"
            ]
        );
        let Command::Serve(none) = serve(&[]).unwrap().command else {
            panic!("serve parses as serve");
        };
        assert!(none.external.external_issuers.is_empty());
        for bad in [
            "issuer=http://login.example.com,audience=x",
            "issuer=https://login.example.com",
            "audience=x",
            "issuer=https://login.example.com,audience=x,subject=email",
        ] {
            let err = serve(&[bad]).unwrap_err().to_string();
            assert!(err.contains("--external-issuer"), "{bad}: {err}");
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
