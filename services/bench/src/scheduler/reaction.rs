//! (c) How soon a backlog on an idle app (scaled to zero) gets an instance, and (d) how soon a
//! SIGKILLed worker's instances run elsewhere, with the real `shoal scheduler` and
//! `shoal worker` processes on a scratch database, Azurite and the bench's trivial handler.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use futures::StreamExt;
use shoal_connectors::Queue;

use super::cluster::{Cluster, Observer};
use super::median;
use crate::queue::handler::Handler;

/// The tenant of the apps of (c) and (d).
pub const TENANT: &str = "bench";
/// (c)'s app: minimumInstances 0, limit 3.
pub const REACTION_APP: &str = "reaction";
/// (d)'s app: minimumInstances 3, limit 3.
pub const FAILOVER_APP: &str = "failover";
/// Enqueues in flight while putting the backlog on the queue.
const ENQUEUE_CONCURRENCY: usize = 64;
/// How long a step may take before the run fails (far beyond the goals).
const STEP_TIMEOUT: Duration = Duration::from_secs(60);

/// (c), one round: times from the first message on the queue.
#[derive(Clone, Copy, Debug)]
pub struct Reaction {
    /// The first assignments row of the app.
    pub placed: Duration,
    /// The first claim by the assigned worker: its listener is starting.
    pub claimed: Duration,
    /// The handler's first request.
    pub delivered: Duration,
}

#[derive(Clone, Debug)]
pub struct ReactionFigures {
    pub tick: Duration,
    pub messages: u64,
    pub rounds: Vec<Reaction>,
}

impl ReactionFigures {
    /// The fastest and the slowest first delivery.
    pub fn delivered_range(&self) -> (Duration, Duration) {
        let times = self.rounds.iter().map(|r| r.delivered);
        (
            times.clone().min().unwrap_or_default(),
            times.max().unwrap_or_default(),
        )
    }

    /// The median of each time over the rounds (each on its own).
    pub fn median(&self) -> Reaction {
        let pick = |f: fn(&Reaction) -> Duration| {
            let mut times: Vec<Duration> = self.rounds.iter().map(f).collect();
            median(&mut times)
        };
        Reaction {
            placed: pick(|r| r.placed),
            claimed: pick(|r| r.claimed),
            delivered: pick(|r| r.delivered),
        }
    }
}

#[derive(Clone, Debug)]
pub struct FailoverFigures {
    /// The workers' `--lease-ttl`.
    pub lease_ttl: Duration,
    /// Per round: from the SIGKILL until every instance the worker held was claimed by another.
    pub moves: Vec<Duration>,
}

impl FailoverFigures {
    pub fn median(&self) -> Duration {
        median(&mut self.moves.clone())
    }

    pub fn max(&self) -> Duration {
        self.moves.iter().copied().max().unwrap_or_default()
    }
}

/// Waits until `workers` workers have registered and are live.
pub async fn wait_for_workers(
    cluster: &mut Cluster<'_>,
    observer: &Observer,
    workers: i64,
) -> Result<()> {
    cluster
        .until(
            &format!("{workers} live workers"),
            STEP_TIMEOUT,
            async |_| Ok((observer.live_workers().await? == workers).then_some(())),
        )
        .await
}

/// Waits until the scheduler leads and has ticked, and the app has no instance left: not
/// desired, not assigned, not claimed.
pub async fn wait_until_idle(
    cluster: &mut Cluster<'_>,
    observer: &Observer,
    app: &str,
    timeout: Duration,
) -> Result<()> {
    cluster
        .until(
            &format!("app {app} scaled to zero"),
            timeout,
            async |cluster| {
                let idle = cluster.scheduler_ticked().await?
                    && observer.desired(TENANT, app).await?.unwrap_or(0) == 0
                    && observer.assignments(TENANT, app).await?.is_empty()
                    && observer.claims(TENANT, app).await?.is_empty();
                Ok(idle.then_some(()))
            },
        )
        .await
}

/// (c): `rounds` times, on the idle app, enqueue `messages` and time placement, claim and first
/// delivery from the first message on the queue; then wait for the backlog to be processed and
/// the app to scale back to zero.
pub async fn reaction(
    cluster: &mut Cluster<'_>,
    observer: &Observer,
    handler: &Handler,
    queue: &Queue,
    messages: u64,
    rounds: u32,
    tick: Duration,
) -> Result<ReactionFigures> {
    let mut figures = ReactionFigures {
        tick,
        messages,
        rounds: Vec::new(),
    };
    for round in 1..=rounds {
        let idle_since = Instant::now();
        wait_until_idle(cluster, observer, REACTION_APP, STEP_TIMEOUT).await?;
        if round > 1 {
            eprintln!(
                "shoal-bench: scheduler:   back to zero instances {:.1} s after the backlog was processed",
                idle_since.elapsed().as_secs_f64()
            );
        }
        handler.tally().reset();
        // The clock starts once the first message is on the queue: from then on there is a
        // backlog to scale on (any length asks for one instance), and a slow enqueue of the
        // rest does not count against the scheduler.
        queue.enqueue("reaction-0").await?;
        let started = Instant::now();
        enqueue(queue, 1..messages).await?;
        let enqueued = started.elapsed();
        let mut placed = None;
        let mut claimed = None;
        let reaction = cluster
            .until(
                "an instance placed, claimed and delivering",
                STEP_TIMEOUT,
                async |_| {
                    if placed.is_none()
                        && !observer.assignments(TENANT, REACTION_APP).await?.is_empty()
                    {
                        placed = Some(started.elapsed());
                    }
                    if claimed.is_none()
                        && !observer
                            .claimed_as_assigned(TENANT, REACTION_APP)
                            .await?
                            .is_empty()
                    {
                        claimed = Some(started.elapsed());
                    }
                    let delivered = handler
                        .tally()
                        .first()
                        .map(|at| at.saturating_duration_since(started));
                    Ok(match (placed, claimed, delivered) {
                        (Some(placed), Some(claimed), Some(delivered)) => Some(Reaction {
                            // A poll may see a later step first: no step comes before the one
                            // it depends on.
                            placed: placed.min(claimed).min(delivered),
                            claimed: claimed.min(delivered),
                            delivered,
                        }),
                        _ => None,
                    })
                },
            )
            .await?;
        eprintln!(
            "shoal-bench: scheduler:   reaction round {round}: the rest enqueued in {:.2} s, placed {:.2} s, claimed {:.2} s, first delivery {:.2} s",
            enqueued.as_secs_f64(),
            reaction.placed.as_secs_f64(),
            reaction.claimed.as_secs_f64(),
            reaction.delivered.as_secs_f64()
        );
        figures.rounds.push(reaction);
        cluster
            .until("the backlog processed", STEP_TIMEOUT, async |_| {
                Ok((handler.tally().requests() >= messages).then_some(()))
            })
            .await?;
    }
    wait_until_idle(cluster, observer, REACTION_APP, STEP_TIMEOUT).await?;
    Ok(figures)
}

async fn enqueue(queue: &Queue, messages: std::ops::Range<u64>) -> Result<()> {
    let mut sent = futures::stream::iter(messages)
        .map(|m| async move { queue.enqueue(&format!("reaction-{m}")).await })
        .buffer_unordered(ENQUEUE_CONCURRENCY);
    while let Some(result) = sent.next().await {
        result?;
    }
    Ok(())
}

/// Waits until the failover app's `instances` run where they are assigned and `workers`
/// workers are live.
pub async fn wait_until_settled(
    cluster: &mut Cluster<'_>,
    observer: &Observer,
    instances: usize,
    workers: i64,
) -> Result<()> {
    cluster
        .until(
            &format!("{instances} instances claimed as assigned on {workers} live workers"),
            STEP_TIMEOUT,
            async |_| {
                let settled = observer.live_workers().await? == workers
                    && observer.assignments(TENANT, FAILOVER_APP).await?.len() == instances
                    && observer
                        .claimed_as_assigned(TENANT, FAILOVER_APP)
                        .await?
                        .len()
                        == instances;
                Ok(settled.then_some(()))
            },
        )
        .await
}

/// (d): `rounds` times, SIGKILL the worker holding the failover app's instance 0 and time
/// until every instance it held is claimed by another worker; a new worker then replaces it.
pub async fn failover(
    cluster: &mut Cluster<'_>,
    observer: &Observer,
    instances: usize,
    workers: i64,
    lease_ttl: Duration,
    rounds: u32,
) -> Result<FailoverFigures> {
    let mut figures = FailoverFigures {
        lease_ttl,
        moves: Vec::new(),
    };
    for round in 1..=rounds {
        wait_until_settled(cluster, observer, instances, workers).await?;
        let claims = observer.claims(TENANT, FAILOVER_APP).await?;
        let Some((_, victim)) = claims.first().cloned() else {
            bail!("the failover app has no claimed instance");
        };
        let held: Vec<i32> = claims
            .iter()
            .filter(|(_, worker)| *worker == victim)
            .map(|(instance, _)| *instance)
            .collect();
        let killed = Instant::now();
        cluster.kill_worker(&victim).await?;
        let took = cluster
            .until(
                &format!("the instances of {victim} claimed elsewhere"),
                lease_ttl * 3 + STEP_TIMEOUT,
                async |_| {
                    let claims = observer.claims(TENANT, FAILOVER_APP).await?;
                    let moved = held.iter().all(|instance| {
                        claims
                            .iter()
                            .any(|(i, worker)| i == instance && *worker != victim)
                    });
                    Ok(moved.then(|| killed.elapsed()))
                },
            )
            .await?;
        eprintln!(
            "shoal-bench: scheduler:   failover round {round}: {victim} killed, its {} instance(s) claimed elsewhere after {:.2} s",
            held.len(),
            took.as_secs_f64()
        );
        figures.moves.push(took);
        cluster
            .start_worker(&format!("bench-r{round}"), lease_ttl)
            .context("starting a replacement worker")?;
    }
    Ok(figures)
}
