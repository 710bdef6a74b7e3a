//! The command line: every option has a `SHOAL_*` environment variable (Postgres is
//! `DATABASE_URL`) and is validated before anything starts.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use shoal_store::crypto::SecretKey;
use shoal_store::pool::DatabaseUrl;

use crate::client;
use crate::telemetry::LogFormat;

mod limits;
mod outbound;
mod parsers;
mod processes;
mod tracing;

pub use limits::{ApiLimitArgs, TenantDefaultsArgs};
pub use outbound::{EgressArgs, OutboundArgs};
pub use parsers::parse_ttl;
use parsers::*;
pub use processes::{SchedulerArgs, WorkerArgs};
pub use tracing::TracingArgs;

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

    // The client commands, for the people who use Shoal (docs/cli.md).
    /// Sign in to a Shoal API and save the credential as a profile.
    Login(client::LoginArgs),
    /// Forget a saved profile.
    Logout(client::LogoutArgs),
    /// Function apps and their settings.
    App(client::Group<client::AppCommand>),
    /// An app's functions.
    Func(client::Group<client::FuncCommand>),
    /// An app's instances and the scheduler's decisions.
    Scale(client::Group<client::ScaleCommand>),
    /// An app's invocations: per minute, the failed ones, or followed live.
    Invocations(client::Group<client::InvocationsCommand>),
    /// A function's poison queue.
    Poison(client::Group<client::PoisonCommand>),
    /// Pause or resume a function (its circuit breaker).
    Breaker(client::Group<client::BreakerCommand>),
    /// Send a test message to a function's trigger queue or topic, as the app.
    Send(client::SendCommand),
    /// Check an app's configuration: connections, queues, identities, host settings.
    Diagnostics(client::DiagnosticsArgs),
    /// Print a shell completion script: `shoal completions bash > ~/.local/share/bash-completion/completions/shoal`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
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
    /// Record every call of an HTTP-triggered function's handler that the webhook ingress
    /// makes, as workers record their deliveries: `on` (default) or `off`. On, the calls
    /// appear in the function's invocation log and monitor under this process's name
    /// (`api-<host>-<pid>`); off, none is written.
    #[arg(
        long,
        env = "SHOAL_INVOCATION_TELEMETRY",
        value_enum,
        default_value = "on"
    )]
    pub invocation_telemetry: Switch,
    #[command(flatten)]
    pub dashboard: DashboardArgs,
    #[command(flatten)]
    pub outbound: OutboundArgs,
    #[command(flatten)]
    pub limits: ApiLimitArgs,
    #[command(flatten)]
    pub tracing: TracingArgs,
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
    /// Address to listen on; AMQP 1.0 and the management API share the port. Any port works
    /// for Shoal's workers and scheduler, which dial the port the connection string names.
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
    /// The trace viewer the dashboard links trace ids to: an http(s) URL template holding
    /// `{traceId}`, e.g. `http://jaeger:16686/trace/{traceId}` (Jaeger) or a Grafana Explore
    /// URL for Tempo. Without it (or empty), the dashboard shows trace ids as plain text.
    #[arg(long, env = "SHOAL_TRACE_VIEWER_URL", value_name = "TEMPLATE", value_parser = parse_trace_viewer_url)]
    pub trace_viewer_url: Option<String>,
}

impl DashboardArgs {
    /// The trace viewer's URL template, None when unset or empty.
    pub fn trace_viewer_url(&self) -> Option<String> {
        self.trace_viewer_url.clone().filter(|url| !url.is_empty())
    }

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
    #[command(flatten)]
    pub tracing: TracingArgs,
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

    /// `shoal serve` with its required flags and `extra`.
    fn serve_with(extra: &[&str]) -> Result<ServeArgs, clap::Error> {
        let key = SecretKey::generate().to_base64();
        let mut args = vec![
            "shoal",
            "serve",
            "--database-url",
            "postgres://x",
            "--secret-key",
            key.as_str(),
        ];
        args.extend_from_slice(extra);
        match Cli::try_parse_from(args)?.command {
            Command::Serve(args) => Ok(args),
            other => panic!("serve parses as serve, not {other:?}"),
        }
    }

    #[test]
    fn external_issuers_repeat_and_bad_ones_name_the_flag() {
        let serve = |specs: &[&str]| {
            let flags: Vec<&str> = specs
                .iter()
                .flat_map(|spec| ["--external-issuer", *spec])
                .collect();
            serve_with(&flags)
        };
        let args = serve(&[
            "issuer=https://login.example.com/x/v2.0,audience=api://shoal",
            "issuer=http://127.0.0.1:9000/realms/dev,audience=shoal,subject=sub;\
             issuer=https://kc.example.com,audience=shoal,jwks=https://kc.example.com/certs",
        ])
        .unwrap();
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
        assert!(serve(&[]).unwrap().external.external_issuers.is_empty());
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
    fn serve_and_dev_take_a_trace_viewer_url_and_a_bad_one_names_the_flag() {
        let jaeger = "http://jaeger:16686/trace/{traceId}";
        let serve = |url: &str| serve_with(&["--trace-viewer-url", url]);
        let args = serve(jaeger).unwrap();
        assert_eq!(args.dashboard.trace_viewer_url().as_deref(), Some(jaeger));
        let args = serve("").unwrap();
        assert_eq!(args.dashboard.trace_viewer_url(), None, "empty is none");
        let Command::Dev(args) =
            Cli::try_parse_from(["shoal", "dev", "--trace-viewer-url", jaeger])
                .unwrap()
                .command
        else {
            panic!("dev parses as dev");
        };
        assert_eq!(args.dashboard.trace_viewer_url().as_deref(), Some(jaeger));
        let err = serve("http://jaeger:16686/trace/").unwrap_err().to_string();
        assert!(err.contains("--trace-viewer-url"), "{err}");
        assert!(err.contains("{traceId}"), "{err}");
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
