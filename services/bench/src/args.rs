//! The command line: which parts run and each part's knobs.

use std::path::PathBuf;

use clap::Parser;

use crate::parts::Part;

#[derive(Debug, Parser)]
#[command(
    about = "Benchmarks Shoal's API against pgbench, its queue dispatch against the SDK ceiling \
             and a Python consumer, and its scheduler against references of the same run"
)]
pub struct Args {
    /// Run only this part (default: all of them, in the order `--help` lists them).
    #[arg(long, value_enum)]
    pub only: Option<Part>,
    /// Admin URL of the Postgres server; the bench creates (and drops) its own database there.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub database_url: String,
    /// The `shoal` binary (default: beside this one, else $CARGO_TARGET_DIR/release/shoal).
    #[arg(long, env = "SHOAL_BIN")]
    pub shoal_bin: Option<PathBuf>,
    /// Measured seconds per figure (after the warm-up).
    #[arg(long, default_value_t = 10)]
    pub duration_secs: u64,
    /// Unmeasured seconds before each figure.
    #[arg(long, default_value_t = 2)]
    pub warmup_secs: u64,
    /// Concurrent keep-alive connections (and pgbench clients).
    #[arg(long, default_value_t = 64)]
    pub connections: usize,
    /// Apps created before measuring; each request picks one at random.
    #[arg(long, default_value_t = 1000)]
    pub apps: usize,
    /// Threads of the load generator (it competes with the server for the same cores).
    #[arg(long, default_value_t = 2)]
    pub client_threads: usize,
    /// The pgbench binary.
    #[arg(long, env = "PGBENCH", default_value = "pgbench")]
    pub pgbench: PathBuf,
    /// Worker threads of pgbench (`-j`).
    #[arg(long, default_value_t = 2)]
    pub pgbench_threads: usize,
    /// Directory holding pgbench-get-app.sql, pgbench-put-app.sql, python-consumer.py and
    /// python-requirements.txt.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../../deploy/bench"))]
    pub scripts: PathBuf,
    /// Messages preloaded on an empty queue for each queue figure and round (Azurite slows down
    /// steeply, and loses messages, with many thousands on its queues).
    #[arg(long, default_value_t = 1_000)]
    pub messages: u64,
    /// Rounds of the three queue figures; each figure's rate is over all its rounds.
    #[arg(long, default_value_t = 5)]
    pub rounds: u32,
    /// The app's `hostConfig.extensions.queues.batchSize` (1-32).
    #[arg(long, default_value_t = 32)]
    pub batch_size: u8,
    /// Its `newBatchThreshold`; Shoal has up to batchSize + newBatchThreshold invocations in
    /// flight, and the Python consumer runs that many threads.
    #[arg(long, default_value_t = 16)]
    pub new_batch_threshold: u8,
    /// The Python that creates the reference consumer's virtual environment.
    #[arg(long, env = "PYTHON", default_value = "python3")]
    pub python: PathBuf,
    /// The reference consumer's virtual environment (created when missing).
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.shoal/bench-venv"))]
    pub venv: PathBuf,
    /// The longest one queue figure may take to drain its queue in one round.
    #[arg(long, default_value_t = 120)]
    pub queue_timeout_secs: u64,
    /// Messages preloaded for each Service Bus figure and round.
    #[arg(long, default_value_t = 2_000)]
    pub sb_messages: u64,
    /// Events preloaded for each stream figure and round.
    #[arg(long, default_value_t = 20_000)]
    pub stream_events: u64,
    /// Partitions of the stream figures' topics.
    #[arg(long, default_value_t = 4)]
    pub stream_partitions: i32,
    /// Messages preloaded for each RabbitMQ figure and round.
    #[arg(long, default_value_t = 5_000)]
    pub rabbitmq_messages: u64,
    /// Occurrences each timer function fires in the timer figure (one a second).
    #[arg(long, default_value_t = 20)]
    pub timer_seconds: u64,
    /// Timer functions firing every second side by side in the timer figure.
    #[arg(long, default_value_t = 10)]
    pub timer_functions: usize,
    /// Messages preloaded for each circuit breaker figure.
    #[arg(long, default_value_t = 1_000)]
    pub breaker_messages: u64,
    /// Measured seconds of each breaker counting figure (after a 2 s warm-up).
    #[arg(long, default_value_t = 10)]
    pub breaker_measure_secs: u64,
    /// The Service Bus app's `maxConcurrentCalls`, and the raw loop's messages per receive.
    #[arg(long, default_value_t = 16)]
    pub sb_max_concurrent_calls: u32,
    /// Apps of the scheduler's pure figure and of its ticks against Postgres.
    #[arg(long, default_value_t = 10_000)]
    pub scheduler_apps: usize,
    /// Tenants the tick figure spreads its apps over.
    #[arg(long, default_value_t = 100)]
    pub scheduler_tenants: usize,
    /// Workers of the pure and tick figures.
    #[arg(long, default_value_t = 100)]
    pub scheduler_workers: usize,
    /// Repetitions of the pure figure (median reported).
    #[arg(long, default_value_t = 20)]
    pub scheduler_repetitions: usize,
    /// Steady ticks after the cold one (median reported).
    #[arg(long, default_value_t = 10)]
    pub scheduler_ticks: usize,
    /// Rounds of the reaction and the failover figures (medians reported).
    #[arg(long, default_value_t = 5)]
    pub scheduler_rounds: u32,
    /// Messages enqueued on the idle app in each reaction round.
    #[arg(long, default_value_t = 200)]
    pub reaction_messages: u64,
    /// `shoal scheduler --tick` for the reaction and failover figures, in milliseconds.
    #[arg(long, default_value_t = 1_000)]
    pub scheduler_tick_ms: u64,
    /// `shoal worker --lease-ttl` for the reaction and failover figures, in seconds.
    #[arg(long, default_value_t = 5)]
    pub worker_lease_ttl_secs: u64,
    /// Concurrent connections of the webhook throughput figures (latency is measured with one).
    #[arg(long, default_value_t = 32)]
    pub webhook_connections: usize,
    /// The built dashboard whose bundle is measured and served (`make web`).
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../../web/dist"))]
    pub web_dist: PathBuf,
    /// The script that loads the dashboard in Chromium (it needs web/node_modules).
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../../web/bench/first-render.mjs"))]
    pub first_render_script: PathBuf,
    /// Node.js, which runs the first-render script.
    #[arg(long, env = "NODE", default_value = "node")]
    pub node: PathBuf,
    /// The Chromium the first-render script drives (headless).
    #[arg(long, env = "CHROMIUM", default_value = "/usr/bin/chromium")]
    pub chromium: PathBuf,
    /// Apps of the tenant whose list the first-render figure loads.
    #[arg(long, default_value_t = 1_000)]
    pub dashboard_apps: usize,
    /// Cold loads of each apps view in the first-render figure (median reported).
    #[arg(long, default_value_t = 7)]
    pub dashboard_loads: usize,
}
