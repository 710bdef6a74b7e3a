//! `shoal-bench` measures, in one run, three parts of Shoal against references measured minutes
//! apart on the same machine, and prints each figure as a ratio, so a result means the same on
//! any machine:
//!
//! * `api`: the management API under load and, on the same database, pgbench executing the SQL
//!   the store executes for the same operation: what fraction of the database's own single-row
//!   throughput survives the HTTP, auth, JSON and encryption layers above it. The part creates a
//!   fresh database on the admin `DATABASE_URL`, migrates it, starts `shoal serve`, loads 1,000
//!   apps, measures GET then PUT of one app, runs pgbench for each, prints the table, and always
//!   stops the server and drops the database, also when something failed.
//! * `queue`: Storage Queue dispatch by one `shoal worker` against Azurite, next to the SDK's
//!   own ceiling and a Python consumer written with the official SDK (see [`queue`]).
//! * `service-bus`: Service Bus dispatch by one `shoal worker` against the local Service Bus
//!   stand-in, next to a raw receive/complete loop with the same client (see [`service_bus`]).
//! * `stream`: Kafka dispatch by one `shoal worker` against a tansu broker, next to a raw
//!   consume-and-commit loop with the same client (see [`stream`]).
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
//!
//! A part that fails is reported and the next one runs; the exit code is non-zero only when a
//! part could not measure Shoal's own figures (see [`parts`]).

mod breaker;
mod dashboard;
mod database;
mod drains;
mod http;
mod load;
mod parts;
mod pgbench;
mod queue;
mod report;
mod scheduler;
mod server;
mod service_bus;
mod stream;
mod webhooks;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use clap::Parser;
use hyper::Method;

use crate::load::LoadPlan;
use crate::parts::{Interrupted, Outcome, Part};
use crate::report::{Figure, Goal};
use crate::server::{Server, ShoalBin};
use shoal_testkit::ScratchDatabase;

/// The tenant the bench creates its apps in.
const TENANT: &str = "bench";
/// A realistic app body: a handler and a few settings, one of them a secret.
const APP_BODY: &str = r#"{"handler":{"url":"http://127.0.0.1:9/handler"},"appSettings":{"AzureWebJobsStorage":"UseDevelopmentStorage=true","MySecret":"s3cr3t"}}"#;
/// More failed requests than this fraction fails the run.
const MAX_ERROR_RATE: f64 = 0.001;

#[derive(Debug, Parser)]
#[command(
    about = "Benchmarks Shoal's API against pgbench, its queue dispatch against the SDK ceiling \
             and a Python consumer, and its scheduler against references of the same run"
)]
struct Args {
    /// Run only this part (default: all of them, api, queue, scheduler, then webhooks).
    #[arg(long, value_enum)]
    only: Option<Part>,
    /// Admin URL of the Postgres server; the bench creates (and drops) its own database there.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    database_url: String,
    /// The `shoal` binary (default: beside this one, else $CARGO_TARGET_DIR/release/shoal).
    #[arg(long, env = "SHOAL_BIN")]
    shoal_bin: Option<PathBuf>,
    /// Measured seconds per figure (after the warm-up).
    #[arg(long, default_value_t = 10)]
    duration_secs: u64,
    /// Unmeasured seconds before each figure.
    #[arg(long, default_value_t = 2)]
    warmup_secs: u64,
    /// Concurrent keep-alive connections (and pgbench clients).
    #[arg(long, default_value_t = 64)]
    connections: usize,
    /// Apps created before measuring; each request picks one at random.
    #[arg(long, default_value_t = 1000)]
    apps: usize,
    /// Threads of the load generator (it competes with the server for the same cores).
    #[arg(long, default_value_t = 2)]
    client_threads: usize,
    /// The pgbench binary.
    #[arg(long, env = "PGBENCH", default_value = "pgbench")]
    pgbench: PathBuf,
    /// Worker threads of pgbench (`-j`).
    #[arg(long, default_value_t = 2)]
    pgbench_threads: usize,
    /// Directory holding pgbench-get-app.sql, pgbench-put-app.sql, python-consumer.py and
    /// python-requirements.txt.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../../deploy/bench"))]
    scripts: PathBuf,
    /// Messages preloaded on an empty queue for each queue figure and round (Azurite slows down
    /// steeply, and loses messages, with many thousands on its queues).
    #[arg(long, default_value_t = 1_000)]
    messages: u64,
    /// Rounds of the three queue figures; each figure's rate is over all its rounds.
    #[arg(long, default_value_t = 5)]
    rounds: u32,
    /// The app's `hostConfig.extensions.queues.batchSize` (1-32).
    #[arg(long, default_value_t = 32)]
    batch_size: u8,
    /// Its `newBatchThreshold`; Shoal has up to batchSize + newBatchThreshold invocations in
    /// flight, and the Python consumer runs that many threads.
    #[arg(long, default_value_t = 16)]
    new_batch_threshold: u8,
    /// The Python that creates the reference consumer's virtual environment.
    #[arg(long, env = "PYTHON", default_value = "python3")]
    python: PathBuf,
    /// The reference consumer's virtual environment (created when missing).
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.shoal/bench-venv"))]
    venv: PathBuf,
    /// The longest one queue figure may take to drain its queue in one round.
    #[arg(long, default_value_t = 120)]
    queue_timeout_secs: u64,
    /// Messages preloaded for each Service Bus figure and round.
    #[arg(long, default_value_t = 2_000)]
    sb_messages: u64,
    /// Events preloaded for each stream figure and round.
    #[arg(long, default_value_t = 20_000)]
    stream_events: u64,
    /// Partitions of the stream figures' topics.
    #[arg(long, default_value_t = 4)]
    stream_partitions: i32,
    /// Messages preloaded for each circuit breaker figure.
    #[arg(long, default_value_t = 1_000)]
    breaker_messages: u64,
    /// Measured seconds of each breaker counting figure (after a 2 s warm-up).
    #[arg(long, default_value_t = 10)]
    breaker_measure_secs: u64,
    /// The Service Bus app's `maxConcurrentCalls`, and the raw loop's messages per receive.
    #[arg(long, default_value_t = 16)]
    sb_max_concurrent_calls: u32,
    /// Apps of the scheduler's pure figure and of its ticks against Postgres.
    #[arg(long, default_value_t = 10_000)]
    scheduler_apps: usize,
    /// Tenants the tick figure spreads its apps over.
    #[arg(long, default_value_t = 100)]
    scheduler_tenants: usize,
    /// Workers of the pure and tick figures.
    #[arg(long, default_value_t = 100)]
    scheduler_workers: usize,
    /// Repetitions of the pure figure (median reported).
    #[arg(long, default_value_t = 20)]
    scheduler_repetitions: usize,
    /// Steady ticks after the cold one (median reported).
    #[arg(long, default_value_t = 10)]
    scheduler_ticks: usize,
    /// Rounds of the reaction and the failover figures (medians reported).
    #[arg(long, default_value_t = 5)]
    scheduler_rounds: u32,
    /// Messages enqueued on the idle app in each reaction round.
    #[arg(long, default_value_t = 200)]
    reaction_messages: u64,
    /// `shoal scheduler --tick` for the reaction and failover figures, in milliseconds.
    #[arg(long, default_value_t = 1_000)]
    scheduler_tick_ms: u64,
    /// `shoal worker --lease-ttl` for the reaction and failover figures, in seconds.
    #[arg(long, default_value_t = 5)]
    worker_lease_ttl_secs: u64,
    /// Concurrent connections of the webhook throughput figures (latency is measured with one).
    #[arg(long, default_value_t = 32)]
    webhook_connections: usize,
    /// The built dashboard whose bundle is measured and served (`make web`).
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../../web/dist"))]
    web_dist: PathBuf,
    /// The script that loads the dashboard in Chromium (it needs web/node_modules).
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../../web/bench/first-render.mjs"))]
    first_render_script: PathBuf,
    /// Node.js, which runs the first-render script.
    #[arg(long, env = "NODE", default_value = "node")]
    node: PathBuf,
    /// The Chromium the first-render script drives (headless).
    #[arg(long, env = "CHROMIUM", default_value = "/usr/bin/chromium")]
    chromium: PathBuf,
    /// Apps of the tenant whose list the first-render figure loads.
    #[arg(long, default_value_t = 1_000)]
    dashboard_apps: usize,
    /// Cold loads of each apps view in the first-render figure (median reported).
    #[arg(long, default_value_t = 7)]
    dashboard_loads: usize,
}

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
            Part::Api => api(args, &shoal).await,
            Part::Queue => queue(args, &shoal).await,
            Part::ServiceBus => service_bus(args, &shoal).await,
            Part::Stream => stream(args, &shoal).await,
            Part::Scheduler => scheduler(args, &shoal).await,
            Part::Webhooks => webhooks(args, &shoal).await,
            Part::Breaker => breaker(args, &shoal).await,
            Part::Dashboard => dashboard(args, &shoal).await,
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
        .any(|result| result.error_rate() > MAX_ERROR_RATE);
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

/// The API part. Owns the database: whatever happens in between, it is dropped at the end.
async fn api(args: &Args, shoal: &ShoalBin) -> Result<()> {
    if args.connections == 0 || args.apps == 0 || args.duration_secs == 0 {
        bail!("--connections, --apps and --duration-secs must be positive");
    }
    let database = ScratchDatabase::create(&args.database_url, "shoal_bench").await?;
    eprintln!("shoal-bench: database {}", database.name());
    let outcome = tokio::select! {
        outcome = with_server(args, shoal, &database) => outcome,
        _ = tokio::signal::ctrl_c() => Err(Interrupted.into()),
    };
    let dropped = database.drop_now().await;
    outcome.and(dropped)
}

/// Owns the server: it is stopped whatever the measurement's outcome.
async fn with_server(args: &Args, shoal: &ShoalBin, database: &ScratchDatabase) -> Result<()> {
    shoal.migrate(database.url()).await?;
    let server = Server::start(shoal, database.url()).await?;
    let outcome = measure(args, shoal, &server, database).await;
    let stopped = server.stop().await;
    outcome.and(stopped)
}

async fn measure(
    args: &Args,
    shoal: &ShoalBin,
    server: &Server,
    database: &ScratchDatabase,
) -> Result<()> {
    let token = shoal.platform_admin_token(server).await?;
    let body = Bytes::from_static(APP_BODY.as_bytes());
    load::create_tenant_and_apps(server.addr(), &token, TENANT, args.apps, &body).await?;
    eprintln!(
        "shoal-bench: tenant `{TENANT}` with {} apps created",
        args.apps
    );

    let plan = |method: Method, body: Option<Bytes>| LoadPlan {
        addr: server.addr(),
        token: token.clone(),
        tenant: TENANT,
        apps: args.apps,
        connections: args.connections,
        warmup: Duration::from_secs(args.warmup_secs),
        duration: Duration::from_secs(args.duration_secs),
        method,
        body,
    };
    let pgbench = pgbench::Pgbench {
        program: args.pgbench.clone(),
        url: database.url().to_owned(),
        role: database::app_role(database.url()).await?,
        clients: args.connections,
        threads: args.pgbench_threads,
        warmup: Duration::from_secs(args.warmup_secs),
        duration: Duration::from_secs(args.duration_secs),
    };
    // The issue sets goals for GET only: at least 0.4 of pgbench's rate, p99 under 10 ms.
    let get_goal = Goal {
        min_ratio: Some(0.40),
        max_p99: Some(Duration::from_millis(10)),
    };
    let put_goal = Goal {
        min_ratio: None,
        max_p99: None,
    };

    let get_variables = vec![
        ("tenant", TENANT.to_owned()),
        ("apps", args.apps.to_string()),
    ];
    let mut put_variables = get_variables.clone();
    put_variables.extend(stored_app_variables());

    let mut figures = Vec::new();
    for (name, method, body, script, variables, goal) in [
        (
            "GET app",
            Method::GET,
            None,
            "pgbench-get-app.sql",
            get_variables,
            get_goal,
        ),
        (
            "PUT app",
            Method::PUT,
            Some(body.clone()),
            "pgbench-put-app.sql",
            put_variables,
            put_goal,
        ),
    ] {
        eprintln!(
            "shoal-bench: {name}: shoal, {} connections",
            args.connections
        );
        let shoal_load = load::run(plan(method, body)).await?;
        eprintln!("shoal-bench: {name}: pgbench {script}");
        let tps = pgbench.run(&args.scripts.join(script), &variables).await?;
        figures.push(Figure {
            name,
            shoal: shoal_load,
            pgbench_tps: tps,
            goal,
        });
    }

    println!();
    for figure in &figures {
        println!("{}", report::line(figure));
    }
    let failed: Vec<String> = figures
        .iter()
        .filter(|figure| figure.shoal.error_rate() > MAX_ERROR_RATE)
        .map(report::errors)
        .collect();
    if !failed.is_empty() {
        bail!("too many failed requests: {}", failed.join("; "));
    }
    Ok(())
}

/// What the store writes for [`APP_BODY`], as pgbench-put-app.sql's variables: the spec without
/// settings, and the settings with values sealed the way AES-256-GCM seals them (12-byte nonce,
/// ciphertext as long as the value, 16-byte tag), so rows have the size Shoal's have.
fn stored_app_variables() -> Vec<(&'static str, String)> {
    let sealed = |value: &str| {
        let bytes: Vec<u8> = (0..12 + value.len() + 16).map(|_| rand::random()).collect();
        let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
        // An element of a Postgres array literal: `"\\x…"`, its backslash escaped.
        format!(r#""\\x{hex}""#)
    };
    let vals = format!(
        "{{{},{}}}",
        sealed("UseDevelopmentStorage=true"),
        sealed("s3cr3t")
    );
    vec![
        (
            "spec",
            r#"{"handler":{"url":"http://127.0.0.1:9/handler"}}"#.to_owned(),
        ),
        ("names", "{AzureWebJobsStorage,MySecret}".to_owned()),
        ("vals", vals),
        ("secrets", "{f,t}".to_owned()),
        // The audit entry's principal: the token's subject.
        ("principal", "bench".to_owned()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_settings_are_array_literals_of_aes_gcm_sized_bytea() {
        let variables: std::collections::HashMap<_, _> =
            stored_app_variables().into_iter().collect();
        let vals = &variables["vals"];
        let elements: Vec<&str> = vals
            .trim_start_matches('{')
            .trim_end_matches('}')
            .split(',')
            .collect();
        let hex_lengths: Vec<usize> = elements
            .iter()
            .map(|element| {
                element
                    .trim_start_matches(r#""\\x"#)
                    .trim_end_matches('"')
                    .len()
            })
            .collect();
        assert_eq!(
            hex_lengths,
            [2 * (12 + 26 + 16), 2 * (12 + 6 + 16)],
            "{vals}"
        );
        assert!(elements.iter().all(|e| e.starts_with(r#""\\x"#)), "{vals}");
    }
}
