//! A RabbitMQ trigger's worker SIGKILLed while it holds unacknowledged messages loses none:
//! the broker gives them back when the connection drops, and the worker the instance moves to
//! delivers every message, published by PyPI `pika` into a private broker
//! (`deploy/local/rabbitmq.sh`). Only the messages in hand at the kill may reach the handler
//! twice, and the queue ends empty with nothing dead-lettered.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use anyhow::Context;
use serde_json::{Value, json};
use shoal_testkit::handler::{Behaviour, Recorded};
use shoal_testkit::rabbitmq::{self, pika};
use tokio::time::Instant;

use crate::processes::Cluster;
use crate::support::{APP, Harness};

const MESSAGES: usize = 100;
/// The broker hands a consumer at most this many unacknowledged messages.
const PREFETCH: usize = 8;
/// How long the handler takes over each message: the worker always has some in hand.
const HANDLER_DELAY: Duration = Duration::from_millis(500);
/// Time allowed between the handler's answer and the broker taking the acknowledgement, on a
/// busy machine.
const ACK_SLACK: Duration = Duration::from_secs(1);

async fn pika_count(url: &str, command: &str, queue: &str) -> anyhow::Result<u64> {
    pika(url, &[command, queue])
        .await?
        .as_u64()
        .with_context(|| format!("rabbit.py {command} {queue}"))
}

/// The message a request carried (its body, `order-<i>`, as published).
fn message(r: &Recorded) -> &str {
    r.body["Data"]["order"].as_str().unwrap_or_default()
}

fn worker(r: &Recorded) -> &str {
    r.header("x-shoal-worker").unwrap_or_default()
}

/// How many messages `worker` has in hand for the app as its latest heartbeat after `since`
/// reports; None without such a heartbeat.
async fn in_hand(
    h: &Harness,
    worker: &str,
    since: chrono::DateTime<chrono::Utc>,
) -> anyhow::Result<Option<u64>> {
    let listeners: Option<Value> =
        sqlx::query_scalar("select listeners from workers where name = $1 and heartbeat_at > $2")
            .bind(worker)
            .bind(since)
            .fetch_optional(&h.pool)
            .await?;
    Ok(listeners.map(|l| {
        l.as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["app"] == APP)
            .map(|r| r["inFlight"].as_u64().unwrap_or(0))
            .sum()
    }))
}

#[tokio::test]
async fn a_sigkilled_workers_unacknowledged_messages_return_and_every_message_is_delivered()
-> anyhow::Result<()> {
    let url = rabbitmq::url()?;
    let queue = rabbitmq::queue_name("orders");
    let dead = format!("{queue}-dead");
    // With a dead-letter queue, a message the listener gave up on would be visible there.
    pika(&url, &["declare", &queue, &dead]).await?;
    let h = Harness::start(Behaviour::Delay(HANDLER_DELAY, json!({}))).await?;
    let mut settings = h.storage_settings();
    settings["Rabbit"] = json!(url);
    // One instance, so one worker holds every message in hand and the other takes over.
    h.put_app(
        json!({"version": "2.0", "extensions": {"rabbitMQ": {"prefetchCount": PREFETCH}}}),
        json!({"appSettings": settings, "scale": {"limit": 1, "minimumInstances": 1}}),
    )
    .await?;
    h.put_function(
        "take",
        json!([{"type": "rabbitMQTrigger", "direction": "in", "name": "order",
                "queueName": queue, "connectionStringSetting": "Rabbit"}]),
    )
    .await?;
    let mut cluster = Cluster::new(&h);
    cluster.start_workers(2).await?;
    cluster.scheduler("s1");
    let placed = cluster
        .wait_for_placement(1, Duration::from_secs(30))
        .await?;
    cluster.wait_for_claims(1, Duration::from_secs(20)).await?;
    let victim = placed[0].1.clone();
    let published = pika(&url, &["publish", &queue, &MESSAGES.to_string(), "order"]).await?;
    assert_eq!(published.as_array().map(Vec::len), Some(MESSAGES));

    // Kill the holder mid-stream: after three rounds of its prefetch, well before the end.
    h.handler
        .wait_for(3 * PREFETCH, Duration::from_secs(30))
        .await?;
    let before_kill = Instant::now();
    cluster.kill_worker(&victim);
    let killed_at = Instant::now();
    let (survivor, _) = cluster
        .wait_for_claim_moved(placed[0].0, &victim, Duration::from_secs(20))
        .await?;

    // Every message reaches the handler.
    let expected: BTreeSet<String> = (0..MESSAGES).map(|i| format!("order-{i}")).collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let seen: BTreeSet<String> = h
            .handler
            .requests()
            .iter()
            .map(|r| message(r).to_owned())
            .collect();
        if seen.is_superset(&expected) {
            break;
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "{} of {MESSAGES} messages reached the handler; missing {:?}",
            seen.len(),
            expected.difference(&seen).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // …and the survivor settles what it holds: nothing ready, nothing in hand.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let asked = chrono::Utc::now();
        if pika_count(&url, "count", &queue).await? == 0
            && in_hand(&h, &survivor, asked).await? == Some(0)
        {
            break;
        }
        anyhow::ensure!(Instant::now() < deadline, "{survivor} still holds messages");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Whatever a worker holds unacknowledged goes back to the queue when its connection drops:
    // once the survivor is killed too and the broker has dropped its consumer, an empty queue
    // means every message was acknowledged.
    cluster.kill_worker(&survivor);
    let deadline = Instant::now() + Duration::from_secs(30);
    while pika_count(&url, "consumers", &queue).await? > 0 {
        anyhow::ensure!(
            Instant::now() < deadline,
            "the broker keeps the killed worker's consumer"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(
        pika_count(&url, "count", &queue).await?,
        0,
        "left in {queue}"
    );
    assert_eq!(
        pika_count(&url, "count", &dead).await?,
        0,
        "dead-lettered into {dead}"
    );

    let requests = h.handler.requests();
    let mut deliveries: BTreeMap<&str, Vec<&Recorded>> = BTreeMap::new();
    for r in &requests {
        deliveries.entry(message(r)).or_default().push(r);
    }
    assert_eq!(
        deliveries.keys().copied().collect::<BTreeSet<_>>(),
        expected.iter().map(String::as_str).collect::<BTreeSet<_>>()
    );
    // The victim held messages at the kill: the handler had not answered these when it died,
    // so it cannot have acknowledged them — each must come again, from the survivor, marked
    // redelivered by the broker.
    let unanswered: Vec<&Recorded> = requests
        .iter()
        .filter(|r| worker(r) == victim && r.at + HANDLER_DELAY > killed_at)
        .collect();
    assert!(
        !unanswered.is_empty(),
        "{victim} held no message at the kill"
    );
    for r in &unanswered {
        let again = &deliveries[message(r)];
        assert!(
            again
                .iter()
                .any(|d| worker(d) == survivor && d.body["Metadata"]["Redelivered"] == json!(true)),
            "{} never came back",
            message(r)
        );
    }
    // Duplicates only for messages in hand at the kill: delivered by the victim shortly before
    // it (its answer not yet acknowledged), then once more by the survivor as a redelivery.
    let in_hand_at_kill = |r: &Recorded| {
        worker(r) == victim
            && r.at + HANDLER_DELAY + ACK_SLACK > before_kill
            && r.at <= killed_at + ACK_SLACK
    };
    let twice: Vec<&str> = deliveries
        .iter()
        .filter(|(_, d)| d.len() > 1)
        .map(|(m, _)| *m)
        .collect();
    for m in &twice {
        let d = &deliveries[m];
        assert_eq!(d.len(), 2, "{m} delivered {} times", d.len());
        assert!(in_hand_at_kill(d[0]), "{m} was not in hand at the kill");
        assert_eq!(worker(d[1]), survivor, "{m}");
        assert_eq!(
            d[1].body["Metadata"]["Redelivered"],
            json!(true),
            "{m}: {}",
            d[1].body["Metadata"]
        );
    }
    assert!(
        twice.len() <= PREFETCH,
        "{} duplicates, more than the {PREFETCH} a consumer may hold: {twice:?}",
        twice.len()
    );
    eprintln!(
        "{} messages unanswered at the kill ({} could still have been unacknowledged), {} \
         delivered twice; {} deliveries in all",
        unanswered.len(),
        requests.iter().filter(|r| in_hand_at_kill(r)).count(),
        twice.len(),
        requests.len()
    );
    assert!(cluster.exited().is_empty(), "{:?} exited", cluster.exited());
    Ok(())
}
