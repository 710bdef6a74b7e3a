//! The Service Bus dispatch figures, against the local Service Bus stand-in (in the bench's own
//! process, a fresh one per round) and one trivial handler. Each figure drains a queue
//! preloaded with the same messages:
//!
//! * (b) the raw loop: the same client the worker uses (`shoal-connectors` over `azservicebus`)
//!   in a tight peek-lock loop — receive up to `maxConcurrentCalls`, complete each, receive
//!   again — with no handler;
//! * (a) Shoal: the real `shoal worker` process hosting one app whose `serviceBusTrigger`
//!   function runs `maxConcurrentCalls` invocations at once, receive → POST → complete; its CPU
//!   time during the drain is read from `/proc`.
//!
//! Both end when the entity's `ActiveMessageCount`, read through the management API as the
//! scaler reads it, is zero; Shoal's is timed from the handler's first request, the raw loop's
//! from its first batch in hand. The rounds alternate the two figures so drift on the machine
//! affects them alike. The stand-in runs in the bench's process, so its CPU time is not
//! separated from the raw loop's; the worker's CPU time is its own process's.

mod drain;

use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::json;
use shoal_connectors::ServiceBusNamespace;
use shoal_local_bus::{LocalBus, LocalBusConfig};
use shoal_testkit::ScratchDatabase;

use crate::drains::{Drain, DrainFigure};
use crate::queue::app::{self, AppBodies};
use crate::queue::figures::Rate;
use crate::queue::handler::Handler;
use crate::queue::process::Consumer;
use crate::queue::queues::wait_for_first_call;
use crate::server::{ShoalBin, free_addr};
use drain::Entity;

/// How long a consumer may take to call the handler for the first time.
const FIRST_CALL_TIMEOUT: Duration = Duration::from_secs(60);

pub struct ServiceBusPlan<'a> {
    pub shoal: &'a ShoalBin,
    pub admin_url: &'a str,
    /// Messages preloaded per figure and round.
    pub messages: u64,
    pub rounds: u32,
    /// The app's `maxConcurrentCalls`, and the raw loop's receive size.
    pub max_concurrent_calls: u32,
    /// The longest one drain may take.
    pub timeout: Duration,
}

/// What the Service Bus part measured.
#[derive(Clone, Debug)]
pub struct ServiceBusFigures {
    pub max_concurrent_calls: u32,
    /// Messages per second through `shoal worker`.
    pub shoal: Rate,
    /// Messages per second through the raw receive/complete loop.
    pub raw: Rate,
    pub worker_cpu_per_message: Option<Duration>,
}

const QUEUE_RAW: &str = "bench-raw";
const QUEUE_SHOAL: &str = "bench-shoal";

fn bus_config() -> Result<LocalBusConfig> {
    LocalBusConfig::from_json(&format!(
        r#"{{"UserConfig": {{"Namespaces": [{{"Name": "bench", "Queues": [
            {{"Name": "{QUEUE_RAW}", "Properties": {{"LockDuration": "PT5M"}}}},
            {{"Name": "{QUEUE_SHOAL}", "Properties": {{"LockDuration": "PT5M"}}}}
        ]}}]}}}}"#
    ))
    .context("the bench's local Service Bus configuration")
}

pub async fn run(plan: &ServiceBusPlan<'_>) -> Result<ServiceBusFigures> {
    if plan.messages == 0 || plan.rounds == 0 || plan.max_concurrent_calls == 0 {
        bail!("--sb-messages, --rounds and --sb-max-concurrent-calls must be positive");
    }
    eprintln!(
        "shoal-bench: service bus: {} rounds of {} messages per figure, each round on a fresh \
         local Service Bus stand-in, maxConcurrentCalls {}",
        plan.rounds, plan.messages, plan.max_concurrent_calls
    );
    let database = ScratchDatabase::create(plan.admin_url, "shoal_bench_service_bus").await?;
    let figures = rounds(plan, &database).await;
    let dropped = database.drop_now().await;
    let figures = figures?;
    dropped?;
    Ok(figures)
}

async fn rounds(
    plan: &ServiceBusPlan<'_>,
    database: &ScratchDatabase,
) -> Result<ServiceBusFigures> {
    plan.shoal.migrate(database.url()).await?;
    let handler = Handler::start().await?;
    let mut raw = DrainFigure::new("service bus", "messages");
    let mut shoal = DrainFigure::new("service bus", "messages");
    for round in 1..=plan.rounds {
        eprintln!("shoal-bench: service bus: round {round} of {}", plan.rounds);
        let bus = LocalBus::start(bus_config()?)
            .await
            .context("starting the local Service Bus stand-in")?;
        let namespace = ServiceBusNamespace::from_connection_string(
            &bus.connection_string(),
            &Default::default(),
        )
        .await
        .context("connecting to the stand-in")?;
        if raw.live() {
            let entity = Entity::connect(&bus, QUEUE_RAW)?;
            let drained = async {
                drain::preload(&namespace, QUEUE_RAW, plan.messages).await?;
                drain::raw_loop(&namespace, &entity, plan).await
            };
            raw.record("raw loop", round, drained.await);
        }
        if shoal.live() {
            let drained = shoal_round(plan, &bus, database, &handler).await;
            shoal.record("shoal", round, drained);
        }
        bus.shutdown().await;
        if !shoal.live() {
            break;
        }
    }
    Ok(ServiceBusFigures {
        max_concurrent_calls: plan.max_concurrent_calls,
        shoal: shoal.rate(),
        raw: raw.rate(),
        worker_cpu_per_message: shoal.cpu_per_item(),
    })
}

/// A connection of the bench's own to the round's stand-in.
async fn connect(bus: &LocalBus) -> Result<ServiceBusNamespace> {
    ServiceBusNamespace::from_connection_string(&bus.connection_string(), &Default::default())
        .await
        .context("connecting to the stand-in")
}

/// (a): the app written for this round's stand-in, the queue preloaded, then a `shoal worker`.
async fn shoal_round(
    plan: &ServiceBusPlan<'_>,
    bus: &LocalBus,
    database: &ScratchDatabase,
    handler: &Handler,
) -> Result<Drain> {
    let bodies = AppBodies {
        app: json!({
            "handler": {"url": handler.url()},
            "appSettings": {"ServiceBus": bus.connection_string()},
            "hostConfig": {"version": "2.0", "extensions": {"serviceBus": {
                "maxConcurrentCalls": plan.max_concurrent_calls,
            }}},
        }),
        function: json!({"bindings": [{
            "type": "serviceBusTrigger", "direction": "in", "name": "msg",
            "queueName": QUEUE_SHOAL, "connection": "ServiceBus",
        }]}),
    };
    app::write_app(plan.shoal, database, &bodies)
        .await
        .context("writing the app")?;
    drain::preload(&connect(bus).await?, QUEUE_SHOAL, plan.messages).await?;
    let entity = Entity::connect(bus, QUEUE_SHOAL)?;
    let mut command = plan.shoal.command(database.url());
    command.args(["worker", "--name", "shoal-bench", "--all-apps"]);
    command.args(["--listen", &free_addr()?.to_string()]);
    handler.tally().reset();
    let mut worker = Consumer::spawn("shoal worker", "sb-worker", command)?;
    let measured = async {
        wait_for_first_call(handler.tally(), FIRST_CALL_TIMEOUT, || worker.alive()).await?;
        let before = worker.cpu_time()?;
        let drained = drain::wait_until_drained(
            handler.tally(),
            &entity,
            plan.messages,
            plan.timeout,
            || worker.alive(),
        )
        .await?;
        Ok::<_, anyhow::Error>(Drain {
            cpu: worker.cpu_time()?.saturating_sub(before),
            ..drained
        })
    }
    .await;
    if measured.is_err() {
        let tail = worker.output_tail();
        if !tail.trim().is_empty() {
            eprintln!("shoal-bench: service bus: the worker's output ends with:\n{tail}");
        }
    }
    let stopped = worker.stop().await;
    let measured = measured?;
    stopped?;
    Ok(measured)
}
