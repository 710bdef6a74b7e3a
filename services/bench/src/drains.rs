//! A dispatch figure made of timed drains, as the Service Bus and stream parts measure it:
//! every round drains a preloaded queue or topic; the figure's rate is all items over all drain
//! time, and the consumer's CPU time per item comes from `/proc` where it is its own process.
//! A drain that fails ends the figure (its rate says in which round and why).

use std::time::Duration;

use anyhow::Result;

use crate::queue::figures::{NotMeasured, Rate};
use crate::queue::handler::Handler;
use crate::queue::process::Consumer;
use crate::queue::queues::wait_for_first_call;
use crate::server::{ShoalBin, free_addr};

/// How long a worker may take to call the handler for the first time.
const FIRST_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// One round of a worker's figure: `shoal worker --all-apps` on `database_url`, timed from the
/// handler's first call until `drained` says the `items` are done, with the worker's CPU time
/// meanwhile; the worker's last output is shown when the round fails, and it is stopped either
/// way. `part` names the figure in progress lines (`stream`).
pub async fn worker_round<Fut>(
    shoal: &ShoalBin,
    database_url: &str,
    part: &'static str,
    handler: &Handler,
    items: u64,
    drained: impl FnOnce() -> Fut,
) -> Result<Drain>
where
    Fut: Future<Output = Result<()>>,
{
    let mut command = shoal.command(database_url);
    command.args(["worker", "--name", "shoal-bench", "--all-apps"]);
    command.args(["--listen", &free_addr()?.to_string()]);
    handler.tally().reset();
    let mut worker = Consumer::spawn("shoal worker", &format!("{part}-worker"), command)?;
    let measured = async {
        let first =
            wait_for_first_call(handler.tally(), FIRST_CALL_TIMEOUT, || worker.alive()).await?;
        let before = worker.cpu_time()?;
        drained().await?;
        Ok::<_, anyhow::Error>(Drain {
            items,
            elapsed: first.elapsed(),
            cpu: worker.cpu_time()?.saturating_sub(before),
        })
    }
    .await;
    if measured.is_err() {
        let tail = worker.output_tail();
        if !tail.trim().is_empty() {
            eprintln!("shoal-bench: {part}: the worker's output ends with:\n{tail}");
        }
    }
    let stopped = worker.stop().await;
    let measured = measured?;
    stopped?;
    Ok(measured)
}

/// One drain: how many items, how long from the first in hand to the last settled, and the
/// consumer process's CPU time meanwhile (zero when it is not a process of its own).
#[derive(Clone, Copy, Debug)]
pub struct Drain {
    pub items: u64,
    pub elapsed: Duration,
    pub cpu: Duration,
}

/// The rounds of one figure.
pub struct DrainFigure {
    /// The part, in progress lines (`service bus`).
    part: &'static str,
    /// What is counted (`messages`, `events`).
    unit: &'static str,
    items: u64,
    elapsed: Duration,
    cpu: Duration,
    failed: Option<NotMeasured>,
}

impl DrainFigure {
    pub fn new(part: &'static str, unit: &'static str) -> DrainFigure {
        DrainFigure {
            part,
            unit,
            items: 0,
            elapsed: Duration::ZERO,
            cpu: Duration::ZERO,
            failed: None,
        }
    }

    pub fn record(&mut self, name: &str, round: u32, drain: Result<Drain>) {
        let (part, unit) = (self.part, self.unit);
        match drain {
            Ok(d) => {
                eprintln!(
                    "shoal-bench: {part}:   {name}: {} {unit} in {:.2} s, {:.0} {unit}/s",
                    d.items,
                    d.elapsed.as_secs_f64(),
                    d.items as f64 / d.elapsed.as_secs_f64().max(f64::MIN_POSITIVE)
                );
                self.items += d.items;
                self.elapsed += d.elapsed;
                self.cpu += d.cpu;
            }
            Err(error) => {
                eprintln!("shoal-bench: {part}: {name} failed in round {round}: {error:#}");
                self.failed = Some(NotMeasured::Failed {
                    round,
                    why: format!("{error:#}"),
                });
            }
        }
    }

    pub fn live(&self) -> bool {
        self.failed.is_none()
    }

    pub fn rate(&self) -> Rate {
        match &self.failed {
            Some(failed) => Err(failed.clone()),
            None => Ok(self.items as f64 / self.elapsed.as_secs_f64().max(f64::MIN_POSITIVE)),
        }
    }

    /// The consumer's CPU time per item, once measured.
    pub fn cpu_per_item(&self) -> Option<Duration> {
        self.live()
            .then(|| self.cpu.div_f64(self.items.max(1) as f64))
    }
}
