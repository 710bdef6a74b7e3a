//! (b) Full scheduler ticks against Postgres and Azurite, run in the bench's process with the
//! scheduler crate itself (`Leader::tick`, as `shoal scheduler` runs it), on a scratch database
//! holding 10,000 apps across 100 tenants and 100 live workers.
//!
//! Every app has a queue trigger on one of 100 shared queues of one Azurite account (so the
//! metric reads dedupe to 100 per tick), a backlog of 0–64 messages (targets 0–4 at 16 per
//! instance, reachable in one decision), a limit of 1–20 and a minimum of 0–2. The first tick
//! is cold: it parses every app, reads every queue and writes every assignment and decision.
//! The ticks after it run one `--tick` apart, as the leader's loop runs them, and find nothing
//! to change. The reference is the floor of reading the catalog: one select of every app with
//! its settings and one of every function, on the same database in the same run.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use futures::StreamExt;
use shoal_connectors::StorageQueues;
use shoal_scheduler::SchedulerConfig;
use shoal_scheduler::catalog::Catalog;
use shoal_scheduler::tick::{Leader, TickContext, TickReport};
use shoal_scheduler::trigger_metrics::MetricReader;
use shoal_store::crypto::Cipher;
use shoal_store::pool::{PoolConfig, connect_lazy, migrate};
use shoal_store::{begin_platform, leadership};
use shoal_testkit::ScratchDatabase;
use shoal_testkit::azurite::Azurite;
use sqlx::{Connection, PgConnection};

use super::fleet::{self, AppShape};
use super::median;

/// Shared queues the apps' triggers name.
const QUEUES: usize = 100;
/// Enqueues in flight while preloading the backlogs.
const ENQUEUE_CONCURRENCY: usize = 64;
/// Times the reference select runs; its median is reported.
const REFERENCE_RUNS: usize = 5;

pub struct TickPlan<'a> {
    pub admin_url: &'a str,
    pub azurite: &'a Azurite,
    pub cipher: &'a Cipher,
    pub apps: usize,
    pub tenants: usize,
    pub workers: usize,
    /// Steady ticks after the cold one.
    pub ticks: usize,
}

#[derive(Clone, Debug)]
pub struct TickFigures {
    pub apps: usize,
    pub workers: usize,
    pub cold: Tick,
    /// The steady tick of median duration.
    pub steady: Tick,
    pub steady_ticks: usize,
    /// The median of one select of every app with its settings plus one of every function.
    pub catalog_select: Duration,
}

#[derive(Clone, Debug)]
pub struct Tick {
    /// Wall time of `Leader::tick`.
    pub took: Duration,
    pub report: TickReport,
}

pub async fn run(plan: &TickPlan<'_>) -> Result<TickFigures> {
    let database = ScratchDatabase::create(plan.admin_url, "shoal_bench_tick").await?;
    let measured = measure(plan, &database).await;
    let dropped = database.drop_now().await;
    let measured = measured?;
    dropped?;
    Ok(measured)
}

async fn measure(plan: &TickPlan<'_>, database: &ScratchDatabase) -> Result<TickFigures> {
    migrate(database.url()).await?;
    let started = Instant::now();
    let queue_names = preload_backlogs(plan.azurite).await?;
    let writer = fleet::writer_pool(database.url())?;
    let tenants: Vec<String> = (0..plan.tenants)
        .map(|t| format!("bench-t{t:03}"))
        .collect();
    fleet::put_tenants(&writer, &tenants).await?;
    let shapes: Vec<AppShape> = (0..plan.apps)
        .map(|i| AppShape {
            tenant: tenants[i % tenants.len()].clone(),
            app: format!("app-{i:05}"),
            handler_url: "http://127.0.0.1:9/handler".to_owned(),
            connection_string: plan.azurite.connection_string(),
            queue: queue_names[(i * 7) % QUEUES].clone(),
            limit: (i * 13 % 20) as u32 + 1,
            minimum: ((i % 3) as u32).min((i * 13 % 20) as u32 + 1),
        })
        .collect();
    fleet::put_apps(&writer, plan.cipher, &shapes).await?;
    let workers: Vec<String> = (0..plan.workers)
        .map(|w| format!("bench-w{w:03}"))
        .collect();
    // Alive for the whole part without heartbeating again.
    fleet::heartbeat_workers(&writer, &workers, 1_000, Duration::from_secs(3_600)).await?;
    writer.close().await;
    eprintln!(
        "shoal-bench: scheduler: {} apps in {} tenants, {} workers and {} queues written in {:.1} s",
        plan.apps,
        plan.tenants,
        plan.workers,
        QUEUES,
        started.elapsed().as_secs_f64()
    );

    let catalog_select = reference(database.url()).await?;

    // The scheduler's own pool, sized as `shoal scheduler` sizes it.
    let pool = connect_lazy(database.url(), &PoolConfig::default())?;
    let mut config = SchedulerConfig::new("shoal-bench");
    // The bench's queues are on loopback, as `shoal scheduler` reaches them with the bench's
    // `SHOAL_EGRESS_ALLOW`.
    config.egress = shoal_egress::Egress::new(shoal_domain::egress::EgressPolicy::new(
        shoal_domain::egress::AllowList::loopback(),
        Vec::new(),
    ));
    let epoch = renew(&pool, &config).await?;
    let mut leader = Leader::take_over(&pool, &config.name, epoch, &config).await?;
    let mut catalog = Catalog::default();
    let mut metrics = MetricReader::new(
        config.metrics.clone(),
        config.connector.clone(),
        config.egress.clone(),
    );
    let mut ticks = Vec::with_capacity(plan.ticks + 1);
    for round in 0..=plan.ticks {
        let round_started = Instant::now();
        // The loop renews the lease before each tick; that is not part of the tick.
        renew(&pool, &config).await?;
        let started = Instant::now();
        let report = leader
            .tick(TickContext {
                pool: &pool,
                cipher: plan.cipher,
                config: &config,
                catalog: &mut catalog,
                metrics: &mut metrics,
            })
            .await
            .with_context(|| format!("tick {round}"))?;
        let took = started.elapsed();
        eprintln!(
            "shoal-bench: scheduler:   tick {round}: {:.0} ms (read {:.0}, metrics {:.0}, plan {:.0}, write {:.0}); {} desired, {} placed, {} changed, {} upserts",
            ms(took),
            ms(report.read),
            ms(report.metrics),
            ms(report.plan),
            ms(report.write),
            report.total_desired,
            report.placed,
            report.changed,
            report.upserts,
        );
        if report.apps != plan.apps || report.workers != plan.workers {
            bail!(
                "tick {round} saw {} apps and {} workers, not {} and {}",
                report.apps,
                report.workers,
                plan.apps,
                plan.workers
            );
        }
        ticks.push(Tick { took, report });
        // The next tick starts one tick after this one started, as in the leader's loop.
        tokio::time::sleep(config.tick.saturating_sub(round_started.elapsed())).await;
    }
    pool.close().await;

    let cold = ticks.remove(0);
    let steady_ticks = ticks.len();
    let mut durations: Vec<Duration> = ticks.iter().map(|t| t.took).collect();
    let middle = median(&mut durations);
    let steady = ticks
        .into_iter()
        .find(|t| t.took == middle)
        .context("no steady tick was measured")?;
    Ok(TickFigures {
        apps: plan.apps,
        workers: plan.workers,
        cold,
        steady,
        steady_ticks,
        catalog_select,
    })
}

/// Creates the shared queues with backlogs of 0–64 messages.
async fn preload_backlogs(azurite: &Azurite) -> Result<Vec<String>> {
    let queues =
        StorageQueues::from_connection_string(&azurite.connection_string(), &Default::default())
            .context("resolving Azurite's connection string")?;
    let names: Vec<String> = (0..QUEUES).map(|q| format!("bench-tick-{q:03}")).collect();
    let mut enqueues = Vec::new();
    for (q, name) in names.iter().enumerate() {
        let queue = queues.queue(name)?;
        queue.create_if_missing().await?;
        let backlog = (q * 37) % 65;
        enqueues.extend((0..backlog).map(|m| (queue.clone(), m)));
    }
    let mut sent = futures::stream::iter(enqueues)
        .map(|(queue, m)| async move { queue.enqueue(&format!("backlog-{m}")).await })
        .buffer_unordered(ENQUEUE_CONCURRENCY);
    while let Some(result) = sent.next().await {
        result?;
    }
    Ok(names)
}

/// The floor of reading the catalog: every app with its settings (the store's per-app
/// aggregate of settings, without decrypting them) and every function, in two statements on
/// one connection as the database owner, so row-level security adds nothing either.
async fn reference(database_url: &str) -> Result<Duration> {
    let mut connection = PgConnection::connect(database_url).await?;
    let mut times = Vec::with_capacity(REFERENCE_RUNS);
    // One unmeasured run: the measured ones find the same warm caches as a running scheduler.
    for run in 0..=REFERENCE_RUNS {
        let started = Instant::now();
        let apps = sqlx::query(
            "select a.tenant_id, a.name, a.spec, a.etag, s.names, s.vals, s.secrets
             from apps a
             cross join lateral (
                 select coalesce(array_agg(name order by name), '{}') as names,
                        coalesce(array_agg(value order by name), '{}') as vals,
                        coalesce(array_agg(secret order by name), '{}') as secrets
                 from app_settings
                 where tenant_id = a.tenant_id and app_name = a.name
             ) s
             order by a.tenant_id, a.name",
        )
        .fetch_all(&mut connection)
        .await?;
        let functions = sqlx::query(
            "select tenant_id, app_name, name, spec, etag from functions
             order by tenant_id, app_name, name",
        )
        .fetch_all(&mut connection)
        .await?;
        let took = started.elapsed();
        if apps.is_empty() || functions.len() != apps.len() {
            bail!(
                "the reference read {} apps and {} functions",
                apps.len(),
                functions.len()
            );
        }
        if run > 0 {
            times.push(took);
        }
    }
    connection.close().await?;
    Ok(median(&mut times))
}

async fn renew(pool: &sqlx::PgPool, config: &SchedulerConfig) -> Result<i64> {
    let mut tx = begin_platform(pool).await?;
    let lease = leadership::acquire_or_renew(&mut tx, &config.name, config.lease_ttl).await?;
    shoal_store::commit(tx).await?;
    match lease {
        Some(lease) => Ok(lease.epoch),
        None => bail!("another scheduler holds the lease of the scratch database"),
    }
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}
