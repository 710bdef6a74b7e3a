//! `shoal worker`: a worker process with its own `/metrics` endpoint, draining on SIGTERM. By
//! default it hosts the app instances the scheduler assigns to it; `--all-apps` hosts one
//! instance of every running app without a scheduler.

use anyhow::Context;
use shoal_connectors::ConnectorOptions;
use shoal_domain::egress::EgressPolicy;
use shoal_domain::host_config::HostDefaults;
use shoal_egress::Egress;
use shoal_store::crypto::Cipher;
use shoal_store::pool::{PoolConfig, connect_lazy};
use shoal_worker::{Hosting, Worker, WorkerConfig};

use crate::cli::WorkerArgs;
use crate::signals::shutdown_on_signal;
use crate::traces::Traces;

pub async fn run(args: WorkerArgs) -> anyhow::Result<()> {
    let mut config = worker_config(&args)?;
    let traces = Traces::start("shoal-worker", &args.tracing)?;
    let pool = connect_lazy(args.database.url.expose(), &PoolConfig::default())
        .context("--database-url")?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("--listen {}: cannot bind", args.listen))?;
    // The worker's own `/metrics` is refused even where its network is allowed.
    config.egress = Egress::new(EgressPolicy::new(
        args.outbound.allow_list(),
        vec![listener.local_addr()?],
    ));
    let egress_metrics = config.egress.metrics();
    let worker = Worker::new(config, pool, Cipher::new(&args.secret.key));
    let stats = worker.stats();
    let shutdown = shutdown_on_signal();
    let metrics_stop = tokio_util::sync::CancellationToken::new();
    let server = tokio::spawn(shoal_worker::server::serve(
        listener,
        stats,
        vec![Box::new(egress_metrics), traces.metrics()],
        metrics_stop.clone(),
    ));
    tracing::info!(listen = %args.listen, "worker metrics at /metrics");
    let result = worker.start(shutdown)?.stopped().await;
    metrics_stop.cancel();
    let _ = server.await;
    traces.stop().await;
    result
}

pub fn worker_config(args: &WorkerArgs) -> anyhow::Result<WorkerConfig> {
    let mut config = WorkerConfig::new(&args.name);
    config.hosting = if args.all_apps {
        Hosting::AllApps
    } else {
        Hosting::Assigned
    };
    config.capacity = args.capacity;
    config.public_url = args.public_url.clone();
    config.lease_ttl = args.lease_ttl;
    config.drain_deadline = args.drain_deadline;
    config.breaker_tick = args.breaker_tick;
    config.invocation_telemetry = args.invocation_telemetry.is_on();
    config.egress = Egress::new(EgressPolicy::new(args.outbound.allow_list(), Vec::new()));
    config.max_response_bytes = args.outbound.max_response_bytes;
    if args.max_held_bytes < args.max_message_bytes {
        anyhow::bail!(
            "--max-held-bytes {}: must be at least --max-message-bytes ({})",
            args.max_held_bytes,
            args.max_message_bytes
        );
    }
    config.max_message_bytes = args.max_message_bytes;
    config.max_held_bytes = args.max_held_bytes;
    if args.local_development {
        config.host_defaults = HostDefaults::LOCAL_DEVELOPMENT;
    }
    if let Some(path) = &args.extra_ca_file {
        let pem = std::fs::read(path)
            .with_context(|| format!("--extra-ca-file {}: cannot read", path.display()))?;
        config.connector = ConnectorOptions {
            extra_root_ca_pem: Some(pem),
            ..ConnectorOptions::default()
        };
    }
    if let Some(v) = args.timings.test_retry_delay_divisor {
        config.retry_divisor = v;
    }
    if let Some(v) = args.timings.test_invisibility_ms {
        config.invisibility = v;
    }
    if let Some(v) = args.timings.test_refresh_ms {
        config.refresh_interval = v;
    }
    if let Some(v) = args.timings.test_heartbeat_ms {
        config.heartbeat_interval = Some(v);
    }
    config
        .validate()
        .map_err(|e| anyhow::anyhow!("--lease-ttl {:?}: {e}", args.lease_ttl))?;
    Ok(config)
}
