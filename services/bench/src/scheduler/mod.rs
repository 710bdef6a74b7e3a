//! The scheduler figures, each against a reference measured in the same run:
//!
//! * (a) [`pure`]: `decide` for 10,000 apps and one `place` on 100 workers, cold and steady,
//!   against plain rendezvous placement by sorting every score;
//! * (b) [`tick`]: full `Leader::tick`s against Postgres and Azurite with 10,000 apps, the cold
//!   first one and the median steady one, against one select of the whole catalog;
//! * (c) [`reaction`]: with the real `shoal scheduler --tick 1s` and three `shoal worker`
//!   processes, how soon a backlog on an app scaled to zero is placed, claimed and delivered,
//!   against the tick;
//! * (d) [`reaction`]: how soon the instances of a SIGKILLed worker are claimed by another
//!   worker, against the workers' lease TTL.
//!
//! One Azurite serves (b)–(d); (b) and (c)–(d) each have their own scratch database. Processes,
//! Azurite and databases go away at the end, also when something failed.

mod cluster;
mod fleet;
pub mod pure;
pub mod reaction;
pub mod tick;

use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use shoal_connectors::{ConnectorOptions, StorageQueues};
use shoal_store::crypto::{Cipher, SecretKey};
use shoal_testkit::ScratchDatabase;
use shoal_testkit::azurite::Azurite;

use crate::queue::handler::Handler;
use crate::server::ShoalBin;
use cluster::{Cluster, Observer};
use fleet::AppShape;
use reaction::{FAILOVER_APP, FailoverFigures, REACTION_APP, ReactionFigures, TENANT};

pub struct SchedulerPlan<'a> {
    pub shoal: &'a ShoalBin,
    pub admin_url: &'a str,
    pub apps: usize,
    pub tenants: usize,
    pub workers: usize,
    /// Repetitions of (a).
    pub repetitions: usize,
    /// Steady ticks of (b) after the cold one.
    pub ticks: usize,
    /// Rounds of (c) and of (d).
    pub rounds: u32,
    /// Messages (c) enqueues per round.
    pub messages: u64,
    /// `shoal scheduler --tick` in (c) and (d).
    pub tick: Duration,
    /// `--scale-in-window`: how soon (c)'s app goes back to zero between rounds.
    pub scale_in_window: Duration,
    /// `shoal worker --lease-ttl` in (c) and (d).
    pub worker_lease_ttl: Duration,
}

/// What was measured; a part that failed leaves its figure out.
#[derive(Default)]
pub struct SchedulerFigures {
    pub pure: Option<pure::PureFigures>,
    pub tick: Option<tick::TickFigures>,
    pub reaction: Option<ReactionFigures>,
    pub failover: Option<FailoverFigures>,
}

/// (c) starts this many workers, (d) one more.
const REACTION_WORKERS: usize = 3;

pub async fn run(plan: &SchedulerPlan<'_>, figures: &mut SchedulerFigures) -> Result<()> {
    if plan.apps == 0 || plan.workers == 0 || plan.tenants == 0 || plan.repetitions == 0 {
        anyhow::bail!("--scheduler-apps, -workers, -tenants and -repetitions must be positive");
    }
    if plan.ticks == 0 || plan.rounds == 0 || plan.messages == 0 {
        anyhow::bail!(
            "--scheduler-ticks, --scheduler-rounds and --reaction-messages must be positive"
        );
    }
    eprintln!(
        "shoal-bench: scheduler: (a) decide + place, {} apps on {} workers, {} repetitions",
        plan.apps, plan.workers, plan.repetitions
    );
    let (apps, workers, repetitions) = (plan.apps, plan.workers, plan.repetitions);
    let pure = tokio::task::spawn_blocking(move || pure::run(apps, workers, repetitions))
        .await
        .context("the pure measurement panicked")?;
    eprintln!(
        "shoal-bench: scheduler:   {} instances placed; decide {:?}, place cold {:?}, steady {:?}, naive {:?}",
        pure.instances, pure.decide, pure.place_cold, pure.place_steady, pure.naive
    );
    figures.pure = Some(pure);

    let azurite = Azurite::start_silent().await.context("starting Azurite")?;
    let key = SecretKey::from_base64(plan.shoal.secret_key()).map_err(|e| anyhow!(e))?;
    let cipher = Cipher::new(&key);
    eprintln!(
        "shoal-bench: scheduler: (b) full ticks, {} apps in {} tenants on {} workers",
        plan.apps, plan.tenants, plan.workers
    );
    figures.tick = Some(
        tick::run(&tick::TickPlan {
            admin_url: plan.admin_url,
            azurite: &azurite,
            cipher: &cipher,
            apps: plan.apps,
            tenants: plan.tenants,
            workers: plan.workers,
            ticks: plan.ticks,
        })
        .await?,
    );

    let database = ScratchDatabase::create(plan.admin_url, "shoal_bench_cluster").await?;
    let measured = processes(plan, &azurite, &cipher, &database, figures).await;
    let dropped = database.drop_now().await;
    measured?;
    dropped
}

/// (c) and (d) on one set of processes.
async fn processes(
    plan: &SchedulerPlan<'_>,
    azurite: &Azurite,
    cipher: &Cipher,
    database: &ScratchDatabase,
    figures: &mut SchedulerFigures,
) -> Result<()> {
    plan.shoal.migrate(database.url()).await?;
    let handler = Handler::start().await?;
    let queues = StorageQueues::from_connection_string(
        &azurite.connection_string(),
        &ConnectorOptions::default(),
    )?;
    let shape = |app: &str, minimum: u32| AppShape {
        tenant: TENANT.to_owned(),
        app: app.to_owned(),
        handler_url: handler.url(),
        connection_string: azurite.connection_string(),
        queue: format!("bench-{app}"),
        limit: REACTION_WORKERS as u32,
        minimum,
    };
    let reaction_queue = queues.queue(&format!("bench-{REACTION_APP}"))?;
    reaction_queue.create_if_missing().await?;
    queues
        .queue(&format!("bench-{FAILOVER_APP}"))?
        .create_if_missing()
        .await?;
    let writer = fleet::writer_pool(database.url())?;
    fleet::put_tenants(&writer, &[TENANT.to_owned()]).await?;
    fleet::put_app(&writer, cipher, &shape(REACTION_APP, 0)).await?;
    let observer = Observer::connect(database.url()).await?;

    let mut cluster = Cluster::new(plan.shoal, database.url());
    let mut measured = async {
        for w in 1..=REACTION_WORKERS {
            cluster.start_worker(&format!("bench-w{w}"), plan.worker_lease_ttl)?;
        }
        reaction::wait_for_workers(&mut cluster, &observer, REACTION_WORKERS as i64).await?;
        cluster.start_scheduler(plan.tick, plan.scale_in_window)?;
        eprintln!(
            "shoal-bench: scheduler: (c) reaction, shoal scheduler --tick {:?} and {REACTION_WORKERS} workers, {} rounds of {} messages",
            plan.tick, plan.rounds, plan.messages
        );
        figures.reaction = Some(
            reaction::reaction(
                &mut cluster,
                &observer,
                &handler,
                &reaction_queue,
                plan.messages,
                plan.rounds,
                plan.tick,
            )
            .await?,
        );

        let workers = REACTION_WORKERS + 1;
        eprintln!(
            "shoal-bench: scheduler: (d) failover, {REACTION_WORKERS} instances on {workers} workers with --lease-ttl {:?}, {} rounds",
            plan.worker_lease_ttl, plan.rounds
        );
        fleet::put_app(
            &writer,
            cipher,
            &shape(FAILOVER_APP, REACTION_WORKERS as u32),
        )
        .await?;
        cluster.start_worker(&format!("bench-w{workers}"), plan.worker_lease_ttl)?;
        figures.failover = Some(
            reaction::failover(
                &mut cluster,
                &observer,
                REACTION_WORKERS,
                workers as i64,
                plan.worker_lease_ttl,
                plan.rounds,
            )
            .await?,
        );
        anyhow::Ok(())
    }
    .await;
    if let Err(error) = measured {
        measured = Err(anyhow!(
            "{error:#}; the processes' output ends with:\n{}",
            cluster.output_tails()
        ));
    }
    let stopped = cluster.stop().await;
    observer.close().await;
    writer.close().await;
    measured.and(stopped)
}

/// The middle value (the upper one of an even count); zero for none.
pub fn median(values: &mut [Duration]) -> Duration {
    values.sort_unstable();
    values.get(values.len() / 2).copied().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_takes_the_middle_value() {
        let ms = Duration::from_millis;
        assert_eq!(median(&mut []), Duration::ZERO);
        assert_eq!(median(&mut [ms(3), ms(1), ms(2)]), ms(2));
        assert_eq!(median(&mut [ms(4), ms(1), ms(3), ms(2)]), ms(3));
    }
}
