//! `shoal serve`: the API.

use anyhow::Context;
use shoal_api::dashboard::DashboardConfig;
use shoal_api::external_issuers::ExternalIssuersConfig;
use shoal_api::issuance::TokenConfig;
use shoal_api::{ApiConfig, Application, IdentityConfig, OutboundConfig};
use shoal_store::pool::{PoolConfig, migrate};

use crate::cli::ServeArgs;
use crate::signals::shutdown_on_signal;
use crate::traces::Traces;

pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    let traces = Traces::start("shoal-api", &args.tracing)?;
    shoal_api::external_issuers::check_distinct(
        &args.external.external_issuers,
        &args.issuer.issuer,
    )
    .map_err(|e| anyhow::anyhow!("--external-issuer {e}"))?;
    if args.migrate {
        migrate(args.database.url.expose())
            .await
            .context("migrating the database")?;
    }
    let web_dir = args.dashboard.web_dir()?;
    match &web_dir {
        Some(dir) => tracing::info!(dir = %dir.display(), "serving the dashboard at /"),
        None => tracing::info!(
            "no dashboard at {} (--web-dir); / serves none",
            crate::cli::DEFAULT_WEB_DIR
        ),
    }
    let config = ApiConfig {
        listen: args.listen,
        database_url: args.database.url,
        secret_key: args.secret.key,
        issuer: args.issuer.issuer,
        audience: args.issuer.audience,
        max_body_bytes: args.max_body_bytes,
        identity: IdentityConfig {
            tokens: TokenConfig {
                public_url: args.public_url,
                lifetime: args.token_lifetime,
                ..TokenConfig::default()
            },
            external_issuers: ExternalIssuersConfig {
                issuers: args.external.external_issuers,
                ..ExternalIssuersConfig::default()
            },
        },
        dashboard: DashboardConfig {
            dir: web_dir,
            trace_viewer_url: args.dashboard.trace_viewer_url(),
            environment: args.dashboard.environment,
            dev_sign_in: false,
        },
        outbound: OutboundConfig {
            egress_allow: args.outbound.allow_list(),
            max_response_bytes: args.outbound.max_response_bytes,
        },
        pool: PoolConfig {
            max_connections: args
                .db_max_connections
                .unwrap_or_else(shoal_store::pool::default_max_connections),
            ..PoolConfig::default()
        },
        limits: args.limits.limits(),
        record_invocations_as: args
            .invocation_telemetry
            .is_on()
            .then(|| format!("api-{}", crate::process_name::host_and_pid("shoal"))),
    };
    log_egress(&config.outbound);
    let app = Application::build_with_collectors(config, vec![traces.metrics()]).await?;
    tracing::info!(port = app.port(), "serving the API");
    let shutdown = shutdown_on_signal();
    let served = app.run_until_stopped(shutdown).await;
    traces.stop().await;
    served?;
    tracing::info!("API stopped");
    Ok(())
}

/// What the egress policy allows beyond public addresses, said once at start-up.
fn log_egress(outbound: &OutboundConfig) {
    match outbound.egress_allow.is_empty() {
        true => tracing::info!(
            "egress: only public addresses are reachable for tenants' handlers (--egress-allow)"
        ),
        false => {
            tracing::info!(allow = %outbound.egress_allow, "egress: public addresses and the allowed entries are reachable for tenants' handlers")
        }
    }
}
