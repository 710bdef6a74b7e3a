//! What one worker setting costs dispatch: one `shoal worker` drains a preloaded queue through
//! a trivial handler (receive → POST → delete, as the queue part's Shoal figure) with the
//! setting on and with it off. Each drain gets an Azurite of its own (Azurite slows down with
//! what it has held, so a shared one would favour whichever ran first), and the order
//! alternates from round to round so drift on the machine affects both alike. A rate is over
//! all its rounds' drains; a side that fails in a round runs in no later round.
//!
//! The dashboard part's invocation telemetry and the tracing part's trace export are such
//! settings; a [`Switch`] says how the worker is started for each side and sees the worker's
//! `/metrics` after each drain.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use http::{Method, StatusCode};
use serde_json::json;
use shoal_testkit::ScratchDatabase;
use shoal_testkit::azurite::Azurite;
use tokio::process::Command;

use super::app::{self, AppBodies};
use super::figures::{NotMeasured, Rate};
use super::handler::Handler;
use super::process::Consumer;
use super::queues::{self, Drain};
use crate::http::Connection;
use crate::server::{ShoalBin, free_addr};

const FIRST_CALL_TIMEOUT: Duration = Duration::from_secs(60);

pub struct PairedPlan<'a> {
    pub shoal: &'a ShoalBin,
    pub admin_url: &'a str,
    /// The part and the figure, for log lines; the figure also names the scratch database,
    /// the queue and the worker.
    pub part: &'static str,
    pub figure: &'static str,
    pub rounds: u32,
    /// Messages preloaded per round and side.
    pub messages: u64,
    pub batch_size: u8,
    pub new_batch_threshold: u8,
    /// The longest one drain may take.
    pub timeout: Duration,
}

impl PairedPlan<'_> {
    /// The figure's name with `separator` between its words, for names that take no spaces.
    fn slug(&self, separator: char) -> String {
        self.figure.replace(' ', &separator.to_string())
    }
}

/// The setting a paired figure turns on and off.
pub trait Switch {
    /// Adds what turns the setting on or off to the worker's command line or environment.
    fn configure(&self, on: bool, worker: &mut Command);

    /// Sees the worker's `/metrics` once its drain is over, before it is stopped.
    fn drained(&self, _on: bool, _metrics: &str) {}
}

/// The dispatch rates with the setting on and off.
pub async fn measure(plan: &PairedPlan<'_>, switch: &impl Switch) -> Result<(Rate, Rate)> {
    anyhow::ensure!(
        plan.rounds > 0 && plan.messages > 0,
        "--rounds and --messages must be positive"
    );
    eprintln!(
        "shoal-bench: {}: {}: {} rounds of {} messages per side, each drain on a fresh Azurite",
        plan.part, plan.figure, plan.rounds, plan.messages
    );
    let prefix = format!("shoal_bench_{}", plan.slug('_'));
    let database = ScratchDatabase::create(plan.admin_url, &prefix).await?;
    let rates = rounds(plan, switch, &database).await;
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

async fn rounds(
    plan: &PairedPlan<'_>,
    switch: &impl Switch,
    database: &ScratchDatabase,
) -> Result<(Rate, Rate)> {
    plan.shoal.migrate(database.url()).await?;
    let handler = Handler::start().await?;
    let (mut on, mut off) = (Side::default(), Side::default());
    let name = |on: bool| format!("{} {}", plan.figure, if on { "on" } else { "off" });
    for round in 1..=plan.rounds {
        eprintln!(
            "shoal-bench: {}: {} round {round} of {}",
            plan.part, plan.figure, plan.rounds
        );
        let order = if round % 2 == 1 {
            [false, true]
        } else {
            [true, false]
        };
        for setting in order {
            let side = if setting { &mut on } else { &mut off };
            if side.failed.is_some() {
                continue;
            }
            match drain(plan, switch, database, &handler, setting).await {
                Ok(drain) => {
                    eprintln!(
                        "shoal-bench: {}:   {}: {} messages in {:.2} s, {:.0} msg/s",
                        plan.part,
                        name(setting),
                        drain.messages,
                        drain.elapsed.as_secs_f64(),
                        drain.messages as f64 / drain.elapsed.as_secs_f64()
                    );
                    side.messages += drain.messages;
                    side.elapsed += drain.elapsed;
                }
                Err(error) => {
                    eprintln!(
                        "shoal-bench: {}: {} failed in round {round}: {error:#}",
                        plan.part,
                        name(setting)
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
/// started with the setting on or off and timed from the handler's first request until the
/// queue is empty.
async fn drain(
    plan: &PairedPlan<'_>,
    switch: &impl Switch,
    database: &ScratchDatabase,
    handler: &Handler,
    on: bool,
) -> Result<Drain> {
    let azurite = Azurite::start_silent().await.context("starting Azurite")?;
    let queues = queues::connect(&azurite.connection_string())?;
    let queue = queues.queue(&format!("shoal-bench-{}", plan.slug('-')))?;
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
    let listen = free_addr()?;
    let mut command = plan.shoal.command(database.url());
    command.args(["worker", "--name", queue.name(), "--all-apps"]);
    command.args(["--listen", &listen.to_string()]);
    switch.configure(on, &mut command);
    let mut worker = Consumer::spawn("shoal worker", &plan.slug('-'), command)?;
    let drained = async {
        queues::wait_for_first_call(handler.tally(), FIRST_CALL_TIMEOUT, || worker.alive()).await?;
        let drain = queues::wait_until_drained(
            handler.tally(),
            &queue,
            plan.messages,
            plan.timeout,
            || worker.alive(),
        )
        .await?;
        switch.drained(on, &metrics(listen).await?);
        anyhow::Ok(drain)
    }
    .await;
    if drained.is_err() {
        let tail = worker.output_tail();
        if !tail.trim().is_empty() {
            eprintln!(
                "shoal-bench: {}: the worker's output ends with:\n{tail}",
                plan.part
            );
        }
    }
    let stopped = worker.stop().await;
    let drained = drained?;
    stopped?;
    Ok(drained)
}

/// A process's `/metrics` text.
pub async fn metrics(addr: SocketAddr) -> Result<String> {
    let mut connection = Connection::open(addr, None).await?;
    let (status, body) = connection.send(Method::GET, "/metrics", None).await?;
    if status != StatusCode::OK {
        bail!("GET http://{addr}/metrics: {status}");
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// A counter's value in a `/metrics` text (0 when it is not there yet).
pub fn counter(metrics: &str, name: &str) -> u64 {
    metrics
        .lines()
        .find_map(|line| {
            line.strip_prefix(name)?
                .strip_prefix(' ')?
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counter_is_read_by_its_exact_name() {
        let metrics = "# TYPE shoal_trace_spans_dropped counter\n\
                       shoal_trace_spans_dropped_total 12\n\
                       shoal_trace_spans_exported_total 2048\n";
        assert_eq!(counter(metrics, "shoal_trace_spans_dropped_total"), 12);
        assert_eq!(counter(metrics, "shoal_trace_spans_exported_total"), 2048);
        assert_eq!(counter(metrics, "shoal_trace_spans_exported"), 0);
        assert_eq!(counter(metrics, "shoal_missing_total"), 0);
    }
}
