//! The stream dispatch figure, against a real Kafka-protocol broker (tansu, a fresh one per
//! round) and one trivial handler. Each figure drains a topic preloaded with the same events:
//!
//! * (b) the raw loop: the same client the worker uses (`shoal_connectors::kafka` over rdkafka)
//!   in a tight consume-and-commit loop — fetch up to the batch size, commit the next offsets,
//!   fetch again — with no handler;
//! * (a) Shoal: the real `shoal worker` process hosting one app whose `kafkaTrigger` function
//!   (`cardinality: many`) fetches a batch, POSTs it to the handler and commits; its CPU time
//!   during the drain is read from `/proc`.
//!
//! Both end when the group's lag, read from outside the group as the scaler reads it, is zero;
//! Shoal's is timed from the handler's first request, the raw loop's from its first batch in
//! hand. The rounds alternate the two figures so drift on the machine affects them alike.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use futures::future::try_join_all;
use serde_json::json;
use shoal_connectors::kafka::{
    KafkaProperties, OutgoingRecord, StreamConsumer, StreamProducer, consumer_lag,
};
use shoal_domain::stream_trigger::StartFrom;
use shoal_testkit::ScratchDatabase;
use shoal_testkit::kafka::TansuBroker;

use crate::drains::{Drain, DrainFigure, worker_round};
use crate::queue::app::{self, AppBodies};
use crate::queue::figures::Rate;
use crate::queue::handler::Handler;
use crate::server::ShoalBin;

const TOPIC_RAW: &str = "bench-raw";
const TOPIC_SHOAL: &str = "bench-shoal";
const GROUP_RAW: &str = "bench-raw";
const GROUP_SHOAL: &str = "bench-shoal";
/// The Kafka extension's `MaxBatchSize`, the batch both sides take.
const BATCH: usize = 64;

pub struct StreamPlan<'a> {
    pub shoal: &'a ShoalBin,
    pub admin_url: &'a str,
    /// Events preloaded per figure and round.
    pub events: u64,
    pub partitions: i32,
    pub rounds: u32,
    /// The longest one drain may take.
    pub timeout: Duration,
}

/// What the stream part measured.
#[derive(Clone, Debug)]
pub struct StreamFigures {
    pub partitions: i32,
    /// Events per second through `shoal worker`.
    pub shoal: Rate,
    /// Events per second through the raw consume-and-commit loop.
    pub raw: Rate,
    pub worker_cpu_per_event: Option<Duration>,
}

pub async fn run(plan: &StreamPlan<'_>) -> Result<StreamFigures> {
    if plan.events == 0 || plan.rounds == 0 || plan.partitions <= 0 {
        bail!("--stream-events, --rounds and --stream-partitions must be positive");
    }
    eprintln!(
        "shoal-bench: stream: {} rounds of {} events per figure on {} partitions, each round on a \
         fresh tansu broker, batches of {BATCH}",
        plan.rounds, plan.events, plan.partitions
    );
    let database = ScratchDatabase::create(plan.admin_url, "shoal_bench_stream").await?;
    let figures = rounds(plan, &database).await;
    let dropped = database.drop_now().await;
    let figures = figures?;
    dropped?;
    Ok(figures)
}

async fn rounds(plan: &StreamPlan<'_>, database: &ScratchDatabase) -> Result<StreamFigures> {
    plan.shoal.migrate(database.url()).await?;
    let handler = Handler::start().await?;
    let mut raw = DrainFigure::new("stream", "events");
    let mut shoal = DrainFigure::new("stream", "events");
    for round in 1..=plan.rounds {
        eprintln!("shoal-bench: stream: round {round} of {}", plan.rounds);
        let broker = TansuBroker::start().await.context("starting tansu")?;
        let properties = properties(&broker);
        // Alternate which side goes first, so the broker's state favours neither.
        let raw_first = round % 2 == 1;
        for side in [raw_first, !raw_first] {
            if side && raw.live() {
                let drained = raw_round(plan, &broker, &properties).await;
                raw.record("raw loop", round, drained);
            } else if !side && shoal.live() {
                let drained = shoal_round(plan, &broker, &properties, database, &handler).await;
                shoal.record("shoal", round, drained);
            }
        }
        if !shoal.live() {
            break;
        }
    }
    Ok(StreamFigures {
        partitions: plan.partitions,
        shoal: shoal.rate(),
        raw: raw.rate(),
        worker_cpu_per_event: shoal.cpu_per_item(),
    })
}

fn properties(broker: &TansuBroker) -> KafkaProperties {
    let mut properties = KafkaProperties::new();
    properties.set("bootstrap.servers", broker.bootstrap());
    properties
}

/// Creates `topic` and writes `count` events spread over its partitions.
async fn preload(
    broker: &TansuBroker,
    properties: &KafkaProperties,
    topic: &str,
    plan: &StreamPlan<'_>,
) -> Result<()> {
    broker.create_topic(topic, plan.partitions).await?;
    let producer = StreamProducer::new(properties)?;
    for chunk in (0..plan.events).collect::<Vec<_>>().chunks(500) {
        try_join_all(chunk.iter().map(|i| {
            producer.send(
                topic,
                OutgoingRecord {
                    key: None,
                    value: format!("{{\"event\":{i}}}").into_bytes(),
                    headers: Vec::new(),
                    partition: Some((*i % plan.partitions as u64) as i32),
                },
            )
        }))
        .await
        .with_context(|| format!("preloading {topic}"))?;
    }
    Ok(())
}

/// (b): fetch, commit, fetch again, until every event was taken.
async fn raw_round(
    plan: &StreamPlan<'_>,
    broker: &TansuBroker,
    properties: &KafkaProperties,
) -> Result<Drain> {
    preload(broker, properties, TOPIC_RAW, plan).await?;
    let consumer = StreamConsumer::subscribe(
        properties,
        GROUP_RAW,
        TOPIC_RAW,
        StartFrom::Earliest,
        "bench-raw",
    )?;
    let deadline = Instant::now() + plan.timeout;
    let mut taken = 0u64;
    let mut first = None;
    while taken < plan.events {
        if Instant::now() >= deadline {
            bail!(
                "{taken}/{} events in {} s",
                plan.events,
                plan.timeout.as_secs()
            );
        }
        let events = consumer.fetch(BATCH, Duration::from_secs(1)).await?;
        if events.is_empty() {
            continue;
        }
        first.get_or_insert_with(Instant::now);
        let next = shoal_domain::stream_trigger::next_offsets(
            events.iter().map(|e| (e.partition, e.offset)),
        );
        consumer.commit(TOPIC_RAW, &next).await?;
        taken += events.len() as u64;
    }
    wait_until_no_lag(properties, GROUP_RAW, TOPIC_RAW, deadline).await?;
    let elapsed = first.map_or(Duration::ZERO, |f| f.elapsed());
    consumer.close().await;
    Ok(Drain {
        items: plan.events,
        elapsed,
        cpu: Duration::ZERO,
    })
}

/// (a): the app written for this round's broker, the topic preloaded, then a `shoal worker`.
async fn shoal_round(
    plan: &StreamPlan<'_>,
    broker: &TansuBroker,
    properties: &KafkaProperties,
    database: &ScratchDatabase,
    handler: &Handler,
) -> Result<Drain> {
    let bodies = AppBodies {
        app: json!({
            "handler": {"url": handler.url()},
            "appSettings": {"Brokers": broker.bootstrap()},
        }),
        function: json!({"bindings": [{
            "type": "kafkaTrigger", "direction": "in", "name": "events",
            "brokerList": "%Brokers%", "topic": TOPIC_SHOAL, "consumerGroup": GROUP_SHOAL,
            "cardinality": "many",
        }]}),
    };
    app::write_app(plan.shoal, database, &bodies)
        .await
        .context("writing the app")?;
    preload(broker, properties, TOPIC_SHOAL, plan).await?;
    let drained = || {
        let deadline = Instant::now() + plan.timeout;
        wait_until_no_lag(properties, GROUP_SHOAL, TOPIC_SHOAL, deadline)
    };
    worker_round(
        plan.shoal,
        database.url(),
        "stream",
        handler,
        plan.events,
        drained,
    )
    .await
}

async fn wait_until_no_lag(
    properties: &KafkaProperties,
    group: &str,
    topic: &str,
    deadline: Instant,
) -> Result<()> {
    loop {
        let lag = consumer_lag(properties, group, topic).await?.total;
        if lag == 0 {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!("{lag} events still not committed by {group}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
