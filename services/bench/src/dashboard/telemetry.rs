//! What invocation telemetry costs dispatch: one `shoal worker` drains a preloaded queue
//! through a trivial handler (receive → POST → delete, as the queue part's Shoal figure) with
//! `--invocation-telemetry on` and with `off`. Each drain gets an Azurite of its own (Azurite
//! slows down with what it has held, so a shared one would favour whichever ran first), and
//! the order alternates from round to round so drift on the machine affects both alike. A rate
//! is over all its rounds' drains; a side that fails in a round runs in no later round.

use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::json;
use shoal_testkit::ScratchDatabase;
use shoal_testkit::azurite::Azurite;

use super::DashboardPlan;
use crate::queue::app::{self, AppBodies};
use crate::queue::figures::{NotMeasured, Rate};
use crate::queue::handler::Handler;
use crate::queue::process::Consumer;
use crate::queue::queues::{self, Drain};
use crate::server::free_addr;

const FIRST_CALL_TIMEOUT: Duration = Duration::from_secs(60);

pub async fn measure(plan: &DashboardPlan<'_>) -> Result<(Rate, Rate)> {
    anyhow::ensure!(
        plan.rounds > 0 && plan.messages > 0,
        "--rounds and --messages must be positive"
    );
    eprintln!(
        "shoal-bench: dashboard: telemetry: {} rounds of {} messages per side, each drain on a fresh Azurite",
        plan.rounds, plan.messages
    );
    let database = ScratchDatabase::create(plan.admin_url, "shoal_bench_telemetry").await?;
    let rates = rounds(plan, &database).await;
    let dropped = database.drop_now().await;
    let rates = rates?;
    dropped?;
    Ok(rates)
}

#[derive(Default)]
struct Side {
    messages: u64,
    elapsed: Duration,
    failed: Option<NotMeasured>,
}

impl Side {
    fn rate(&self) -> Rate {
        match &self.failed {
            Some(failed) => Err(failed.clone()),
            None => Ok(self.messages as f64 / self.elapsed.as_secs_f64().max(f64::MIN_POSITIVE)),
        }
    }
}

async fn rounds(plan: &DashboardPlan<'_>, database: &ScratchDatabase) -> Result<(Rate, Rate)> {
    plan.shoal.migrate(database.url()).await?;
    let handler = Handler::start().await?;
    let (mut on, mut off) = (Side::default(), Side::default());
    for round in 1..=plan.rounds {
        eprintln!(
            "shoal-bench: dashboard: telemetry round {round} of {}",
            plan.rounds
        );
        let order = if round % 2 == 1 {
            [false, true]
        } else {
            [true, false]
        };
        for telemetry in order {
            let side = if telemetry { &mut on } else { &mut off };
            if side.failed.is_some() {
                continue;
            }
            match drain(plan, database, &handler, telemetry).await {
                Ok(drain) => {
                    eprintln!(
                        "shoal-bench: dashboard:   telemetry {}: {} messages in {:.2} s, {:.0} msg/s",
                        if telemetry { "on" } else { "off" },
                        drain.messages,
                        drain.elapsed.as_secs_f64(),
                        drain.messages as f64 / drain.elapsed.as_secs_f64()
                    );
                    side.messages += drain.messages;
                    side.elapsed += drain.elapsed;
                }
                Err(error) => {
                    eprintln!(
                        "shoal-bench: dashboard: telemetry {} failed in round {round}: {error:#}",
                        if telemetry { "on" } else { "off" }
                    );
                    side.failed = Some(NotMeasured::Failed {
                        round,
                        why: format!("{error:#}"),
                    });
                }
            }
        }
    }
    Ok((on.rate(), off.rate()))
}

/// One drain on a fresh Azurite: the app written for it, the queue preloaded, then a worker
/// started with telemetry on or off and timed from the handler's first request until the
/// queue is empty.
async fn drain(
    plan: &DashboardPlan<'_>,
    database: &ScratchDatabase,
    handler: &Handler,
    telemetry: bool,
) -> Result<Drain> {
    let azurite = Azurite::start_silent().await.context("starting Azurite")?;
    let queues = queues::connect(&azurite.connection_string())?;
    let queue = queues.queue("shoal-bench-telemetry")?;
    let bodies = AppBodies {
        app: json!({
            "handler": {"url": handler.url()},
            "appSettings": {"AzureWebJobsStorage": azurite.connection_string()},
            "hostConfig": {"version": "2.0", "extensions": {"queues": {
                "batchSize": plan.batch_size,
                "newBatchThreshold": plan.new_batch_threshold,
                "messageEncoding": "none",
            }}},
        }),
        function: json!({"bindings": [
            {"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": queue.name()},
        ]}),
    };
    app::write_app(plan.shoal, database, &bodies)
        .await
        .context("writing the app")?;
    queues::preload(&queue, plan.messages).await?;
    handler.tally().reset();
    let mut command = plan.shoal.command(database.url());
    command.args(["worker", "--name", "shoal-bench-telemetry", "--all-apps"]);
    command.args(["--listen", &free_addr()?.to_string()]);
    command.args([
        "--invocation-telemetry",
        if telemetry { "on" } else { "off" },
    ]);
    let mut worker = Consumer::spawn("shoal worker", "telemetry", command)?;
    let drained = async {
        queues::wait_for_first_call(handler.tally(), FIRST_CALL_TIMEOUT, || worker.alive()).await?;
        queues::wait_until_drained(handler.tally(), &queue, plan.messages, plan.timeout, || {
            worker.alive()
        })
        .await
    }
    .await;
    if drained.is_err() {
        let tail = worker.output_tail();
        if !tail.trim().is_empty() {
            eprintln!("shoal-bench: dashboard: the worker's output ends with:\n{tail}");
        }
    }
    let stopped = worker.stop().await;
    let drained = drained?;
    stopped?;
    Ok(drained)
}
