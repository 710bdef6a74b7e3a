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
//!   many threads as Shoal has invocations in flight, receive → POST → delete.
//!
//! Azurite's in-memory store slows down steeply with the number of messages it holds (each
//! delete scans them) and, past a few thousand, loses messages it has just handed out, so the
//! figures drain queues of `--messages` (1,000) in `--rounds` rounds, the three figures one
//! after another in each round, so that Azurite's drift affects them alike. Azurite's own CPU
//! time is read too: it is single-threaded and, on a small machine, what bounds all three.

mod cpu;
pub(crate) mod handler;
pub(crate) mod process;
mod python;
mod queues;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use http::Method;
use serde_json::json;
use shoal_connectors::{Queue, StorageQueues};
use shoal_testkit::ScratchDatabase;
use shoal_testkit::azurite::Azurite;

use crate::http::Connection;
use crate::report::{AzuriteLoad, QueueFigures};
use crate::server::{Server, ShoalBin, free_addr};
use handler::Handler;
use process::Consumer;

const TENANT: &str = "bench";
const APP: &str = "dispatch";
const FUNCTION: &str = "bench";
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

/// One figure's drains, added up over the rounds.
#[derive(Clone, Copy, Debug, Default)]
struct Figure {
    messages: u64,
    elapsed: Duration,
    /// The consumer process's CPU time (none for the ceiling, which runs in the bench).
    consumer_cpu: Duration,
    azurite_cpu: Duration,
}

impl Figure {
    fn add(&mut self, drain: Drain) {
        self.messages += drain.messages;
        self.elapsed += drain.elapsed;
        self.consumer_cpu += drain.consumer_cpu;
        self.azurite_cpu += drain.azurite_cpu;
    }

    fn per_second(&self) -> f64 {
        self.messages as f64 / self.elapsed.as_secs_f64().max(f64::MIN_POSITIVE)
    }

    fn per_message(&self, cpu: Duration) -> Duration {
        cpu.div_f64(self.messages.max(1) as f64)
    }

    fn azurite(&self, figure: &'static str) -> AzuriteLoad {
        AzuriteLoad {
            figure,
            cpu_per_message: self.per_message(self.azurite_cpu),
            busy: self.azurite_cpu.as_secs_f64()
                / self.elapsed.as_secs_f64().max(f64::MIN_POSITIVE),
        }
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

    /// Zero when the process could not be found (the line then says so).
    fn now(&self) -> Duration {
        self.pid
            .and_then(|pid| cpu::cpu_time(pid, self.ticks_per_second).ok())
            .unwrap_or_default()
    }
}

pub async fn run(plan: &QueuePlan<'_>) -> Result<QueueFigures> {
    if plan.messages == 0 || plan.rounds == 0 || !(1..=32).contains(&plan.batch_size) {
        bail!("--messages and --rounds must be positive, --batch-size between 1 and 32");
    }
    let azurite = Azurite::start_silent().await.context("starting Azurite")?;
    let azurite_cpu = AzuriteCpu::find(&azurite);
    if azurite_cpu.pid.is_none() {
        eprintln!("shoal-bench: queue: Azurite's process not found; its CPU time is not shown");
    }
    let queues = queues::connect(&azurite.connection_string())?;
    eprintln!(
        "shoal-bench: queue: Azurite on port {}, {} rounds of {} messages per figure, {} in flight \
         (batchSize {} + newBatchThreshold {})",
        azurite.port(),
        plan.rounds,
        plan.messages,
        plan.concurrency(),
        plan.batch_size,
        plan.new_batch_threshold
    );
    // Unmeasured: lets Azurite's JIT settle before the first figure.
    let warmup = queues.queue("shoal-bench-warmup")?;
    queues::preload(&warmup, plan.messages).await?;
    queues::ceiling(&warmup, plan.messages, plan.timeout).await?;

    let database = ScratchDatabase::create(plan.admin_url, "shoal_bench_queue").await?;
    let figures = rounds(plan, &azurite, &azurite_cpu, &queues, &database).await;
    let dropped = database.drop_now().await;
    let figures = figures?;
    dropped?;
    Ok(figures)
}

async fn rounds(
    plan: &QueuePlan<'_>,
    azurite: &Azurite,
    azurite_cpu: &AzuriteCpu,
    queues: &StorageQueues,
    database: &ScratchDatabase,
) -> Result<QueueFigures> {
    let shoal_handler = Handler::start().await?;
    let shoal_queue = queues.queue("shoal-bench-shoal")?;
    write_app(plan, database, azurite, &shoal_handler, shoal_queue.name()).await?;
    let ceiling_queue = queues.queue("shoal-bench-ceiling")?;
    let python_queue = queues.queue("shoal-bench-python")?;
    let python_handler = Handler::start().await?;
    let python_url = format!("{}/python", python_handler.url());
    let connection_string = azurite.connection_string();
    let mut python = python::ensure_venv(&plan.python, &plan.venv, &plan.scripts)
        .await
        .map_err(|error| format!("{error:#}"));

    let (mut ceiling, mut shoal, mut reference) =
        (Figure::default(), Figure::default(), Figure::default());
    for round in 1..=plan.rounds {
        eprintln!("shoal-bench: queue: round {round} of {}", plan.rounds);
        queues::preload(&ceiling_queue, plan.messages).await?;
        let before = azurite_cpu.now();
        let drain = queues::ceiling(&ceiling_queue, plan.messages, plan.timeout).await?;
        ceiling.add(report(
            "SDK ceiling",
            Drain {
                messages: drain.messages,
                elapsed: drain.elapsed,
                consumer_cpu: Duration::ZERO,
                azurite_cpu: azurite_cpu.now().saturating_sub(before),
            },
        ));

        queues::preload(&shoal_queue, plan.messages).await?;
        let mut command = plan.shoal.command(database.url());
        command.args(["worker", "--name", "shoal-bench", "--all-apps"]);
        command.args(["--listen", &free_addr()?.to_string()]);
        shoal_handler.tally().reset();
        let worker = Consumer::spawn("shoal worker", "worker", command)?;
        let drain = measure(worker, &shoal_handler, &shoal_queue, plan, azurite_cpu).await?;
        shoal.add(report("shoal", drain));

        if let Ok(interpreter) = &python {
            queues::preload(&python_queue, plan.messages).await?;
            python_handler.tally().reset();
            let run = python::Run {
                connection_string: &connection_string,
                queue: python_queue.name(),
                handler: &python_url,
                threads: plan.concurrency(),
                batch: plan.batch_size,
                max_run: FIRST_CALL_TIMEOUT + plan.timeout,
            };
            let measured = match python::start(interpreter, &plan.scripts, &run) {
                Ok(consumer) => {
                    measure(consumer, &python_handler, &python_queue, plan, azurite_cpu).await
                }
                Err(error) => Err(error),
            };
            match measured {
                Ok(drain) => reference.add(report("Python", drain)),
                Err(error) => {
                    eprintln!("shoal-bench: queue: the Python reference failed: {error:#}");
                    python = Err(format!("{error:#}"));
                }
            }
        }
    }
    if let Err(why) = &python {
        eprintln!("shoal-bench: queue: the Python reference could not run: {why}");
    }

    let mut azurite_load = vec![ceiling.azurite("SDK ceiling"), shoal.azurite("shoal")];
    if python.is_ok() {
        azurite_load.push(reference.azurite("Python"));
    }
    Ok(QueueFigures {
        concurrency: plan.concurrency(),
        shoal: shoal.per_second(),
        ceiling: ceiling.per_second(),
        python: python
            .as_ref()
            .map(|_| reference.per_second())
            .map_err(Clone::clone),
        worker_cpu_per_message: shoal.per_message(shoal.consumer_cpu),
        python_cpu_per_message: python
            .as_ref()
            .ok()
            .map(|_| reference.per_message(reference.consumer_cpu)),
        azurite: azurite_load
            .into_iter()
            .filter(|_| azurite_cpu.pid.is_some())
            .collect(),
    })
}

/// Prints one drain's progress line and passes it on.
fn report(name: &str, drain: Drain) -> Drain {
    eprintln!(
        "shoal-bench: queue:   {name}: {} messages in {:.2} s, {:.0} msg/s",
        drain.messages,
        drain.elapsed.as_secs_f64(),
        drain.messages as f64 / drain.elapsed.as_secs_f64()
    );
    drain
}

/// Migrates the scratch database, starts `shoal serve` on it and writes tenant, app and
/// function through the API, as a user would; the server is stopped again, since the worker
/// reads Postgres itself.
async fn write_app(
    plan: &QueuePlan<'_>,
    database: &ScratchDatabase,
    azurite: &Azurite,
    handler: &Handler,
    queue: &str,
) -> Result<()> {
    plan.shoal.migrate(database.url()).await?;
    let server = Server::start(plan.shoal, database.url()).await?;
    let written = put_app(plan, &server, azurite, handler, queue).await;
    let stopped = server.stop().await;
    written?;
    stopped
}

async fn put_app(
    plan: &QueuePlan<'_>,
    server: &Server,
    azurite: &Azurite,
    handler: &Handler,
    queue: &str,
) -> Result<()> {
    let token = plan.shoal.platform_admin_token(server).await?;
    let app = json!({
        "handler": {"url": handler.url()},
        "appSettings": {"AzureWebJobsStorage": azurite.connection_string()},
        "hostConfig": {
            "version": "2.0",
            "extensions": {"queues": {
                "batchSize": plan.batch_size,
                "newBatchThreshold": plan.new_batch_threshold,
                "messageEncoding": "none",
            }},
        },
    });
    let function = json!({"bindings": [
        {"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": queue},
    ]});
    let mut connection = Connection::open(server.addr(), Some(&token)).await?;
    for (path, body) in [
        (
            format!("/v1/tenants/{TENANT}"),
            json!({"displayName": "Bench"}),
        ),
        (format!("/v1/tenants/{TENANT}/apps/{APP}"), app),
        (
            format!("/v1/tenants/{TENANT}/apps/{APP}/functions/{FUNCTION}"),
            function,
        ),
    ] {
        let body = Bytes::from(serde_json::to_vec(&body)?);
        let (status, answer) = connection.send(Method::PUT, &path, Some(body)).await?;
        if !status.is_success() {
            bail!(
                "PUT {path}: {status}: {}",
                String::from_utf8_lossy(&answer)
                    .chars()
                    .take(500)
                    .collect::<String>()
            );
        }
    }
    Ok(())
}

/// Waits for the consumer's first handler call, then until the queue is drained, and stops the
/// consumer; CPU times are read at both ends. A failure shows the end of the consumer's output.
async fn measure(
    mut consumer: Consumer,
    handler: &Handler,
    queue: &Queue,
    plan: &QueuePlan<'_>,
    azurite_cpu: &AzuriteCpu,
) -> Result<Drain> {
    let measured = drain(&mut consumer, handler, queue, plan, azurite_cpu).await;
    let tail = consumer.output_tail();
    let stopped = consumer.stop().await;
    let measured = measured.map_err(|error| {
        if tail.trim().is_empty() {
            error
        } else {
            error.context(format!("its output ends with:\n{tail}"))
        }
    })?;
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
