//! The Storage Queue dispatch figures, against Azurite's queue service in memory and one trivial
//! handler. Each figure drains a queue preloaded with the same number of messages and is timed
//! from the first batch in hand until the queue is seen empty:
//!
//! * (b) the SDK ceiling: a tight loop through `shoal-connectors` (receive 32, delete them
//!   concurrently, repeat), no handler;
//! * (a) Shoal: the real `shoal worker` process, hosting one app whose queue-trigger function
//!   has `batchSize` + `newBatchThreshold` invocations in flight, receive → POST → delete; its
//!   CPU time during the drain is read from `/proc`;
//! * (c) the reference: `deploy/bench/python-consumer.py` with the official Python SDK and as
//!   many threads as Shoal has invocations in flight, receive → POST → delete;
//! * (d) Shoal again with the function's `maxConcurrency` set above what it has in flight
//!   ([`figures::CAPPED`]): what the cap's slots cost when they do not bind, against (a).
//!
//! Azurite's in-memory store slows down steeply with the number of messages it holds (each
//! delete scans them) and, past a few thousand, loses messages it has just handed out, so the
//! figures drain queues of `--messages` (1,000) in `--rounds` rounds, the three figures one
//! after another in each round, so that drift (other load on the machine) affects them alike.
//! Azurite's own CPU time is read too: it is single-threaded and, on a small machine, what
//! bounds all three.
//!
//! Every round gets a fresh Azurite, warmed up by one unmeasured drain before its first figure
//! (so the round's first figure does not pay for its JIT), and stopped after the round: a
//! consumer that stalled, with its messages left invisible on the queue, or an Azurite that
//! slowed down or stopped answering after many drains, cannot drag later rounds with it. Shoal's
//! app names the round's Azurite, so it is written again through the API in every round.
//!
//! A figure that stalls or fails in a round is reported as failed in that round, with why, and
//! runs in no later round (its rate over fewer rounds would not compare); the other figures go
//! on. A failed reference (SDK ceiling, Python) leaves only its own ratio out. Once Shoal's own
//! figure has failed the part ends after that round: the caller reports the part as failed.

pub(crate) mod app;
mod cpu;
pub mod figures;
pub(crate) mod handler;
pub(crate) mod paired;
pub(crate) mod process;
mod python;
pub(crate) mod queues;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use shoal_connectors::{Queue, StorageQueues};
use shoal_testkit::ScratchDatabase;
use shoal_testkit::azurite::Azurite;

use crate::server::{ShoalBin, free_addr};
use figures::{AzuriteLoad, CAPPED, NotMeasured, QueueFigures, Rate};
use handler::Handler;
use process::Consumer;

/// How long a consumer may take to call the handler for the first time (process start-up,
/// reading its apps, the first receive).
const FIRST_CALL_TIMEOUT: Duration = Duration::from_secs(60);

pub struct QueuePlan<'a> {
    pub shoal: &'a ShoalBin,
    /// Admin URL: the Shoal figure gets its own scratch database there.
    pub admin_url: &'a str,
    /// Messages preloaded per figure and round.
    pub messages: u64,
    pub rounds: u32,
    pub batch_size: u8,
    pub new_batch_threshold: u8,
    /// The Python used to create the virtual environment.
    pub python: PathBuf,
    pub venv: PathBuf,
    /// deploy/bench: the consumer script and its requirements.
    pub scripts: PathBuf,
    /// The longest one drain may take.
    pub timeout: Duration,
}

impl QueuePlan<'_> {
    /// Invocations Shoal's listener has in flight at most, and the Python consumer's threads.
    pub fn concurrency(&self) -> usize {
        usize::from(self.batch_size) + usize::from(self.new_batch_threshold)
    }
}

/// One figure over the rounds: its drains added up, or why it has no rate.
#[derive(Clone, Debug, Default)]
struct Figure {
    messages: u64,
    elapsed: Duration,
    /// The consumer process's CPU time (none for the ceiling, which runs in the bench).
    consumer_cpu: Duration,
    azurite_cpu: Duration,
    not_measured: Option<NotMeasured>,
}

impl Figure {
    fn not_measured(not_measured: NotMeasured) -> Figure {
        Figure {
            not_measured: Some(not_measured),
            ..Figure::default()
        }
    }

    /// Still measured: it has not failed (or could not run) so far.
    fn live(&self) -> bool {
        self.not_measured.is_none()
    }

    /// Adds a round's drain, or records that the figure failed in that round.
    fn record(&mut self, name: &str, round: u32, drain: Result<Drain>) {
        match drain {
            Ok(drain) => {
                report(name, &drain);
                self.messages += drain.messages;
                self.elapsed += drain.elapsed;
                self.consumer_cpu += drain.consumer_cpu;
                self.azurite_cpu += drain.azurite_cpu;
            }
            Err(error) => self.fail(name, round, &error),
        }
    }

    fn fail(&mut self, name: &str, round: u32, error: &anyhow::Error) {
        eprintln!("shoal-bench: queue: {name} failed in round {round}: {error:#}");
        self.not_measured = Some(NotMeasured::Failed {
            round,
            why: format!("{error:#}"),
        });
    }

    fn rate(&self) -> Rate {
        match &self.not_measured {
            Some(not_measured) => Err(not_measured.clone()),
            None => Ok(self.messages as f64 / self.elapsed.as_secs_f64().max(f64::MIN_POSITIVE)),
        }
    }

    /// A CPU time per message, when the figure was measured.
    fn per_message(&self, cpu: Duration) -> Option<Duration> {
        self.live()
            .then(|| cpu.div_f64(self.messages.max(1) as f64))
    }

    fn azurite(&self, figure: &'static str) -> Option<AzuriteLoad> {
        Some(AzuriteLoad {
            figure,
            cpu_per_message: self.per_message(self.azurite_cpu)?,
            busy: self.azurite_cpu.as_secs_f64()
                / self.elapsed.as_secs_f64().max(f64::MIN_POSITIVE),
        })
    }
}

/// One measured drain.
#[derive(Clone, Copy, Debug)]
struct Drain {
    messages: u64,
    elapsed: Duration,
    consumer_cpu: Duration,
    azurite_cpu: Duration,
}

/// Azurite's process, for its CPU time.
struct AzuriteCpu {
    pid: Option<u32>,
    ticks_per_second: u64,
}

impl AzuriteCpu {
    fn find(azurite: &Azurite) -> AzuriteCpu {
        let port = azurite.port().to_string();
        AzuriteCpu {
            pid: cpu::child_with_args(&["--queuePort", &port]),
            ticks_per_second: cpu::clock_ticks(),
        }
    }

    /// Zero when the process could not be found (the line then leaves Azurite out).
    fn now(&self) -> Duration {
        self.pid
            .and_then(|pid| cpu::cpu_time(pid, self.ticks_per_second).ok())
            .unwrap_or_default()
    }
}

/// One round's Azurite, warmed up; stopped when dropped.
struct RoundAzurite {
    azurite: Azurite,
    cpu: AzuriteCpu,
    queues: StorageQueues,
}

impl RoundAzurite {
    async fn start(plan: &QueuePlan<'_>) -> Result<RoundAzurite> {
        let azurite = Azurite::start_silent().await.context("starting Azurite")?;
        let cpu = AzuriteCpu::find(&azurite);
        let queues = queues::connect(&azurite.connection_string())?;
        // Unmeasured: lets the fresh Azurite's JIT settle before the round's first figure.
        let warmup = queues.queue("shoal-bench-warmup")?;
        queues::preload(&warmup, plan.messages)
            .await
            .context("warming Azurite up")?;
        queues::ceiling(&warmup, plan.messages, plan.timeout)
            .await
            .context("warming Azurite up")?;
        Ok(RoundAzurite {
            azurite,
            cpu,
            queues,
        })
    }
}

/// The handlers the consumers call, in the bench's process, kept over the rounds.
struct Handlers {
    shoal: Handler,
    python: Handler,
}

pub async fn run(plan: &QueuePlan<'_>) -> Result<QueueFigures> {
    if plan.messages == 0 || plan.rounds == 0 || !(1..=32).contains(&plan.batch_size) {
        bail!("--messages and --rounds must be positive, --batch-size between 1 and 32");
    }
    eprintln!(
        "shoal-bench: queue: {} rounds of {} messages per figure, each round on a fresh Azurite, \
         {} in flight (batchSize {} + newBatchThreshold {})",
        plan.rounds,
        plan.messages,
        plan.concurrency(),
        plan.batch_size,
        plan.new_batch_threshold
    );
    let python = python::ensure_venv(&plan.python, &plan.venv, &plan.scripts)
        .await
        .map_err(|error| {
            eprintln!("shoal-bench: queue: the Python reference could not run: {error:#}");
            NotMeasured::CouldNotRun(format!("{error:#}"))
        });
    let database = ScratchDatabase::create(plan.admin_url, "shoal_bench_queue").await?;
    let figures = rounds(plan, &database, python).await;
    let dropped = database.drop_now().await;
    let figures = figures?;
    dropped?;
    Ok(figures)
}

async fn rounds(
    plan: &QueuePlan<'_>,
    database: &ScratchDatabase,
    python: Result<PathBuf, NotMeasured>,
) -> Result<QueueFigures> {
    plan.shoal.migrate(database.url()).await?;
    let handlers = Handlers {
        shoal: Handler::start().await?,
        python: Handler::start().await?,
    };
    let (mut ceiling, mut shoal) = (Figure::default(), Figure::default());
    let mut capped = Figure::default();
    let (interpreter, mut reference) = match python {
        Ok(interpreter) => (Some(interpreter), Figure::default()),
        Err(not_measured) => (None, Figure::not_measured(not_measured)),
    };
    let mut azurite_cpu_found = true;
    for round in 1..=plan.rounds {
        eprintln!("shoal-bench: queue: round {round} of {}", plan.rounds);
        let azurite = match RoundAzurite::start(plan).await {
            Ok(azurite) => azurite,
            Err(error) => {
                // Nothing can be measured without it: every figure still running fails here.
                for (name, figure) in [
                    ("SDK ceiling", &mut ceiling),
                    ("shoal", &mut shoal),
                    ("Python", &mut reference),
                    ("shoal capped", &mut capped),
                ] {
                    if figure.live() {
                        figure.fail(name, round, &error);
                    }
                }
                break;
            }
        };
        if azurite.cpu.pid.is_none() {
            eprintln!("shoal-bench: queue: Azurite's process not found; its CPU time is not shown");
            azurite_cpu_found = false;
        }
        if ceiling.live() {
            ceiling.record("SDK ceiling", round, ceiling_round(plan, &azurite).await);
        }
        if shoal.live() {
            let drain = shoal_round(plan, &azurite, database, &handlers.shoal, None).await;
            shoal.record("shoal", round, drain);
        }
        if capped.live() {
            let drain = shoal_round(plan, &azurite, database, &handlers.shoal, Some(CAPPED)).await;
            capped.record("shoal capped", round, drain);
        }
        if let Some(interpreter) = interpreter.as_deref()
            && reference.live()
        {
            let drain = python_round(plan, &azurite, interpreter, &handlers.python).await;
            reference.record("Python", round, drain);
        }
        if !shoal.live() {
            eprintln!("shoal-bench: queue: Shoal's figure failed; no further rounds");
            break;
        }
    }

    let azurite = if azurite_cpu_found {
        [
            ceiling.azurite("SDK ceiling"),
            shoal.azurite("shoal"),
            reference.azurite("Python"),
        ]
        .into_iter()
        .flatten()
        .collect()
    } else {
        Vec::new()
    };
    Ok(QueueFigures {
        concurrency: plan.concurrency(),
        shoal: shoal.rate(),
        ceiling: ceiling.rate(),
        python: reference.rate(),
        capped: capped.rate(),
        worker_cpu_per_message: shoal.per_message(shoal.consumer_cpu),
        python_cpu_per_message: reference.per_message(reference.consumer_cpu),
        azurite,
    })
}

/// (b): the SDK's tight loop in the bench's own process.
async fn ceiling_round(plan: &QueuePlan<'_>, azurite: &RoundAzurite) -> Result<Drain> {
    let queue = azurite.queues.queue("shoal-bench-ceiling")?;
    queues::preload(&queue, plan.messages).await?;
    let before = azurite.cpu.now();
    let drain = queues::ceiling(&queue, plan.messages, plan.timeout).await?;
    Ok(Drain {
        messages: drain.messages,
        elapsed: drain.elapsed,
        consumer_cpu: Duration::ZERO,
        azurite_cpu: azurite.cpu.now().saturating_sub(before),
    })
}

/// (a), or (d) with `max_concurrency`: the app written for this round's Azurite, then a
/// `shoal worker` started on the preloaded queue.
async fn shoal_round(
    plan: &QueuePlan<'_>,
    azurite: &RoundAzurite,
    database: &ScratchDatabase,
    handler: &Handler,
    max_concurrency: Option<u32>,
) -> Result<Drain> {
    let name = match max_concurrency {
        None => "shoal-bench-shoal",
        Some(_) => "shoal-bench-capped",
    };
    let queue = azurite.queues.queue(name)?;
    let bodies = app::queue_app(
        plan,
        &azurite.azurite,
        handler,
        queue.name(),
        max_concurrency,
    );
    app::write_app(plan.shoal, database, &bodies)
        .await
        .context("writing the app")?;
    queues::preload(&queue, plan.messages).await?;
    let mut command = plan.shoal.command(database.url());
    command.args(["worker", "--name", "shoal-bench", "--all-apps"]);
    command.args(["--listen", &free_addr()?.to_string()]);
    handler.tally().reset();
    let worker = Consumer::spawn("shoal worker", "worker", command)?;
    measure(worker, handler, &queue, plan, &azurite.cpu).await
}

/// (c): the Python consumer started on the preloaded queue.
async fn python_round(
    plan: &QueuePlan<'_>,
    azurite: &RoundAzurite,
    interpreter: &std::path::Path,
    handler: &Handler,
) -> Result<Drain> {
    let queue = azurite.queues.queue("shoal-bench-python")?;
    queues::preload(&queue, plan.messages).await?;
    handler.tally().reset();
    let connection_string = azurite.azurite.connection_string();
    let handler_url = format!("{}/python", handler.url());
    let run = python::Run {
        connection_string: &connection_string,
        queue: queue.name(),
        handler: &handler_url,
        threads: plan.concurrency(),
        batch: plan.batch_size,
        max_run: FIRST_CALL_TIMEOUT + plan.timeout,
    };
    let consumer = python::start(interpreter, &plan.scripts, &run)?;
    measure(consumer, handler, &queue, plan, &azurite.cpu).await
}

/// Prints one drain's progress line.
fn report(name: &str, drain: &Drain) {
    eprintln!(
        "shoal-bench: queue:   {name}: {} messages in {:.2} s, {:.0} msg/s",
        drain.messages,
        drain.elapsed.as_secs_f64(),
        drain.messages as f64 / drain.elapsed.as_secs_f64()
    );
}

/// Waits for the consumer's first handler call, then until the queue is drained, and stops the
/// consumer; CPU times are read at both ends. A failure prints the end of the consumer's output
/// on stderr; the error itself stays short, for the figure's line.
async fn measure(
    mut consumer: Consumer,
    handler: &Handler,
    queue: &Queue,
    plan: &QueuePlan<'_>,
    azurite_cpu: &AzuriteCpu,
) -> Result<Drain> {
    let measured = drain(&mut consumer, handler, queue, plan, azurite_cpu).await;
    if measured.is_err() {
        let tail = consumer.output_tail();
        if !tail.trim().is_empty() {
            eprintln!("shoal-bench: queue: its output ends with:\n{tail}");
        }
    }
    let stopped = consumer.stop().await;
    let measured = measured?;
    stopped?;
    Ok(measured)
}

async fn drain(
    consumer: &mut Consumer,
    handler: &Handler,
    queue: &Queue,
    plan: &QueuePlan<'_>,
    azurite_cpu: &AzuriteCpu,
) -> Result<Drain> {
    queues::wait_for_first_call(handler.tally(), FIRST_CALL_TIMEOUT, || consumer.alive()).await?;
    let consumer_before = consumer.cpu_time()?;
    let azurite_before = azurite_cpu.now();
    let drain =
        queues::wait_until_drained(handler.tally(), queue, plan.messages, plan.timeout, || {
            consumer.alive()
        })
        .await?;
    Ok(Drain {
        messages: drain.messages,
        elapsed: drain.elapsed,
        consumer_cpu: consumer.cpu_time()?.saturating_sub(consumer_before),
        azurite_cpu: azurite_cpu.now().saturating_sub(azurite_before),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(messages: u64, secs: u64) -> Drain {
        Drain {
            messages,
            elapsed: Duration::from_secs(secs),
            consumer_cpu: Duration::from_millis(messages),
            azurite_cpu: Duration::from_millis(secs * 500),
        }
    }

    #[test]
    fn a_figure_rates_all_its_rounds_together() {
        let mut figure = Figure::default();
        figure.record("shoal", 1, Ok(drain(1_000, 1)));
        figure.record("shoal", 2, Ok(drain(1_000, 3)));
        assert_eq!(figure.rate(), Ok(500.0));
        assert_eq!(
            figure.per_message(figure.consumer_cpu),
            Some(Duration::from_millis(1))
        );
        let azurite = figure.azurite("shoal").expect("measured");
        assert_eq!(azurite.busy, 0.5);
    }

    #[test]
    fn a_figure_that_failed_in_a_round_has_no_rate_and_no_cpu() {
        let mut figure = Figure::default();
        figure.record("Python", 1, Ok(drain(1_000, 2)));
        figure.record(
            "Python",
            2,
            Err(anyhow::anyhow!("384/1000 messages in 120 s").context("draining")),
        );
        assert!(!figure.live());
        assert_eq!(
            figure.rate(),
            Err(NotMeasured::Failed {
                round: 2,
                why: "draining: 384/1000 messages in 120 s".to_owned()
            })
        );
        assert_eq!(figure.per_message(figure.consumer_cpu), None);
        assert!(figure.azurite("Python").is_none());
    }
}
