//! `shoal-bench` measures, in one run, three parts of Shoal against references measured minutes
//! apart on the same machine, and prints each figure as a ratio, so a result means the same on
//! any machine:
//!
//! * `api`: the management API under load and, on the same database, pgbench executing the SQL
//!   the store executes for the same operation: what fraction of the database's own single-row
//!   throughput survives the HTTP, auth, JSON and encryption layers above it. The part creates a
//!   fresh database on the admin `DATABASE_URL`, migrates it, starts `shoal serve`, loads 1,000
//!   apps, measures GET then PUT of one app, runs pgbench for each, then the noisy-neighbour
//!   figure (one tenant's paced GETs beside another tenant's flood, against alone; see
//!   [`noisy`]), prints the table, and always stops the server and drops the database, also when
//!   something failed.
//! * `queue`: Storage Queue dispatch by one `shoal worker` against Azurite, next to the SDK's
//!   own ceiling and a Python consumer written with the official SDK (see [`queue`]).
//! * `service-bus`: Service Bus dispatch by one `shoal worker` against the local Service Bus
//!   stand-in, next to a raw receive/complete loop with the same client (see [`service_bus`]).
//! * `stream`: Kafka dispatch by one `shoal worker` against a tansu broker, next to a raw
//!   consume-and-commit loop with the same client (see [`stream`]).
//! * `rabbitmq`: RabbitMQ dispatch by one `shoal worker` against a private broker, next to a
//!   raw consume/ack loop with the same client (see [`rabbitmq`]).
//! * `timer`: how late timer functions' handlers are called after each occurrence, next to a
//!   bare tokio timer's wake-up in the bench's process (see [`timer`]).
//! * `scheduler`: the pure decision and placement for 10,000 apps, full ticks against
//!   Postgres, and the real scheduler and worker processes reacting to a backlog and to a
//!   killed worker, each against a reference of the same run (see [`scheduler`]).
//! * `webhooks`: the webhook ingress against calling the same handler directly with the same
//!   signed request: the latency it adds to one call and the throughput it keeps (see
//!   [`webhooks`]).
//! * `breaker`: how soon every listener of a function stops after the failure that crosses its
//!   circuit breaker's threshold (next to a pause by hand and the counting tick), and the
//!   dispatch rate on the failure path with the breaker's counting on against off (see
//!   [`breaker`]).
//! * `dashboard`: the dashboard's bundle gzipped, the apps list's first render with 1,000 apps
//!   in headless Chromium against the empty list's, and queue dispatch with invocation
//!   telemetry on against off (see [`dashboard`]).
//! * `tracing`: queue dispatch with trace export to a local OTLP sink against export off, and
//!   the webhook ingress's added latency with export on beside off (see [`traces`]).
//!
//! A part that fails is reported and the next one runs; the exit code is non-zero only when a
//! part could not measure Shoal's own figures (see [`parts`]).

mod api;
mod args;
mod breaker;
mod dashboard;
mod database;
mod drains;
mod http;
mod load;
mod noisy;
mod otlp_sink;
mod parts;
mod pgbench;
mod queue;
mod rabbitmq;
mod report;
mod scheduler;
mod server;
mod service_bus;
mod stream;
mod timer;
mod traces;
mod webhooks;

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Parser;

use crate::args::Args;
use crate::parts::{Interrupted, Outcome, Part};
use crate::server::ShoalBin;

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.client_threads.max(1))
        .enable_all()
        .build();
    let outcomes = match runtime {
        Ok(runtime) => runtime.block_on(run(&args)),
        Err(error) => Err(error).context("cannot start the async runtime"),
    };
    match outcomes {
        Ok(outcomes) => {
            let failed: Vec<&str> = outcomes
                .iter()
                .filter(|(_, outcome)| *outcome != Outcome::Measured)
                .map(|(part, _)| part.title())
                .collect();
            if !failed.is_empty() {
                eprintln!("shoal-bench: not measured: {}", failed.join(", "));
            }
            ExitCode::from(parts::exit_code(&outcomes))
        }
        Err(error) => {
            eprintln!("shoal-bench: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the chosen parts in order; a failed part is reported and the next one runs.
async fn run(args: &Args) -> Result<Vec<(Part, Outcome)>> {
    let shoal = ShoalBin::locate(args.shoal_bin.clone())?;
    let mut outcomes = Vec::new();
    for part in Part::ALL {
        if args.only.is_some_and(|only| only != part) {
            continue;
        }
        let result = match part {
            Part::Api => api::run(args, &shoal).await,
            Part::Queue => queue(args, &shoal).await,
            Part::ServiceBus => service_bus(args, &shoal).await,
            Part::Stream => stream(args, &shoal).await,
            Part::Rabbitmq => rabbitmq(args, &shoal).await,
            Part::Timer => timer(args, &shoal).await,
            Part::Scheduler => scheduler(args, &shoal).await,
            Part::Webhooks => webhooks(args, &shoal).await,
            Part::Breaker => breaker(args, &shoal).await,
            Part::Dashboard => dashboard(args, &shoal).await,
            Part::Tracing => tracing(args, &shoal).await,
        };
        if let Err(error) = &result {
            eprintln!("shoal-bench: {} part: {error:#}", part.title());
        }
        let outcome = Outcome::of(result);
        if let Some(line) = outcome.line(part) {
            println!();
            println!("{line}");
        }
        let go_on = outcome.go_on();
        outcomes.push((part, outcome));
        if !go_on {
            break;
        }
    }
    Ok(outcomes)
}

/// The webhook part; its server and scratch database go away with it, also on Ctrl-C.
async fn webhooks(args: &Args, shoal: &ShoalBin) -> Result<()> {
    let plan = webhooks::WebhookPlan {
        shoal,
        admin_url: &args.database_url,
        warmup: Duration::from_secs(args.warmup_secs),
        duration: Duration::from_secs(args.duration_secs),
        connections: args.webhook_connections,
    };
    let figures = tokio::select! {
        figures = webhooks::run(&plan) => figures?,
        _ = tokio::signal::ctrl_c() => return Err(Interrupted.into()),
    };
    println!();
    println!("{}", report::webhooks::line(&figures));
    let failed = figures
        .results()
        .iter()
        .any(|result| result.error_rate() > api::MAX_ERROR_RATE);
    if failed {
        bail!("too many failed webhook requests (see the line above)");
    }
    Ok(())
}

/// The scheduler part: prints what it measured, also when a later figure failed; its
/// processes, Azurite and scratch databases go away with it, also on Ctrl-C.
async fn scheduler(args: &Args, shoal: &ShoalBin) -> Result<()> {
    let plan = scheduler::SchedulerPlan {
        shoal,
        admin_url: &args.database_url,
        apps: args.scheduler_apps,
        tenants: args.scheduler_tenants,
        workers: args.scheduler_workers,
        repetitions: args.scheduler_repetitions,
        ticks: args.scheduler_ticks,
        rounds: args.scheduler_rounds,
        messages: args.reaction_messages,
        tick: Duration::from_millis(args.scheduler_tick_ms),
        // Short, so the reaction app is back at zero within seconds between rounds.
        scale_in_window: Duration::from_secs(2),
        worker_lease_ttl: Duration::from_secs(args.worker_lease_ttl_secs),
    };
    let mut figures = scheduler::SchedulerFigures::default();
    let outcome = tokio::select! {
        outcome = scheduler::run(&plan, &mut figures) => outcome,
        _ = tokio::signal::ctrl_c() => Err(Interrupted.into()),
    };
    println!();
    for line in report::scheduler::lines(&figures) {
        println!("{line}");
    }
    outcome
}

/// The queue part; its Azurites, the worker and the scratch database go away with it, also on
/// Ctrl-C. It fails only when Shoal's own figure was not measured: a failed reference is named
/// in its line.
async fn queue(args: &Args, shoal: &ShoalBin) -> Result<()> {
    let plan = queue::QueuePlan {
        shoal,
        admin_url: &args.database_url,
        messages: args.messages,
        rounds: args.rounds,
        batch_size: args.batch_size,
        new_batch_threshold: args.new_batch_threshold,
        python: args.python.clone(),
        venv: args.venv.clone(),
        scripts: args.scripts.clone(),
        timeout: Duration::from_secs(args.queue_timeout_secs),
    };
    let figures = tokio::select! {
        figures = queue::run(&plan) => figures?,
        _ = tokio::signal::ctrl_c() => return Err(Interrupted.into()),
    };
    println!();
    for line in report::queue::lines(&figures) {
        println!("{line}");
    }
    match figures.failure() {
        Some(why) => bail!("{why}"),
        None => Ok(()),
    }
}

/// The Service Bus part; its stand-ins, the worker and the scratch database go away with it,
/// also on Ctrl-C. It fails only when Shoal's own figure was not measured.
async fn service_bus(args: &Args, shoal: &ShoalBin) -> Result<()> {
    let plan = service_bus::ServiceBusPlan {
        shoal,
        admin_url: &args.database_url,
        messages: args.sb_messages,
        rounds: args.rounds,
        max_concurrent_calls: args.sb_max_concurrent_calls,
        timeout: Duration::from_secs(args.queue_timeout_secs),
    };
    // The client library can panic on a retry (docs/benchmarks.md, Service Bus dispatch): the
    // part then fails and the run goes on to the next part.
    let run =
        futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(service_bus::run(&plan)));
    let figures = tokio::select! {
        figures = run => match figures {
            Ok(figures) => figures?,
            Err(_) => bail!("the Service Bus client panicked (its message is on stderr)"),
        },
        _ = tokio::signal::ctrl_c() => return Err(Interrupted.into()),
    };
    println!();
    for line in report::service_bus::lines(&figures) {
        println!("{line}");
    }
    match &figures.shoal {
        Err(why) => bail!("{why}"),
        Ok(_) => Ok(()),
    }
}

/// The RabbitMQ part; the worker and the scratch database go away with it, also on Ctrl-C
/// (the private broker stays, as it does for the tests). It fails only when Shoal's own figure
/// was not measured.
async fn rabbitmq(args: &Args, shoal: &ShoalBin) -> Result<()> {
    let plan = rabbitmq::RabbitMqPlan {
        shoal,
        admin_url: &args.database_url,
        messages: args.rabbitmq_messages,
        rounds: args.rounds,
        timeout: Duration::from_secs(args.queue_timeout_secs),
    };
    let figures = tokio::select! {
        figures = rabbitmq::run(&plan) => figures?,
        _ = tokio::signal::ctrl_c() => return Err(Interrupted.into()),
    };
    println!();
    for line in report::rabbitmq::lines(&figures) {
        println!("{line}");
    }
    match &figures.shoal {
        Err(why) => bail!("{why}"),
        Ok(_) => Ok(()),
    }
}

/// The timer part; the worker and the scratch database go away with it, also on Ctrl-C. It
/// fails when Shoal's figure was not measured.
async fn timer(args: &Args, shoal: &ShoalBin) -> Result<()> {
    let plan = timer::TimerPlan {
        shoal,
        admin_url: &args.database_url,
        seconds: args.timer_seconds,
        functions: args.timer_functions,
    };
    let figures = tokio::select! {
        figures = timer::run(&plan) => figures?,
        _ = tokio::signal::ctrl_c() => return Err(Interrupted.into()),
    };
    println!();
    println!("{}", report::timer::line(&figures));
    Ok(())
}

/// The stream part; its brokers, the worker and the scratch database go away with it, also on
/// Ctrl-C. It fails only when Shoal's own figure was not measured.
async fn stream(args: &Args, shoal: &ShoalBin) -> Result<()> {
    let plan = stream::StreamPlan {
        shoal,
        admin_url: &args.database_url,
        events: args.stream_events,
        partitions: args.stream_partitions,
        rounds: args.rounds,
        timeout: Duration::from_secs(args.queue_timeout_secs),
    };
    let figures = tokio::select! {
        figures = stream::run(&plan) => figures?,
        _ = tokio::signal::ctrl_c() => return Err(Interrupted.into()),
    };
    println!();
    for line in report::stream::lines(&figures) {
        println!("{line}");
    }
    match &figures.shoal {
        Err(why) => bail!("{why}"),
        Ok(_) => Ok(()),
    }
}

/// The circuit breaker part; its Azurite, workers and scratch database go away with it, also
/// on Ctrl-C. It fails only when the reaction was not measured.
async fn breaker(args: &Args, shoal: &ShoalBin) -> Result<()> {
    let plan = breaker::BreakerPlan {
        shoal,
        admin_url: &args.database_url,
        rounds: args.rounds,
        messages: args.breaker_messages,
        measure: Duration::from_secs(args.breaker_measure_secs),
    };
    let figures = tokio::select! {
        figures = breaker::run(&plan) => figures?,
        _ = tokio::signal::ctrl_c() => return Err(Interrupted.into()),
    };
    println!();
    for line in report::breaker::lines(&figures) {
        println!("{line}");
    }
    match &figures.reaction {
        Err(why) => bail!("{why}"),
        Ok(_) => Ok(()),
    }
}

/// The dashboard part; its server, Chromium, Azurites, workers and scratch databases go away
/// with it, also on Ctrl-C. It fails when one of its figures was not measured.
async fn dashboard(args: &Args, shoal: &ShoalBin) -> Result<()> {
    let plan = dashboard::DashboardPlan {
        shoal,
        admin_url: &args.database_url,
        web_dist: args.web_dist.clone(),
        first_render_script: args.first_render_script.clone(),
        node: args.node.clone(),
        chromium: args.chromium.clone(),
        apps: args.dashboard_apps,
        loads: args.dashboard_loads,
        rounds: args.rounds,
        messages: args.messages,
        batch_size: args.batch_size,
        new_batch_threshold: args.new_batch_threshold,
        timeout: Duration::from_secs(args.queue_timeout_secs),
    };
    let figures = tokio::select! {
        figures = dashboard::run(&plan) => figures?,
        _ = tokio::signal::ctrl_c() => return Err(Interrupted.into()),
    };
    println!();
    for line in report::dashboard::lines(&figures) {
        println!("{line}");
    }
    match figures.failure() {
        Some(why) => bail!("{why}"),
        None => Ok(()),
    }
}

/// The tracing part; its sinks, servers, Azurites, workers and scratch databases go away with
/// it, also on Ctrl-C. It fails when a figure was not measured or export on exported nothing.
async fn tracing(args: &Args, shoal: &ShoalBin) -> Result<()> {
    let plan = traces::TracePlan {
        dispatch: queue::paired::PairedPlan {
            shoal,
            admin_url: &args.database_url,
            part: "tracing",
            figure: "trace export",
            rounds: args.rounds,
            messages: args.messages,
            batch_size: args.batch_size,
            new_batch_threshold: args.new_batch_threshold,
            timeout: Duration::from_secs(args.queue_timeout_secs),
        },
        warmup: Duration::from_secs(args.warmup_secs),
        duration: Duration::from_secs(args.duration_secs),
    };
    let figures = tokio::select! {
        figures = traces::run(&plan) => figures?,
        _ = tokio::signal::ctrl_c() => return Err(Interrupted.into()),
    };
    println!();
    for line in report::traces::lines(&figures) {
        println!("{line}");
    }
    match figures.failure() {
        Some(why) => bail!("{why}"),
        None => Ok(()),
    }
}
