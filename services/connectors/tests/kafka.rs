//! The Kafka client layer against a real Kafka-protocol broker: tansu with its SQLite engine,
//! one per test on a free port (`shoal_testkit::kafka`).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use chrono::Utc;
use shoal_connectors::kafka::{
    KafkaError, KafkaProperties, OutgoingRecord, StartFrom, StreamConsumer, StreamEvent,
    StreamProducer, TopicCreation, check_cluster, consumer_lag, create_topic, create_topic_like,
};
use shoal_testkit::kafka::TansuBroker;
use tokio::time::Instant;

const GROUP: &str = "shoal-functions";
/// How long a test waits for what the group should do (join, rebalance, deliver).
const DEADLINE: Duration = Duration::from_secs(60);

/// The broker's address, and heartbeats frequent enough that a rebalance is noticed within a
/// second rather than librdkafka's default 3 s.
fn props(broker: &TansuBroker) -> KafkaProperties {
    let mut props = KafkaProperties::new();
    props
        .set("bootstrap.servers", broker.bootstrap())
        .set("heartbeat.interval.ms", "250")
        .set("fetch.wait.max.ms", "100")
        .set("topic.metadata.refresh.interval.ms", "1000");
    props
}

async fn start(topic: &str, partitions: i32) -> Result<TansuBroker> {
    let broker = TansuBroker::start().await?;
    broker.create_topic(topic, partitions).await?;
    Ok(broker)
}

fn member(broker: &TansuBroker, topic: &str, name: &str) -> Result<StreamConsumer> {
    Ok(StreamConsumer::subscribe(
        &props(broker),
        GROUP,
        topic,
        StartFrom::Earliest,
        name,
    )?)
}

/// Fetches (and commits nothing) until `count` events arrived.
async fn fetch_at_least(consumer: &StreamConsumer, count: usize) -> Result<Vec<StreamEvent>> {
    let deadline = Instant::now() + DEADLINE;
    let mut events = Vec::new();
    while events.len() < count {
        if Instant::now() > deadline {
            bail!(
                "{} of {count} events arrived within {DEADLINE:?}",
                events.len()
            );
        }
        events.extend(
            consumer
                .fetch(count - events.len(), Duration::from_millis(500))
                .await?,
        );
    }
    Ok(events)
}

/// The next offsets to commit after `events`: per partition, the last offset + 1.
fn next_offsets(events: &[StreamEvent]) -> Vec<(i32, i64)> {
    let mut next = BTreeMap::new();
    for event in events {
        let entry = next.entry(event.partition).or_insert(0);
        *entry = (*entry).max(event.offset + 1);
    }
    next.into_iter().collect()
}

async fn produce_values(
    broker: &TansuBroker,
    topic: &str,
    partition: i32,
    values: &[&str],
) -> Result<()> {
    for value in values {
        broker
            .produce(topic, partition, None, value.as_bytes(), &[])
            .await?;
    }
    Ok(())
}

fn value(event: &StreamEvent) -> String {
    String::from_utf8_lossy(event.value.as_deref().unwrap_or_default()).into_owned()
}

#[tokio::test]
async fn events_arrive_with_partition_offset_key_value_timestamp_and_headers() -> Result<()> {
    let broker = start("orders", 2).await?;
    let before = Utc::now() - chrono::Duration::seconds(1);
    broker
        .produce(
            "orders",
            1,
            Some(b"customer-7"),
            b"first",
            &[("trace", b"t-1"), ("kind", b"a"), ("kind", b"b")],
        )
        .await?;
    broker.produce("orders", 1, None, b"second", &[]).await?;
    let after = Utc::now() + chrono::Duration::seconds(1);
    let consumer = member(&broker, "orders", "member-a")?;

    let events = fetch_at_least(&consumer, 2).await?;

    let [first, second] = events.as_slice() else {
        bail!("expected two events, got {events:?}");
    };
    assert_eq!(
        (first.topic.as_str(), first.partition, first.offset),
        ("orders", 1, 0)
    );
    assert_eq!(first.key.as_deref(), Some(&b"customer-7"[..]));
    assert_eq!(first.value.as_deref(), Some(&b"first"[..]));
    assert_eq!(
        first.headers,
        [
            ("trace".to_owned(), Some(b"t-1".to_vec())),
            ("kind".to_owned(), Some(b"a".to_vec())),
            ("kind".to_owned(), Some(b"b".to_vec())),
        ]
    );
    let timestamp = first.timestamp.context("the event has a timestamp")?;
    assert!(
        before <= timestamp && timestamp <= after,
        "{timestamp} outside [{before}, {after}]"
    );
    assert_eq!(
        (second.partition, second.offset, second.key.as_deref()),
        (1, 1, None)
    );
    assert_eq!(value(second), "second");
    assert!(second.headers.is_empty(), "{:?}", second.headers);
    consumer.close().await;
    Ok(())
}

#[tokio::test]
async fn fetch_respects_max_and_returns_empty_after_wait() -> Result<()> {
    let broker = start("orders", 1).await?;
    let values: Vec<String> = (0..10).map(|i| format!("e{i}")).collect();
    produce_values(
        &broker,
        "orders",
        0,
        &values.iter().map(String::as_str).collect::<Vec<_>>(),
    )
    .await?;
    let consumer = member(&broker, "orders", "member-a")?;

    let mut seen = Vec::new();
    let deadline = Instant::now() + DEADLINE;
    while seen.len() < values.len() {
        ensure!(
            Instant::now() < deadline,
            "only {} events arrived",
            seen.len()
        );
        let batch = consumer.fetch(3, Duration::from_millis(500)).await?;
        assert!(batch.len() <= 3, "a batch of {} for max 3", batch.len());
        seen.extend(batch.iter().map(value));
    }
    assert_eq!(seen, values);

    let wait = Duration::from_millis(700);
    let started = Instant::now();
    let empty = consumer.fetch(3, wait).await?;
    let waited = started.elapsed();
    assert!(empty.is_empty(), "{empty:?}");
    assert!(
        waited >= wait && waited < wait + Duration::from_secs(2),
        "waited {waited:?}"
    );

    let refused = consumer.fetch(0, wait).await.unwrap_err();
    assert!(
        matches!(refused, KafkaError::InvalidRequest(_)),
        "{refused:?}"
    );
    consumer.close().await;
    Ok(())
}

#[tokio::test]
async fn a_new_member_resumes_at_the_committed_offset_and_reads_an_uncommitted_batch_again()
-> Result<()> {
    let broker = start("orders", 1).await?;
    produce_values(&broker, "orders", 0, &["e0", "e1", "e2", "e3", "e4", "e5"]).await?;

    let first = member(&broker, "orders", "member-a")?;
    let committed_batch = fetch_at_least(&first, 3).await?;
    let committed_batch = &committed_batch[..3];
    first
        .commit("orders", &next_offsets(committed_batch))
        .await?;
    let uncommitted = fetch_at_least(&first, 1).await?;
    assert_eq!(uncommitted[0].offset, 3, "{uncommitted:?}");
    first.close().await;

    let second = member(&broker, "orders", "member-b")?;
    let resumed = fetch_at_least(&second, 3).await?;

    let offsets: Vec<i64> = resumed.iter().map(|e| e.offset).collect();
    assert_eq!(offsets, [3, 4, 5]);
    assert_eq!(
        resumed.iter().map(value).collect::<Vec<_>>(),
        ["e3", "e4", "e5"]
    );
    second.close().await;
    Ok(())
}

#[tokio::test]
async fn consumer_lag_is_produced_minus_committed_per_partition_read_while_no_member_is_connected()
-> Result<()> {
    let broker = start("orders", 3).await?;
    produce_values(&broker, "orders", 0, &["a", "b", "c", "d", "e"]).await?;
    produce_values(&broker, "orders", 1, &["a", "b", "c"]).await?;
    produce_values(&broker, "orders", 2, &["a", "b", "c", "d"]).await?;
    let consumer = member(&broker, "orders", "member-a")?;
    fetch_at_least(&consumer, 12).await?;
    consumer.commit("orders", &[(0, 2), (1, 3)]).await?;
    consumer.close().await;

    let lag = consumer_lag(&props(&broker), GROUP, "orders").await?;

    let rows: Vec<(i32, i64, i64, Option<i64>, u64)> = lag
        .partitions
        .iter()
        .map(|p| (p.partition, p.low, p.high, p.committed, p.lag))
        .collect();
    assert_eq!(
        rows,
        [
            (0, 0, 5, Some(2), 3),
            (1, 0, 3, Some(3), 0),
            (2, 0, 4, None, 4)
        ],
        "partition, low, high, committed, lag"
    );
    assert_eq!(lag.total, 7);

    let never_read = consumer_lag(&props(&broker), "another-group", "orders").await?;
    assert_eq!(never_read.total, 12);
    let missing = consumer_lag(&props(&broker), GROUP, "no-such-topic")
        .await
        .unwrap_err();
    assert!(
        matches!(&missing, KafkaError::TopicNotFound { topic } if topic == "no-such-topic"),
        "{missing:?}"
    );
    Ok(())
}

/// Fetches once from `consumer`, records what came, and commits it before the next fetch.
async fn fetch_and_commit(
    consumer: &StreamConsumer,
    name: &'static str,
    seen: &mut Vec<(i32, i64, &'static str)>,
) -> Result<()> {
    let batch = consumer.fetch(4, Duration::from_millis(200)).await?;
    seen.extend(batch.iter().map(|e| (e.partition, e.offset, name)));
    consumer.commit("orders", &next_offsets(&batch)).await?;
    Ok(())
}

#[tokio::test]
async fn two_members_split_the_partitions_and_the_survivor_takes_them_all_when_one_closes()
-> Result<()> {
    let broker = start("orders", 4).await?;
    let a = member(&broker, "orders", "member-a")?;
    let b = member(&broker, "orders", "member-b")?;
    let mut seen = Vec::new();

    // Both join; the group settles with the partitions split between them.
    let deadline = Instant::now() + DEADLINE;
    loop {
        fetch_and_commit(&a, "a", &mut seen).await?;
        fetch_and_commit(&b, "b", &mut seen).await?;
        let (of_a, of_b) = (a.assignment()?, b.assignment()?);
        if !of_a.is_empty() && !of_b.is_empty() {
            let all: BTreeSet<i32> = of_a.iter().chain(&of_b).copied().collect();
            assert_eq!(
                all.len(),
                of_a.len() + of_b.len(),
                "overlap: {of_a:?} {of_b:?}"
            );
            assert_eq!(all, BTreeSet::from([0, 1, 2, 3]));
            break;
        }
        ensure!(
            Instant::now() < deadline,
            "the group did not split: {of_a:?} {of_b:?}"
        );
    }
    let split_of_a = a.assignment()?;

    // Each reads its share, committing each batch before the next fetch.
    for partition in 0..4 {
        let values: Vec<String> = (0..6).map(|i| format!("p{partition}-{i}")).collect();
        produce_values(
            &broker,
            "orders",
            partition,
            &values.iter().map(String::as_str).collect::<Vec<_>>(),
        )
        .await?;
    }
    let deadline = Instant::now() + DEADLINE;
    while !(seen.iter().any(|s| s.2 == "a") && seen.iter().any(|s| s.2 == "b")) {
        ensure!(Instant::now() < deadline, "not both members read: {seen:?}");
        fetch_and_commit(&a, "a", &mut seen).await?;
        fetch_and_commit(&b, "b", &mut seen).await?;
    }

    // One leaves; the other gets every partition and reads on from the commits.
    a.close().await;
    let deadline = Instant::now() + DEADLINE;
    while seen.len() < 24 || b.assignment()?.len() < 4 {
        ensure!(
            Instant::now() < deadline,
            "{} of 24 events read; b has {:?}",
            seen.len(),
            b.assignment()?
        );
        fetch_and_commit(&b, "b", &mut seen).await?;
    }

    assert_eq!(b.assignment()?, [0, 1, 2, 3]);
    let unique: BTreeSet<(i32, i64)> = seen.iter().map(|s| (s.0, s.1)).collect();
    assert_eq!(
        unique.len(),
        seen.len(),
        "an event was read twice: {seen:?}"
    );
    let expected: BTreeSet<(i32, i64)> = (0..4).flat_map(|p| (0..6).map(move |o| (p, o))).collect();
    assert_eq!(unique, expected);
    assert!(
        seen.iter().any(|s| s.2 == "b" && split_of_a.contains(&s.0)),
        "b read nothing of a's former partitions {split_of_a:?}: {seen:?}"
    );
    b.close().await;
    Ok(())
}

#[tokio::test]
async fn producer_records_come_back_in_order_per_partition() -> Result<()> {
    let broker = start("orders", 2).await?;
    let producer = StreamProducer::new(&props(&broker))?;
    let records: Vec<(i32, String)> = (0..40).map(|i| (i % 2, format!("r{i}"))).collect();

    // All sent at once: librdkafka batches them; order per partition must hold.
    let sends = records.iter().map(|(partition, value)| {
        producer.send(
            "orders",
            OutgoingRecord {
                key: Some(format!("k{partition}").into_bytes()),
                value: value.clone().into_bytes(),
                headers: vec![("source".into(), b"test".to_vec())],
                partition: Some(*partition),
            },
        )
    });
    let acknowledged = futures::future::try_join_all(sends).await?;

    let consumer = member(&broker, "orders", "reader")?;
    let events = fetch_at_least(&consumer, records.len()).await?;
    for partition in 0..2 {
        let sent: Vec<&str> = records
            .iter()
            .filter(|r| r.0 == partition)
            .map(|r| r.1.as_str())
            .collect();
        let read: Vec<String> = events
            .iter()
            .filter(|e| e.partition == partition)
            .map(value)
            .collect();
        assert_eq!(read, sent, "partition {partition}");
        let offsets: Vec<i64> = acknowledged
            .iter()
            .filter(|a| a.0 == partition)
            .map(|a| a.1)
            .collect();
        assert_eq!(
            offsets,
            (0..20).collect::<Vec<i64>>(),
            "acknowledged offsets of partition {partition}"
        );
    }
    let first = &events[0];
    assert_eq!(
        first.headers,
        [("source".to_owned(), Some(b"test".to_vec()))]
    );
    consumer.close().await;
    Ok(())
}

#[tokio::test]
async fn fetch_cancelled_at_any_point_loses_no_event() -> Result<()> {
    let broker = start("orders", 1).await?;
    let values: Vec<String> = (0..150).map(|i| format!("e{i}")).collect();
    produce_values(
        &broker,
        "orders",
        0,
        &values.iter().map(String::as_str).collect::<Vec<_>>(),
    )
    .await?;
    let consumer = member(&broker, "orders", "member-a")?;

    // Fetches abandoned after a few hundred microseconds up to a few milliseconds, mixed with
    // ones that complete: whatever a dropped fetch had taken would leave a gap.
    let mut offsets = Vec::new();
    let deadline = Instant::now() + DEADLINE;
    let mut round = 0u64;
    while offsets.len() < values.len() {
        ensure!(
            Instant::now() < deadline,
            "{} of {} events",
            offsets.len(),
            values.len()
        );
        round += 1;
        let patience = Duration::from_micros(200 * (round % 15));
        if let Ok(batch) =
            tokio::time::timeout(patience, consumer.fetch(7, Duration::from_millis(50))).await
        {
            offsets.extend(batch?.iter().map(|e| e.offset));
        }
    }
    assert_eq!(offsets, (0..150).collect::<Vec<i64>>());
    consumer.close().await;
    Ok(())
}

#[tokio::test]
async fn create_topic_is_idempotent_and_refuses_what_cannot_work() -> Result<()> {
    let broker = TansuBroker::start().await?;
    let props = props(&broker);

    create_topic(&props, "dead-letters", 3).await?;
    create_topic(&props, "dead-letters", 3).await?;

    let lag = consumer_lag(&props, GROUP, "dead-letters").await?;
    assert_eq!(lag.partitions.len(), 3);
    let refused = create_topic(&props, "dead-letters-2", 0).await.unwrap_err();
    assert!(
        matches!(refused, KafkaError::InvalidRequest(_)),
        "{refused:?}"
    );
    let refused = create_topic(&props, "", 1).await.unwrap_err();
    assert!(
        matches!(refused, KafkaError::InvalidRequest(_)),
        "{refused:?}"
    );
    Ok(())
}

#[tokio::test]
async fn create_topic_like_creates_a_missing_topic_with_the_other_ones_partition_count()
-> Result<()> {
    let broker = start("orders", 4).await?;
    let props = props(&broker);

    let created = create_topic_like(&props, "orders-poison", "orders").await?;
    assert_eq!(created, TopicCreation::Created { partitions: 4 });
    let lag = consumer_lag(&props, GROUP, "orders-poison").await?;
    assert_eq!(lag.partitions.len(), 4);
    assert_eq!(
        create_topic_like(&props, "orders-poison", "orders").await?,
        TopicCreation::Existed
    );
    // An existing topic is left as it is, whatever the other's count.
    broker.create_topic("small", 1).await?;
    assert_eq!(
        create_topic_like(&props, "small", "orders").await?,
        TopicCreation::Existed
    );
    assert_eq!(
        consumer_lag(&props, GROUP, "small").await?.partitions.len(),
        1
    );
    let missing = create_topic_like(&props, "x-poison", "x")
        .await
        .unwrap_err();
    assert!(
        matches!(&missing, KafkaError::TopicNotFound { topic } if topic == "x"),
        "{missing:?}"
    );
    Ok(())
}

#[tokio::test]
async fn bad_properties_and_an_unreachable_broker_are_clear_errors_without_secrets() -> Result<()> {
    let mut props = KafkaProperties::new();
    props
        .set("bootstrap.servers", "127.0.0.1:1")
        .set("sasl.password", "s3cret-password-value")
        .set("no.such.property", "x");
    let err =
        StreamConsumer::subscribe(&props, GROUP, "orders", StartFrom::Latest, "m").unwrap_err();
    assert!(
        matches!(err, KafkaError::InvalidConfiguration(_)),
        "{err:?}"
    );
    assert!(err.to_string().contains("no.such.property"), "{err}");

    let mut props = KafkaProperties::new();
    props
        .set("bootstrap.servers", "127.0.0.1:1")
        .set("security.protocol", "SASL_PLAINTEXT")
        .set("sasl.mechanisms", "PLAIN")
        .set("sasl.username", "$ConnectionString")
        .set("sasl.password", "s3cret-password-value");
    let err = consumer_lag(&props, GROUP, "orders").await.unwrap_err();
    assert!(err.is_transient(), "{err:?}");
    assert!(!format!("{err} {err:?}").contains("s3cret"), "{err:?}");
    Ok(())
}

#[test]
fn a_consumer_outside_a_tokio_runtime_is_refused_not_a_panic() {
    let mut props = KafkaProperties::new();
    props.set("bootstrap.servers", "127.0.0.1:1");
    let err =
        StreamConsumer::subscribe(&props, GROUP, "orders", StartFrom::Latest, "m").unwrap_err();
    assert!(matches!(err, KafkaError::InvalidRequest(_)), "{err:?}");
}

/// An egress policy allowing exactly `entries` beyond public addresses.
fn egress_allowing(entries: &str) -> shoal_egress::Egress {
    use shoal_domain::egress::{AllowList, EgressPolicy};
    let allow = if entries.is_empty() {
        AllowList::default()
    } else {
        AllowList::parse(entries).expect("the test's entries parse")
    };
    shoal_egress::Egress::new(EgressPolicy::new(allow, Vec::new()))
}

#[tokio::test]
async fn a_broker_advertising_a_refused_address_is_refused_before_it_is_dialled() -> Result<()> {
    // tansu advertises its relay; only tansu's own port is allowed.
    let broker = TansuBroker::start_behind_relay().await?;
    broker.create_topic("orders", 1).await?;
    let before = broker.settled_relay_connections().await;
    let mut props = KafkaProperties::new();
    props.set("bootstrap.servers", broker.direct_bootstrap());
    let egress = egress_allowing(&broker.direct_bootstrap());

    let err = check_cluster(&props, "orders", "brokerList", &egress)
        .await
        .unwrap_err();

    let shown = err.to_string();
    assert!(matches!(err, KafkaError::Refused(_)), "{err:?}");
    assert!(
        shown.starts_with(&format!(
            "brokerList: the cluster advertises {}: ",
            broker.bootstrap()
        )) && shown.contains("loopback"),
        "{shown}"
    );
    // Counted once per connection the guard refused (librdkafka may try the broker more than
    // once while the metadata request waits).
    assert!(
        egress
            .metrics()
            .refusals(shoal_domain::egress::Rule::Loopback)
            >= 1
    );
    // Nothing reached the advertised address, during the check or after it.
    assert_eq!(
        broker.settled_relay_connections().await,
        before,
        "the relay was dialled"
    );

    // Allowed there too, the same check passes and the cluster is used as before.
    let both = format!("{},{}", broker.direct_bootstrap(), broker.bootstrap());
    check_cluster(&props, "orders", "brokerList", &egress_allowing(&both)).await?;
    Ok(())
}

#[tokio::test]
async fn refused_bootstrap_servers_are_never_asked_for_metadata() -> Result<()> {
    let broker = TansuBroker::start_behind_relay().await?;
    let before = broker.settled_relay_connections().await;
    let strict = egress_allowing("");
    // A literal loopback address, and a name that resolves to one (its text passes every
    // check; the addresses it resolves to do not).
    let named = format!(
        "{}:{}",
        shoal_testkit::loopback_host_name(),
        broker
            .bootstrap()
            .rsplit_once(':')
            .map(|(_, p)| p)
            .unwrap_or_default()
    );
    for servers in [broker.bootstrap(), named] {
        let mut props = KafkaProperties::new();
        props.set("bootstrap.servers", &servers);
        let err = check_cluster(&props, "orders", "brokerList", &strict)
            .await
            .unwrap_err();
        assert!(matches!(err, KafkaError::Refused(_)), "{servers}: {err:?}");
        assert!(
            err.to_string().starts_with("brokerList: ") && err.to_string().contains("loopback"),
            "{servers}: {err}"
        );
    }
    assert_eq!(broker.relay_connections(), before, "the broker was dialled");
    Ok(())
}
