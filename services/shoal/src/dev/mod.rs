//! `shoal dev`: everything in one process on embedded defaults. A private Postgres cluster
//! (unless `DATABASE_URL` is set) and a secret key are kept under `.shoal/`, so the data and
//! tokens survive restarts. Azurite and the local Service Bus stand-in run in memory (their
//! queues start empty each time), with the scheduler, three workers hosting the instances it
//! places, and the demo app with its handler.

mod demo;
pub mod postgres;
mod service_bus;

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use shoal_api::external_issuers::ExternalIssuersConfig;
use shoal_api::identity::{Principal, Role};
use shoal_api::{ApiConfig, Application, OutboundConfig};
use shoal_domain::egress::{AllowList, EgressPolicy};
use shoal_egress::Egress;
use shoal_store::crypto::SecretKey;
use shoal_store::pool::{PoolConfig, migrate};

use shoal_domain::host_config::HostDefaults;
use shoal_scheduler::{Scheduler, SchedulerConfig};
use shoal_worker::{ListenerMetrics, Worker, WorkerConfig};

use crate::cli::DevArgs;
use crate::signals::shutdown_on_signal;
use crate::tokens::issue_token;
use crate::traces::Traces;

pub async fn run(args: DevArgs) -> anyhow::Result<()> {
    let traces = Traces::start("shoal-dev", &args.tracing)?;
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("creating {}", args.dir.display()))?;
    let secret_key = dev_secret_key(&args.dir)?;
    let (database_url, cluster) = match &args.database_url {
        Some(url) => (url.expose().to_owned(), None),
        None => {
            let cluster = postgres::PrivateCluster::start(&args.dir.join("postgres")).await?;
            (cluster.database_url(), Some(cluster))
        }
    };
    let result = serve(&args, &database_url, secret_key, &traces).await;
    traces.stop().await;
    if let Some(cluster) = cluster
        && let Err(err) = cluster.stop().await
    {
        tracing::warn!(error = %err, "could not stop the private Postgres cluster");
    }
    result
}

async fn serve(
    args: &DevArgs,
    database_url: &str,
    secret_key: SecretKey,
    traces: &Traces,
) -> anyhow::Result<()> {
    let issuer = shoal_api::tokens::DEFAULT_ISSUER;
    shoal_api::external_issuers::check_distinct(&args.external.external_issuers, issuer)
        .map_err(|e| anyhow::anyhow!("--external-issuer {e}"))?;
    migrate(database_url)
        .await
        .context("migrating the database")?;
    let audience = shoal_api::tokens::DEFAULT_AUDIENCE;
    // Handlers run on this machine in development: loopback is allowed, and said so below.
    let egress_allow = AllowList::loopback().union(&args.outbound.allow_list());
    let config = ApiConfig {
        outbound: OutboundConfig {
            egress_allow: egress_allow.clone(),
            max_response_bytes: args.outbound.max_response_bytes,
        },
        listen: args.listen,
        database_url: database_url.into(),
        secret_key: secret_key.clone(),
        issuer: issuer.into(),
        audience: audience.into(),
        max_body_bytes: shoal_api::DEFAULT_MAX_BODY_BYTES,
        identity: shoal_api::IdentityConfig {
            external_issuers: ExternalIssuersConfig {
                issuers: args.external.external_issuers.clone(),
                ..ExternalIssuersConfig::default()
            },
            ..Default::default()
        },
        pool: PoolConfig::default(),
        limits: Default::default(),
        // Its HTTP functions' calls beside its worker's deliveries, in the explorer.
        record_invocations_as: Some("dev-api".into()),
        dashboard: shoal_api::dashboard::DashboardConfig {
            dir: args.dashboard.web_dir()?,
            environment: Some(
                args.dashboard
                    .environment
                    .clone()
                    .unwrap_or_else(|| "dev".into()),
            ),
            // On loopback the operator running `shoal dev` is its only user: the dashboard
            // signs in with one click. Listening wider, anyone reaching it would get an admin
            // token, so the token must be pasted like anywhere else.
            dev_sign_in: args.listen.ip().is_loopback(),
            trace_viewer_url: args.dashboard.trace_viewer_url(),
        },
    };
    let azurite = shoal_devstack::azurite::Azurite::start_for_dev()
        .await
        .context("starting Azurite (make dev installs it; SHOAL_AZURITE_BIN overrides)")?;
    let bus = service_bus::start().await?;
    let pool = shoal_store::pool::connect_lazy(database_url, &PoolConfig::default())?;
    let cipher = shoal_store::crypto::Cipher::new(&secret_key);
    // What the demo's functions and printed commands reach. Every run starts the stand-in,
    // so the Service Bus function always runs here.
    let services = demo::LocalServices {
        storage_connection: azurite.connection_string(),
        queue_endpoint: azurite.queue_endpoint(),
        queue_sas: shoal_connectors::account_sas(
            shoal_domain::connection::DEVELOPMENT_ACCOUNT_NAME,
            shoal_domain::connection::DEVELOPMENT_ACCOUNT_KEY,
            chrono::Utc::now() + chrono::TimeDelta::days(7),
        )?,
        service_bus_connection: Some(bus.connection_string()),
    };
    let (handler_listener, handler_url) = demo::bind_handler().await?;
    let secret = demo::ensure_app(&pool, &cipher, &handler_url, &services).await?;
    demo::start_handler(handler_listener, secret);
    demo::prepare(&services).await?;
    // Workers and the scheduler sign in as apps' identities with assertions issued under the
    // API's URL; known up front unless the API listens on a port picked at random.
    let public_url = (args.listen.port() != 0)
        .then(|| url::Url::parse(&format!("http://{}", args.listen)).ok())
        .flatten();
    let workers: Vec<Worker> = (1..=DEV_WORKERS)
        .map(|i| {
            let mut config = WorkerConfig::new(format!("dev-worker-{i}"));
            config.host_defaults = HostDefaults::LOCAL_DEVELOPMENT;
            config.public_url = public_url.clone();
            config.egress = Egress::new(EgressPolicy::new(egress_allow.clone(), vec![args.listen]));
            config.max_response_bytes = args.outbound.max_response_bytes;
            Worker::new(config, pool.clone(), cipher.clone())
        })
        .collect();
    let mut scheduler_config = SchedulerConfig::new("dev-scheduler");
    // Long enough to watch an app scale in, short enough to see it happen.
    scheduler_config.scale_in_window = Duration::from_secs(60);
    scheduler_config.public_url = public_url;
    scheduler_config.egress =
        Egress::new(EgressPolicy::new(egress_allow.clone(), vec![args.listen]));
    let scheduler = Scheduler::new(scheduler_config, pool, cipher);
    let collectors: Vec<Box<dyn prometheus_client::collector::Collector>> = vec![
        Box::new(ListenerMetrics(workers.iter().map(Worker::stats).collect())),
        traces.metrics(),
    ];
    let serves_dashboard = (config.dashboard.dir.is_some(), config.dashboard.dev_sign_in);
    let app = Application::build_with_collectors(config, collectors).await?;
    let admin = Principal::PlatformAdmin {
        subject: "dev-admin".into(),
    };
    let token = issue_token(
        database_url,
        &secret_key,
        issuer,
        audience,
        &admin,
        Duration::from_secs(24 * 3600),
    )
    .await?;
    let invoker = issue_token(
        database_url,
        &secret_key,
        issuer,
        audience,
        &Principal::operator(
            "dev-invoker",
            &shoal_domain::names::TenantName::parse(demo::TENANT).map_err(anyhow::Error::msg)?,
            Role::FunctionInvoker,
        ),
        Duration::from_secs(24 * 3600),
    )
    .await?;
    let base = format!("http://{}:{}", args.listen.ip(), app.port());
    let dashboard = match serves_dashboard {
        (false, _) => format!(
            "not built (make dev builds {}; --web-dir names another)",
            crate::cli::DEFAULT_WEB_DIR
        ),
        (true, true) => format!("{base}/ (one-click sign-in)"),
        (true, false) => format!("{base}/ (paste the token below)"),
    };
    println!(
        "\nShoal is running.\n\n  Dashboard      {dashboard}\n  API            {base}/v1\n  API reference  {base}/docs\n  OpenAPI        {base}/openapi.json\n  Metrics        {base}/metrics\n\n\
         Egress: handlers may be on loopback here ({egress_allow}); `shoal serve` and `shoal worker`\n\
         allow only public addresses unless --egress-allow says more (docs/operating/egress.md).\n\n\
         Platform-admin token (valid 24 h):\n\n  export SHOAL_TOKEN={token}\n\n\
         Try:\n\n  curl -s {base}/v1/tenants/demo/apps -H \"Authorization: Bearer $SHOAL_TOKEN\"\n\n\
         Azurite (queues, in memory)\n\n  endpoint          {}\n  connection string {}\n\n{}\n\
         Stop with Ctrl-C.\n",
        services.queue_endpoint,
        services.storage_connection,
        demo::instructions(
            &services,
            &demo::ApiAccess {
                base: &base,
                invoker_token: &invoker,
            }
        ),
    );
    let shutdown = shutdown_on_signal();
    let scheduler = scheduler.start(shutdown.clone());
    let workers = workers
        .into_iter()
        .map(|w| w.start(shutdown.clone()))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let served = app.run_until_stopped(shutdown).await;
    let mut drained = Ok(());
    for worker in workers {
        if let Err(e) = worker.stopped().await {
            drained = Err(e);
        }
    }
    let scheduled = scheduler.stopped().await;
    drop(azurite);
    bus.shutdown().await;
    served?;
    drained?;
    Ok(scheduled?)
}

/// `shoal dev` runs this many workers, so placement and failover can be watched locally.
const DEV_WORKERS: usize = 3;

/// The dev secret key, generated once and kept (owner-only) so stored secrets stay readable.
fn dev_secret_key(dir: &Path) -> anyhow::Result<SecretKey> {
    let path = dir.join("secret-key");
    if let Ok(text) = std::fs::read_to_string(&path) {
        return SecretKey::from_base64(&text)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()));
    }
    let key = SecretKey::generate();
    std::fs::write(&path, key.to_base64())
        .with_context(|| format!("writing {}", path.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(key)
}
