//! The breaker part's rounds: each on a fresh Azurite and a fresh failing handler, the
//! reaction (with its pause-by-hand reference) then the counting cost off and on.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use shoal_domain::circuit_breaker::{BreakerCause, BreakerState};
use shoal_domain::names::TenantName;
use shoal_store::breakers::{self, FunctionRef};
use shoal_store::pool::{PoolConfig, connect_lazy};
use shoal_store::{TenantId, begin_tenant};
use shoal_testkit::ScratchDatabase;
use shoal_testkit::azurite::Azurite;

use super::{BreakerFigures, BreakerPlan, Reaction};
use crate::queue::app::{self, AppBodies};
use crate::queue::figures::NotMeasured;
use crate::queue::handler::Handler;
use crate::queue::process::Consumer;
use crate::queue::queues::{connect, preload, wait_for_first_call};
use crate::server::free_addr;

/// The reference document's threshold: the breaker opens at the 101st final failure.
const THRESHOLD: usize = 100;
const TICK: &str = "1s";
const WORKERS: usize = 3;
/// No receive may follow the last one for this long, or the listeners did not stop.
const QUIET: Duration = Duration::from_secs(3);
const FIRST_CALL_TIMEOUT: Duration = Duration::from_secs(60);
const OPEN_TIMEOUT: Duration = Duration::from_secs(60);

pub async fn all(plan: &BreakerPlan<'_>, database: &ScratchDatabase) -> Result<BreakerFigures> {
    plan.shoal.migrate(database.url()).await?;
    let pool = connect_lazy(database.url(), &PoolConfig::default())?;
    let mut reaction: Reaction = Ok(Duration::ZERO);
    let mut paused: Reaction = Ok(Duration::ZERO);
    let (mut on, mut off) = (Counted::default(), Counted::default());
    for round in 1..=plan.rounds {
        eprintln!("shoal-bench: breaker: round {round} of {}", plan.rounds);
        let azurite = Azurite::start().await.context("starting Azurite")?;
        let handler = Handler::failing().await?;
        let context = Round {
            plan,
            database,
            pool: &pool,
            azurite: &azurite,
            handler: &handler,
        };
        if paused.is_ok() {
            let measured = context.paused_reaction().await;
            slowest(&mut paused, measured, round, "pause by hand");
        }
        if reaction.is_ok() {
            let measured = context.threshold_reaction().await;
            slowest(&mut reaction, measured, round, "threshold");
        }
        // Each counting figure on an Azurite of its own (one that holds more messages is
        // slower), in alternating order so drift on the machine affects both alike.
        let order = if round % 2 == 1 {
            [false, true]
        } else {
            [true, false]
        };
        for counting in order {
            let figure = if counting { &mut on } else { &mut off };
            if figure.failed.is_none() {
                let measured = async {
                    let azurite = Azurite::start().await.context("starting Azurite")?;
                    let context = Round {
                        azurite: &azurite,
                        ..context
                    };
                    context.failure_rate(counting).await
                };
                figure.record(measured.await, round, counting);
            }
        }
        if reaction.is_err() {
            break;
        }
    }
    pool.close().await;
    Ok(BreakerFigures {
        rounds: plan.rounds,
        reaction,
        paused,
        counting_on: on.rate(),
        counting_off: off.rate(),
    })
}

fn slowest(figure: &mut Reaction, measured: Result<Duration>, round: u32, what: &str) {
    match measured {
        Ok(took) => {
            eprintln!(
                "shoal-bench: breaker:   {what}: last receive {:.2} s after",
                took.as_secs_f64()
            );
            if let Ok(slowest) = figure {
                *slowest = (*slowest).max(took);
            }
        }
        Err(error) => {
            eprintln!("shoal-bench: breaker: {what} failed in round {round}: {error:#}");
            *figure = Err(NotMeasured::Failed {
                round,
                why: format!("{error:#}"),
            });
        }
    }
}

#[derive(Default)]
struct Counted {
    invocations: u64,
    elapsed: Duration,
    failed: Option<NotMeasured>,
}

impl Counted {
    fn record(&mut self, measured: Result<(u64, Duration)>, round: u32, counting: bool) {
        match measured {
            Ok((invocations, elapsed)) => {
                eprintln!(
                    "shoal-bench: breaker:   counting {}: {:.0} failed invocations/s",
                    if counting { "on" } else { "off" },
                    invocations as f64 / elapsed.as_secs_f64()
                );
                self.invocations += invocations;
                self.elapsed += elapsed;
            }
            Err(error) => {
                eprintln!(
                    "shoal-bench: breaker: counting figure failed in round {round}: {error:#}"
                );
                self.failed = Some(NotMeasured::Failed {
                    round,
                    why: format!("{error:#}"),
                });
            }
        }
    }

    fn rate(&self) -> Result<f64, NotMeasured> {
        match &self.failed {
            Some(failed) => Err(failed.clone()),
            None => Ok(self.invocations as f64 / self.elapsed.as_secs_f64().max(f64::MIN_POSITIVE)),
        }
    }
}

#[derive(Clone, Copy)]
struct Round<'a> {
    plan: &'a BreakerPlan<'a>,
    database: &'a ScratchDatabase,
    pool: &'a sqlx::PgPool,
    azurite: &'a Azurite,
    handler: &'a Handler,
}

impl Round<'_> {
    /// The reference: the workers fail through the queue with a breaker that does not count;
    /// it is paused by hand, and the last receive is timed from that moment.
    async fn paused_reaction(&self) -> Result<Duration> {
        let queue = "breaker-paused";
        self.prepare(queue, json!({"enabled": false}), "00:00:05", 5)
            .await?;
        let mut workers = self.workers(WORKERS)?;
        let measured = async {
            wait_for_first_call(self.handler.tally(), FIRST_CALL_TIMEOUT, || {
                workers.iter_mut().try_for_each(Consumer::alive)
            })
            .await?;
            // While most messages are still visible, so every listener keeps receiving: the
            // pause must stop receives, not a back-off after an emptied queue.
            let before = self.receives(queue);
            tokio::time::sleep(Duration::from_millis(300)).await;
            if self.receives(queue) == before {
                bail!("the listeners were not receiving when the function was paused");
            }
            let paused_at = Instant::now();
            self.set_by_hand(BreakerCause::Paused).await?;
            let last = self
                .last_receive(queue, paused_at, || async { Ok(true) })
                .await?;
            Ok(last.saturating_duration_since(paused_at))
        }
        .await;
        stop(workers).await;
        measured
    }

    /// The figure: more than the threshold of final failures opens the breaker; the last
    /// receive is timed from the threshold-crossing request.
    async fn threshold_reaction(&self) -> Result<Duration> {
        let queue = "breaker-threshold";
        let settings =
            json!({"failureThreshold": THRESHOLD, "window": "00:00:30", "halfOpen": false});
        self.prepare(queue, settings, "00:00:05", 5).await?;
        let mut workers = self.workers(WORKERS)?;
        let started = Instant::now();
        let measured = async {
            wait_for_first_call(self.handler.tally(), FIRST_CALL_TIMEOUT, || {
                workers.iter_mut().try_for_each(Consumer::alive)
            })
            .await?;
            let last = self
                .last_receive(queue, started, || async { self.is_open().await })
                .await?;
            let Some(crossing) = self.handler.tally().arrival(THRESHOLD + 1) else {
                bail!("the breaker opened before {} failures", THRESHOLD + 1);
            };
            Ok(last.saturating_duration_since(crossing))
        }
        .await;
        stop(workers).await;
        measured
    }

    /// Failed invocations per second through one worker, with the breaker counting or not;
    /// failed messages are visible again at once and never poisoned.
    async fn failure_rate(&self, counting: bool) -> Result<(u64, Duration)> {
        let (queue, settings) = if counting {
            ("breaker-on", json!({"failureThreshold": 1_000_000}))
        } else {
            ("breaker-off", json!({"enabled": false}))
        };
        self.prepare(queue, settings, "00:00:00", 1_000_000).await?;
        let mut workers = self.workers(1)?;
        let measured = async {
            wait_for_first_call(self.handler.tally(), FIRST_CALL_TIMEOUT, || {
                workers.iter_mut().try_for_each(Consumer::alive)
            })
            .await?;
            tokio::time::sleep(Duration::from_secs(2)).await;
            let (from, at) = (self.handler.tally().requests(), Instant::now());
            tokio::time::sleep(self.plan.measure).await;
            workers.iter_mut().try_for_each(Consumer::alive)?;
            if counting && self.is_open().await? {
                bail!("the breaker opened: the counting figure never should");
            }
            Ok((self.handler.tally().requests() - from, at.elapsed()))
        }
        .await;
        stop(workers).await;
        measured
    }

    /// Writes the app for `queue` with these breaker settings, closes the breaker, resets the
    /// handler and preloads the queue.
    async fn prepare(
        &self,
        queue: &str,
        breaker: Value,
        visibility: &str,
        max_dequeue_count: u32,
    ) -> Result<()> {
        let bodies = AppBodies {
            app: json!({
                "handler": {"url": self.handler.url()},
                "appSettings": {"AzureWebJobsStorage": self.azurite.connection_string()},
                "hostConfig": {"version": "2.0", "extensions": {"queues": {
                    "batchSize": 16, "newBatchThreshold": 8, "messageEncoding": "none",
                    "visibilityTimeout": visibility, "maxDequeueCount": max_dequeue_count,
                }}},
            }),
            function: json!({
                "bindings": [{"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": queue}],
                "circuitBreaker": breaker,
            }),
        };
        app::write_app(self.plan.shoal, self.database, &bodies)
            .await
            .context("writing the app")?;
        self.set_by_hand(BreakerCause::Resumed).await?;
        self.handler.tally().reset();
        let queues = connect(&self.azurite.connection_string())?;
        preload(&queues.queue(queue)?, self.plan.messages).await
    }

    fn workers(&self, count: usize) -> Result<Vec<Consumer>> {
        (0..count)
            .map(|i| {
                let mut command = self.plan.shoal.command(self.database.url());
                command.args(["worker", "--name", &format!("breaker-{i}"), "--all-apps"]);
                command.args([
                    "--breaker-tick",
                    TICK,
                    "--listen",
                    &free_addr()?.to_string(),
                ]);
                Consumer::spawn("shoal worker", &format!("breaker-{i}"), command)
            })
            .collect()
    }

    /// Watches Azurite's access log for receives on `queue` until `done` holds and none came
    /// for [`QUIET`]; the last one's arrival (`since` if none came at all).
    async fn last_receive<F, Fut>(&self, queue: &str, since: Instant, done: F) -> Result<Instant>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<bool>>,
    {
        let receives = || self.receives(queue);
        let deadline = Instant::now() + OPEN_TIMEOUT;
        let (mut seen, mut last) = (receives(), since);
        let mut done_at: Option<Instant> = None;
        loop {
            let now = receives();
            if now != seen {
                (seen, last) = (now, Instant::now());
            }
            if done_at.is_none() && done().await? {
                done_at = Some(Instant::now());
            }
            if let Some(at) = done_at
                && Instant::now() >= at.max(last) + QUIET
            {
                return Ok(last);
            }
            if Instant::now() > deadline {
                bail!(match done_at {
                    None => "the breaker did not open".to_owned(),
                    Some(_) => "the listeners kept receiving".to_owned(),
                });
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Receive calls on `queue` so far, from Azurite's access log (peeks excluded).
    fn receives(&self, queue: &str) -> usize {
        let needle = format!("GET /devstoreaccount1/{queue}/messages?");
        self.azurite
            .requests_matching(|line| line.contains(&needle) && !line.contains("peekonly"))
    }

    async fn is_open(&self) -> Result<bool> {
        let tenant = tenant()?;
        let mut tx = begin_tenant(self.pool, &tenant).await?;
        let breaker = breakers::get(&mut tx, function_ref(&tenant)).await?;
        shoal_store::commit(tx).await?;
        Ok(breaker.state == BreakerState::Open)
    }

    async fn set_by_hand(&self, cause: BreakerCause) -> Result<()> {
        let tenant = tenant()?;
        let mut tx = begin_tenant(self.pool, &tenant).await?;
        breakers::set_by_hand(&mut tx, function_ref(&tenant), cause, "shoal-bench").await?;
        shoal_store::commit(tx).await?;
        Ok(())
    }
}

fn tenant() -> Result<TenantId> {
    Ok(TenantId::new(
        TenantName::parse(app::TENANT).map_err(anyhow::Error::msg)?,
    ))
}

fn function_ref(tenant: &TenantId) -> FunctionRef<'_> {
    FunctionRef {
        tenant,
        app: app::APP,
        function: app::FUNCTION,
    }
}

async fn stop(workers: Vec<Consumer>) {
    for worker in workers {
        if let Err(error) = worker.stop().await {
            eprintln!("shoal-bench: breaker: stopping a worker: {error:#}");
        }
    }
}
