//! `shoal scheduler`: the leader (or a standby) with its own `/metrics` endpoint, releasing its
//! lease on SIGTERM so a standby takes over at once.

use anyhow::Context;
use shoal_connectors::ConnectorOptions;
use shoal_domain::egress::EgressPolicy;
use shoal_egress::Egress;
use shoal_scheduler::{Scheduler, SchedulerConfig};
use shoal_store::crypto::Cipher;
use shoal_store::pool::{PoolConfig, connect_lazy};

use crate::cli::SchedulerArgs;
use crate::signals::shutdown_on_signal;
use crate::traces::Traces;

pub async fn run(args: SchedulerArgs) -> anyhow::Result<()> {
    let mut config = scheduler_config(&args)?;
    let traces = Traces::start("shoal-scheduler", &args.tracing)?;
    let pool = connect_lazy(args.database.url.expose(), &PoolConfig::default())
        .context("--database-url")?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("--listen {}: cannot bind", args.listen))?;
    // The scheduler's own `/metrics` is refused even where its network is allowed.
    config.egress = Egress::new(EgressPolicy::new(
        args.egress.allow_list(),
        vec![listener.local_addr()?],
    ));
    let scheduler = Scheduler::new(config, pool, Cipher::new(&args.secret.key));
    let status = scheduler.status();
    let shutdown = shutdown_on_signal();
    let server_stop = tokio_util::sync::CancellationToken::new();
    let server = tokio::spawn(shoal_scheduler::server::serve(
        listener,
        status,
        traces.counts().clone(),
        server_stop.clone(),
    ));
    tracing::info!(listen = %args.listen, "scheduler metrics at /metrics");
    let result = scheduler.start(shutdown).stopped().await;
    server_stop.cancel();
    let _ = server.await;
    traces.stop().await;
    Ok(result?)
}

pub fn scheduler_config(args: &SchedulerArgs) -> anyhow::Result<SchedulerConfig> {
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| crate::process_name::host_and_pid("scheduler"));
    let mut config = SchedulerConfig::new(name);
    if args.tick * 2 > args.lease_ttl {
        anyhow::bail!(
            "--lease-ttl ({:?}) must be at least twice --tick ({:?}): the leader renews once a tick",
            args.lease_ttl,
            args.tick
        );
    }
    config.tick = args.tick;
    config.lease_ttl = args.lease_ttl;
    config.tenant_defaults = args.tenant_defaults.tenant_defaults;
    config.scale_in_window = args.scale_in_window;
    config.public_url = args.public_url.clone();
    config.egress = Egress::new(EgressPolicy::new(args.egress.allow_list(), Vec::new()));
    config.metrics.reads_per_account_per_tick = args.metric_reads_per_account as usize;
    config.metrics.min_interval = args.tick;
    if let Some(path) = &args.extra_ca_file {
        let pem = std::fs::read(path)
            .with_context(|| format!("--extra-ca-file {}: cannot read", path.display()))?;
        config.connector = ConnectorOptions {
            extra_root_ca_pem: Some(pem),
            ..ConnectorOptions::default()
        };
    }
    Ok(config)
}
