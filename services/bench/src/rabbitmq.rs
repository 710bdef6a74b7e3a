//! The RabbitMQ dispatch figure, against a real broker (the checkout's private one,
//! `deploy/local/rabbitmq.sh`, or `SHOAL_RABBITMQ_URL`) and one trivial handler. Each figure
//! drains a queue preloaded with the same persistent messages:
//!
//! * (b) the raw loop: the same client the worker uses (`shoal_connectors::amqp` over `lapin`)
//!   consuming with the same `basic.qos` (Azure's default `prefetchCount`, 30) and
//!   acknowledging each delivery as it arrives, with no handler;
//! * (a) Shoal: the real `shoal worker` process hosting one app whose `rabbitMQTrigger`
//!   function takes the same prefetch, POSTs each message to the handler and acknowledges it
//!   once answered; its CPU time during the drain is read from `/proc`.
//!
//! The raw loop is timed from its first delivery to its last acknowledgement, Shoal from the
//! handler's first request until the handler has had every message and the queue, read as the
//! scaler reads it, has none ready. The rounds alternate
//! the two figures so drift on the machine affects them alike.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use futures::StreamExt as _;
use serde_json::json;
use shoal_connectors::amqp::lapin::options::{
    BasicAckOptions, BasicConsumeOptions, BasicPublishOptions, BasicQosOptions,
    QueueDeclareOptions, QueuePurgeOptions,
};
use shoal_connectors::amqp::lapin::types::FieldTable;
use shoal_connectors::amqp::lapin::{BasicProperties, Channel};
use shoal_connectors::amqp::{self, Confirms, Opened};
use shoal_domain::egress::{AllowList, EgressPolicy};
use shoal_domain::trigger_source::without_credentials;
use shoal_egress::Egress;
use shoal_testkit::ScratchDatabase;

use crate::drains::{Drain, DrainFigure, worker_round};
use crate::queue::app::{self, AppBodies};
use crate::queue::figures::Rate;
use crate::queue::handler::Handler;
use crate::server::ShoalBin;

const QUEUE_RAW: &str = "shoal-bench-raw";
const QUEUE_SHOAL: &str = "shoal-bench-shoal";
/// Azure's default `prefetchCount` (`RabbitMQOptions`), which both sides take.
pub const PREFETCH: u16 = 30;
/// The bench's messages: as small as the other dispatch figures'.
const BODY: &[u8] = br#"{"order":1}"#;

pub struct RabbitMqPlan<'a> {
    pub shoal: &'a ShoalBin,
    pub admin_url: &'a str,
    /// Messages preloaded per figure and round.
    pub messages: u64,
    pub rounds: u32,
    /// The longest one drain may take.
    pub timeout: Duration,
}

/// What the RabbitMQ part measured.
#[derive(Clone, Debug)]
pub struct RabbitMqFigures {
    /// Messages per second through `shoal worker`.
    pub shoal: Rate,
    /// Messages per second through the raw consume/ack loop.
    pub raw: Rate,
    pub worker_cpu_per_message: Option<Duration>,
}

pub async fn run(plan: &RabbitMqPlan<'_>) -> Result<RabbitMqFigures> {
    if plan.messages == 0 || plan.rounds == 0 {
        bail!("--rabbitmq-messages and --rounds must be positive");
    }
    let url = shoal_testkit::rabbitmq::url().context("starting or finding the broker")?;
    eprintln!(
        "shoal-bench: rabbitmq: {} rounds of {} messages per figure, prefetch {PREFETCH}",
        plan.rounds, plan.messages
    );
    let database = ScratchDatabase::create(plan.admin_url, "shoal_bench_rabbitmq").await?;
    let figures = rounds(plan, &url, &database).await;
    let dropped = database.drop_now().await;
    let figures = figures?;
    dropped?;
    Ok(figures)
}

async fn rounds(
    plan: &RabbitMqPlan<'_>,
    url: &str,
    database: &ScratchDatabase,
) -> Result<RabbitMqFigures> {
    plan.shoal.migrate(database.url()).await?;
    let handler = Handler::start().await?;
    let admin = open(url, "shoal-bench admin").await?;
    let mut raw = DrainFigure::new("rabbitmq", "messages");
    let mut shoal = DrainFigure::new("rabbitmq", "messages");
    for round in 1..=plan.rounds {
        eprintln!("shoal-bench: rabbitmq: round {round} of {}", plan.rounds);
        let raw_first = round % 2 == 1;
        for side in [raw_first, !raw_first] {
            if side && raw.live() {
                let drained = raw_round(plan, url, &admin.channel).await;
                raw.record("raw loop", round, drained);
            } else if !side && shoal.live() {
                let drained = shoal_round(plan, url, &admin.channel, database, &handler).await;
                shoal.record("shoal", round, drained);
            }
        }
        if !shoal.live() {
            break;
        }
    }
    let _ = admin.connection.close(200, "bench done".into()).await;
    Ok(RabbitMqFigures {
        shoal: shoal.rate(),
        raw: raw.rate(),
        worker_cpu_per_message: shoal.cpu_per_item(),
    })
}

async fn open(url: &str, name: &str) -> Result<Opened> {
    // The private broker listens on loopback, which the policy refuses unless allowed.
    let allow = AllowList::parse(shoal_testkit::EGRESS_ALLOW_LOOPBACK)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let egress = Egress::new(EgressPolicy::new(allow, Vec::new()));
    amqp::channel(url, &egress, name, Confirms::On, 64 * 1024)
        .await
        .with_context(|| format!("connecting to {}", without_credentials(url)))
}

/// Declares `queue` empty and publishes the round's messages to it, each confirmed.
async fn preload(channel: &Channel, queue: &str, messages: u64) -> Result<()> {
    channel
        .queue_declare(
            queue.into(),
            QueueDeclareOptions {
                durable: true,
                ..QueueDeclareOptions::default()
            },
            FieldTable::default(),
        )
        .await?;
    channel
        .queue_purge(queue.into(), QueuePurgeOptions::default())
        .await?;
    let mut sent = 0;
    while sent < messages {
        let chunk = (messages - sent).min(500);
        let mut confirms = Vec::with_capacity(chunk as usize);
        for _ in 0..chunk {
            confirms.push(
                channel
                    .basic_publish(
                        "".into(),
                        queue.into(),
                        BasicPublishOptions::default(),
                        BODY,
                        BasicProperties::default().with_delivery_mode(2),
                    )
                    .await?,
            );
        }
        for confirm in confirms {
            if !confirm.await?.is_ack() {
                bail!("the broker refused a preloaded message");
            }
        }
        sent += chunk;
    }
    Ok(())
}

/// Messages ready in `queue` (a passive declare, as the scaler reads it).
async fn ready(channel: &Channel, queue: &str) -> Result<u32> {
    let declared = channel
        .queue_declare(
            queue.into(),
            QueueDeclareOptions {
                passive: true,
                ..QueueDeclareOptions::default()
            },
            FieldTable::default(),
        )
        .await?;
    Ok(declared.message_count())
}

/// (b): consume with the same prefetch and acknowledge each delivery.
async fn raw_round(plan: &RabbitMqPlan<'_>, url: &str, admin: &Channel) -> Result<Drain> {
    preload(admin, QUEUE_RAW, plan.messages).await?;
    let consumer = open(url, "shoal-bench raw loop").await?;
    let channel = &consumer.channel;
    channel
        .basic_qos(PREFETCH, BasicQosOptions::default())
        .await?;
    let mut deliveries = channel
        .basic_consume(
            QUEUE_RAW.into(),
            "shoal-bench-raw".into(),
            BasicConsumeOptions::default(),
            FieldTable::default(),
        )
        .await?;
    let deadline = tokio::time::Instant::now() + plan.timeout;
    let mut first = None;
    let mut taken = 0u64;
    while taken < plan.messages {
        let next = tokio::time::timeout_at(deadline, deliveries.next()).await;
        let delivery = match next {
            Ok(Some(delivery)) => delivery?,
            Ok(None) => bail!("the consumer ended after {taken} messages"),
            Err(_) => bail!(
                "{taken}/{} messages in {} s",
                plan.messages,
                plan.timeout.as_secs()
            ),
        };
        first.get_or_insert_with(Instant::now);
        channel
            .basic_ack(delivery.delivery_tag, BasicAckOptions::default())
            .await?;
        taken += 1;
    }
    let elapsed = first.map_or(Duration::ZERO, |f| f.elapsed());
    let _ = consumer.connection.close(200, "round done".into()).await;
    Ok(Drain {
        items: plan.messages,
        elapsed,
        cpu: Duration::ZERO,
    })
}

/// (a): the app written for the broker, the queue preloaded, then a `shoal worker`.
async fn shoal_round(
    plan: &RabbitMqPlan<'_>,
    url: &str,
    admin: &Channel,
    database: &ScratchDatabase,
    handler: &Handler,
) -> Result<Drain> {
    let bodies = AppBodies {
        app: json!({
            "handler": {"url": handler.url()},
            "appSettings": {"Rabbit": url},
            "hostConfig": {"version": "2.0",
                "extensions": {"rabbitMQ": {"prefetchCount": PREFETCH}}},
        }),
        function: json!({"bindings": [{
            "type": "rabbitMQTrigger", "direction": "in", "name": "order",
            "queueName": QUEUE_SHOAL, "connectionStringSetting": "Rabbit",
        }]}),
    };
    app::write_app(plan.shoal, database, &bodies)
        .await
        .context("writing the app")?;
    preload(admin, QUEUE_SHOAL, plan.messages).await?;
    let drained = || async {
        let deadline = Instant::now() + plan.timeout;
        loop {
            let handled = handler.tally().requests();
            if handled >= plan.messages && ready(admin, QUEUE_SHOAL).await? == 0 {
                return Ok(());
            }
            if Instant::now() >= deadline {
                bail!(
                    "{handled}/{} messages handled in {} s",
                    plan.messages,
                    plan.timeout.as_secs()
                );
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    worker_round(
        plan.shoal,
        database.url(),
        "rabbitmq",
        handler,
        plan.messages,
        drained,
    )
    .await
}
