//! Tenants, apps and worker rows written through the store, exactly as the API and the workers
//! write them (specs parsed by the domain, settings sealed with the same key the `shoal`
//! processes get), many at a time so 10,000 apps take seconds.

use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use chrono::Utc;
use futures::StreamExt;
use serde_json::json;
use shoal_domain::apps::AppSpec;
use shoal_domain::names::TenantName;
use shoal_domain::settings::settings_to_store;
use shoal_domain::tenants::{MAX_LIMIT, TenantLimits};
use shoal_domain::workers::WorkerState;
use shoal_store::crypto::Cipher;
use shoal_store::pool::{PoolConfig, connect_lazy};
use shoal_store::tenants::TenantWrite;
use shoal_store::workers::Heartbeat;
use shoal_store::{
    Precondition, TenantId, apps, begin_platform, begin_tenant, functions, tenants, workers,
};

/// The one function every bench app has.
pub const FUNCTION: &str = "work";
/// Apps (tenants, workers) written at once.
const CONCURRENCY: usize = 16;

/// One app: a handler, `AzureWebJobsStorage`, a queue trigger on `queue`, its scale limits.
#[derive(Clone, Debug)]
pub struct AppShape {
    pub tenant: String,
    pub app: String,
    pub handler_url: String,
    pub connection_string: String,
    pub queue: String,
    pub limit: u32,
    pub minimum: u32,
}

/// A pool for writing set-up data: its own connections, so the measured parts' pools start
/// as the real processes' do.
pub fn writer_pool(database_url: &str) -> Result<sqlx::PgPool> {
    Ok(connect_lazy(
        database_url,
        &PoolConfig {
            max_connections: CONCURRENCY as u32,
            acquire_timeout: Duration::from_secs(30),
        },
    )?)
}

pub async fn put_tenants(pool: &sqlx::PgPool, names: &[String]) -> Result<()> {
    let results: Vec<Result<()>> = futures::stream::iter(names)
        .map(|name| async move {
            let mut tx = begin_platform(pool).await?;
            tenants::put(
                &mut tx,
                name,
                &TenantWrite {
                    display_name: format!("Bench {name}"),
                    // As many instances as its apps ask for: the platform's default quota
                    // would cap some tenants and change the workload the figures compare.
                    limits: TenantLimits {
                        max_instances: Some(MAX_LIMIT),
                        ..TenantLimits::default()
                    },
                    allow_host_identity: false,
                    egress_allow: Vec::new(),
                },
                Precondition::None,
            )
            .await
            .with_context(|| format!("tenant {name}"))?;
            shoal_store::commit(tx).await?;
            Ok(())
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    results.into_iter().collect()
}

/// Writes every app and its function, [`CONCURRENCY`] transactions at a time.
pub async fn put_apps(pool: &sqlx::PgPool, cipher: &Cipher, shapes: &[AppShape]) -> Result<()> {
    let mut writes = futures::stream::iter(shapes)
        .map(|shape| put_app(pool, cipher, shape))
        .buffer_unordered(CONCURRENCY);
    while let Some(written) = writes.next().await {
        written?;
    }
    Ok(())
}

/// One app with its queue-trigger function, in one tenant transaction.
pub async fn put_app(pool: &sqlx::PgPool, cipher: &Cipher, shape: &AppShape) -> Result<()> {
    let body = json!({
        "handler": {"url": shape.handler_url},
        "appSettings": {"AzureWebJobsStorage": shape.connection_string},
        "hostConfig": {
            "version": "2.0",
            "extensions": {"queues": {"messageEncoding": "none"}},
        },
        "scale": {"limit": shape.limit, "minimumInstances": shape.minimum},
    });
    let written =
        AppSpec::parse(&shape.app, &body).map_err(|e| anyhow!("app {}: {e:?}", shape.app))?;
    let settings = settings_to_store(&written.spec.app_settings, &[])
        .map_err(|e| anyhow!("app {}: {e:?}", shape.app))?;
    let tenant = TenantId::new(TenantName::parse(&shape.tenant).map_err(|e| anyhow!("{e}"))?);
    let function = json!({"bindings": [{
        "type": "queueTrigger",
        "direction": "in",
        "name": "msg",
        "queueName": shape.queue,
    }]});
    let mut tx = begin_tenant(pool, &tenant).await?;
    apps::put(
        &mut tx,
        &tenant,
        cipher,
        &shape.app,
        &written.stored,
        &settings,
        Precondition::None,
    )
    .await
    .with_context(|| format!("app {}/{}", shape.tenant, shape.app))?;
    functions::put(
        &mut tx,
        &tenant,
        &shape.app,
        FUNCTION,
        &function,
        Precondition::None,
    )
    .await
    .with_context(|| format!("function {}/{}/{FUNCTION}", shape.tenant, shape.app))?;
    shoal_store::commit(tx).await?;
    Ok(())
}

/// Registers workers the way a worker's heartbeat does, alive for `lease_ttl`.
pub async fn heartbeat_workers(
    pool: &sqlx::PgPool,
    names: &[String],
    capacity: u32,
    lease_ttl: Duration,
) -> Result<()> {
    let started_at = Utc::now();
    let mut tx = begin_platform(pool).await?;
    for name in names {
        workers::heartbeat(
            &mut tx,
            &Heartbeat {
                name,
                state: WorkerState::Running,
                version: "shoal-bench",
                started_at,
                listeners: &[],
                capacity,
                lease_ttl,
                // The fleet's apps scale on storage queues, whose targets no limit lowers.
                hold_limit: None,
            },
        )
        .await?;
    }
    shoal_store::commit(tx).await?;
    Ok(())
}
