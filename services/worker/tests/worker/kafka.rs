//! The Kafka trigger against a real Kafka-protocol broker (tansu): delivery with the Kafka
//! extension's metadata, one event or a batch per invocation, the checkpoint committed after
//! each batch, a failing batch whose commit waits for its retries and whose events then go to
//! the dead-letter topic (created when the brokers do not have it; held, and said so, while it
//! can be neither written nor created), and a paused function that leaves the group and resumes from its
//! last commit, in order.

use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::{Value, json};
use shoal_connectors::kafka::{KafkaProperties, StreamConsumer, consumer_lag};
use shoal_domain::circuit_breaker::BreakerCause;
use shoal_domain::diagnostics::CheckStatus;
use shoal_domain::diagnostics::health::check_listeners;
use shoal_domain::stream_trigger::{StartFrom, StreamEvent};
use shoal_testkit::handler::Behaviour;
use shoal_testkit::kafka::TansuBroker;

use crate::service_bus_support::wait_for_line;
use crate::support::*;

pub(crate) const WAIT: Duration = Duration::from_secs(30);
const GROUP: &str = "billing";

pub(crate) struct Stream {
    pub(crate) h: Harness,
    pub(crate) broker: TansuBroker,
}

impl Stream {
    /// A harness and a broker with `orders` (`partitions` partitions) and `orders-poison`.
    pub(crate) async fn start(behaviour: Behaviour, partitions: i32) -> Result<Stream> {
        let broker = TansuBroker::start().await.context("tansu starts")?;
        broker.create_topic("orders-poison", 1).await?;
        Stream::on(broker, behaviour, partitions).await
    }

    /// A harness on `broker`, where `orders` (`partitions` partitions) is created.
    async fn on(broker: TansuBroker, behaviour: Behaviour, partitions: i32) -> Result<Stream> {
        let h = Harness::start(behaviour).await?;
        broker.create_topic("orders", partitions).await?;
        h.put_app(
            json!({}),
            json!({
            "handler": {"url": h.handler.url().as_str(), "timeoutSeconds": 5},
            "appSettings": {
                "AzureWebJobsStorage": h.azurite.connection_string(),
                "KafkaBrokers": broker.bootstrap(),
            }}),
        )
        .await?;
        Ok(Stream { h, broker })
    }

    pub(crate) async fn put_function(&self, body: Value) -> Result<()> {
        self.h.put_function_body(APP, "bill", body).await
    }

    fn properties(&self) -> KafkaProperties {
        let mut p = KafkaProperties::new();
        p.set("bootstrap.servers", self.broker.bootstrap());
        p
    }

    async fn lag(&self) -> Result<u64> {
        Ok(consumer_lag(&self.properties(), GROUP, "orders")
            .await?
            .total)
    }

    pub(crate) async fn wait_for_lag(&self, want: u64) -> Result<()> {
        wait_for_group_lag(&self.properties(), want).await
    }

    /// Waits until the retry topic's group has committed every record of `orders-retry`: what
    /// was parked is done, and nothing of it can be tried again.
    pub(crate) async fn wait_for_retries_done(&self) -> Result<()> {
        wait_for_lag_of(&self.properties(), "billing-retry", "orders-retry", 0).await
    }

    /// The records of `topic`, read from its start by a group of the test's own, once at least
    /// `n` arrived (or the wait is over).
    pub(crate) async fn read_topic(&self, topic: &str, n: usize) -> Result<Vec<StreamEvent>> {
        let reader = StreamConsumer::subscribe(
            &self.properties(),
            "inspect",
            topic,
            StartFrom::Earliest,
            "test",
        )?;
        let mut records = Vec::new();
        let deadline = tokio::time::Instant::now() + WAIT;
        while records.len() < n && tokio::time::Instant::now() < deadline {
            records.extend(reader.fetch(10, Duration::from_secs(1)).await?);
        }
        reader.close().await;
        Ok(records)
    }

    pub(crate) async fn produce(&self, partition: i32, values: &[&str]) -> Result<()> {
        for value in values {
            self.broker
                .produce(
                    "orders",
                    partition,
                    Some(b"customer-7"),
                    value.as_bytes(),
                    &[("trace", b"t-1")],
                )
                .await?;
        }
        Ok(())
    }
}

/// Waits until the group's lag on `orders`, read with `properties`, is `want`.
async fn wait_for_group_lag(properties: &KafkaProperties, want: u64) -> Result<()> {
    wait_for_lag_of(properties, GROUP, "orders", want).await
}

/// Waits until `group`'s lag on `topic`, read with `properties`, is `want`.
async fn wait_for_lag_of(
    properties: &KafkaProperties,
    group: &str,
    topic: &str,
    want: u64,
) -> Result<()> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let lag = consumer_lag(properties, group, topic).await?.total;
        if lag == want {
            return Ok(());
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "{group}'s lag on {topic} stays {lag}, not {want}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub(crate) fn trigger(extra: Value) -> Value {
    let mut binding = json!({"type": "kafkaTrigger", "direction": "in", "name": "event",
        "brokerList": "%KafkaBrokers%", "topic": "orders", "consumerGroup": GROUP});
    if let (Value::Object(b), Value::Object(extra)) = (&mut binding, extra) {
        b.extend(extra);
    }
    json!([binding])
}

/// The `Value` of each event a request carried, in order.
pub(crate) fn values(body: &Value) -> Vec<String> {
    let event = |v: &Value| -> String {
        let parsed: Value =
            serde_json::from_str(v.as_str().expect("KafkaEventData JSON")).expect("JSON");
        parsed["Value"].as_str().unwrap_or_default().to_owned()
    };
    match &body["Data"]["event"] {
        Value::Array(events) => events.iter().map(event).collect(),
        one => vec![event(one)],
    }
}

fn delivered(h: &Harness) -> Vec<String> {
    h.handler
        .requests()
        .iter()
        .flat_map(|r| values(&r.body))
        .collect()
}

#[tokio::test]
async fn delivers_each_event_with_the_kafka_extension_metadata_and_commits_the_batch() -> Result<()>
{
    let s = Stream::start(Behaviour::Respond(json!({})), 1).await?;
    s.put_function(json!({"bindings": trigger(json!({}))}))
        .await?;
    s.produce(0, &["a", "b", "c"]).await?;
    let worker = s.h.start_worker(s.h.worker_config("w1"))?;

    let requests = s.h.handler.wait_for(3, WAIT).await?;
    assert_eq!(
        delivered(&s.h),
        ["a", "b", "c"],
        "one invocation per event, in order"
    );
    let body = &requests[1].body;
    let data: Value = serde_json::from_str(body["Data"]["event"].as_str().unwrap())?;
    assert_eq!(data["Offset"], 1);
    assert_eq!(data["Partition"], 0);
    assert_eq!(data["Topic"], "orders");
    assert_eq!(data["Key"], "customer-7");
    assert_eq!(data["Headers"], json!([{"Key": "trace", "Value": "dC0x"}]));
    let meta = &body["Metadata"];
    assert_eq!(meta["Offset"], 1);
    assert_eq!(meta["Partition"], 0);
    assert_eq!(meta["Topic"], "orders");
    assert_eq!(meta["Key"], "customer-7");
    assert!(
        meta["Timestamp"].as_str().is_some_and(|t| t.ends_with('Z')),
        "{meta}"
    );
    assert_eq!(meta["sys"]["MethodName"], "bill");
    assert_eq!(requests[1].header("webhook-id"), Some("orders-0-1"));

    s.wait_for_lag(0).await?;
    wait_for_line(&worker, "bill", |r| r.succeeded == 3 && r.in_flight == 0).await?;
    worker.shut_down().await?;
    // A new member of the group starts after the commit: nothing is delivered again.
    let again = s.h.start_worker(s.h.worker_config("w2"))?;
    s.produce(0, &["d"]).await?;
    s.h.handler.wait_for(4, WAIT).await?;
    assert_eq!(delivered(&s.h), ["a", "b", "c", "d"]);
    again.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn a_many_cardinality_function_gets_the_batch_in_one_invocation_in_partition_order()
-> Result<()> {
    let s = Stream::start(Behaviour::Respond(json!({})), 2).await?;
    s.put_function(json!({"bindings": trigger(json!({"cardinality": "many"}))}))
        .await?;
    s.produce(0, &["p0-a", "p0-b", "p0-c"]).await?;
    s.produce(1, &["p1-a", "p1-b"]).await?;
    let worker = s.h.start_worker(s.h.worker_config("w1"))?;

    s.wait_for_lag(0).await?;
    let requests = s.h.handler.requests();
    let mut per_partition: std::collections::BTreeMap<i64, Vec<String>> = Default::default();
    for r in &requests {
        let partitions = r.body["Metadata"]["PartitionArray"]
            .as_array()
            .expect("PartitionArray");
        for (p, v) in partitions.iter().zip(values(&r.body)) {
            per_partition
                .entry(p.as_i64().unwrap())
                .or_default()
                .push(v);
        }
        assert!(r.body["Metadata"]["OffsetArray"].is_array());
    }
    assert_eq!(per_partition[&0], ["p0-a", "p0-b", "p0-c"]);
    assert_eq!(per_partition[&1], ["p1-a", "p1-b"]);
    assert!(
        requests.len() < 5,
        "batched: {} invocations for 5 events",
        requests.len()
    );
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn a_failing_event_holds_the_checkpoint_through_its_retries_then_goes_to_the_dead_letter_topic()
-> Result<()> {
    let s = Stream::start(Behaviour::Status(500), 1).await?;
    s.put_function(json!({
        "bindings": trigger(json!({})),
        "retry": {"strategy": "fixedDelay", "maxRetryCount": 2, "delayInterval": "00:00:01"},
    }))
    .await?;
    s.produce(0, &["poison"]).await?;
    let worker = s.h.start_worker(s.h.worker_config("w1"))?;

    // While the retries run, the checkpoint has not moved.
    s.h.handler.wait_for(2, WAIT).await?;
    assert_eq!(s.lag().await?, 1, "the commit waits for the retry policy");
    s.h.handler.wait_for(3, WAIT).await?;
    s.wait_for_lag(0).await?;
    let line = wait_for_line(&worker, "bill", |r| r.failed == 1 && r.poisoned == 1).await?;
    assert_eq!(line.retried, 2);
    assert_eq!(s.h.handler.count(), 3, "three attempts, then no more");

    // The event is on orders-poison, with where it came from and why.
    let dead = s.read_topic("orders-poison", 1).await?;
    anyhow::ensure!(dead.len() == 1, "one dead letter, found {}", dead.len());
    assert_eq!(dead[0].value.as_deref(), Some(&b"poison"[..]));
    assert_eq!(dead[0].key.as_deref(), Some(&b"customer-7"[..]));
    let header = |name: &str| {
        dead[0]
            .headers
            .iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.clone())
            .map(|v| String::from_utf8(v).unwrap())
    };
    assert_eq!(header("trace").as_deref(), Some("t-1"));
    assert_eq!(header("shoal-dead-letter-topic").as_deref(), Some("orders"));
    assert_eq!(header("shoal-dead-letter-offset").as_deref(), Some("0"));
    assert_eq!(
        header("shoal-dead-letter-function").as_deref(),
        Some("bill")
    );
    assert!(header("shoal-dead-letter-reason").is_some_and(|r| r.contains("500")));
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn a_missing_dead_letter_topic_is_created_like_the_source_and_the_partition_moves_on()
-> Result<()> {
    // tansu, like Event Hubs, creates no topic when a client writes to a missing one.
    let broker = TansuBroker::start().await.context("tansu starts")?;
    let s = Stream::on(broker, Behaviour::Respond(json!({})), 3).await?;
    s.h.handler.script(vec![Behaviour::Status(500)]);
    s.put_function(json!({"bindings": trigger(json!({}))}))
        .await?;
    s.produce(1, &["poison", "fine"]).await?;
    let worker = s.h.start_worker(s.h.worker_config("w1"))?;

    s.wait_for_lag(0).await?;
    assert_eq!(delivered(&s.h), ["poison", "fine"], "in order, none twice");
    let dead = s.read_topic("orders-poison", 1).await?;
    anyhow::ensure!(dead.len() == 1, "one dead letter, found {}", dead.len());
    assert_eq!(dead[0].value.as_deref(), Some(&b"poison"[..]));
    let created = consumer_lag(&s.properties(), GROUP, "orders-poison").await?;
    assert_eq!(
        created.partitions.len(),
        3,
        "the dead-letter topic has the source's partition count"
    );
    let line = wait_for_line(&worker, "bill", |r| r.poisoned == 1).await?;
    assert_eq!(line.status, "listening");
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn a_dead_letter_topic_that_cannot_be_written_holds_the_partition_and_says_why_until_it_can()
-> Result<()> {
    // The brokers neither create `orders-poison` on a write (tansu never does) nor let the
    // worker create it (the relay answers TOPIC_AUTHORIZATION_FAILED), until the test allows it.
    let broker = TansuBroker::start_behind_relay()
        .await
        .context("tansu starts")?;
    broker.refuse_topic_creation("orders-poison", true)?;
    let s = Stream::on(broker, Behaviour::Respond(json!({})), 1).await?;
    s.h.handler.script(vec![Behaviour::Status(500)]);
    s.put_function(json!({"bindings": trigger(json!({}))}))
        .await?;
    s.produce(0, &["poison", "next"]).await?;
    let worker = s.h.start_worker(s.h.worker_config("w1"))?;

    let line = wait_for_line(&worker, "bill", |r| r.status.starts_with("error")).await?;
    assert!(
        line.status
            .contains("dead-letter target topic orders-poison")
            && line.status.contains("orders partition 0 waits at offset 0")
            && line.status.contains("not authorized to create"),
        "{}",
        line.status
    );
    // The app's diagnostics report the function in error with that reason.
    let checks = check_listeners(std::slice::from_ref(&line), &[]);
    assert_eq!(checks.len(), 1, "{checks:?}");
    assert_eq!(checks[0].status, CheckStatus::Error);
    assert!(checks[0].detail.contains("orders-poison"), "{checks:?}");
    // The partition holds: nothing committed, the next event not invoked, nothing written.
    assert_eq!(
        s.lag().await?,
        2,
        "the checkpoint stays before the failed event"
    );
    assert_eq!(delivered(&s.h), ["poison"], "the next event waits its turn");
    assert_eq!(line.poisoned, 0);

    s.broker.refuse_topic_creation("orders-poison", false)?;
    s.wait_for_lag(0).await?;
    let dead = s.read_topic("orders-poison", 1).await?;
    anyhow::ensure!(dead.len() == 1, "one dead letter, found {}", dead.len());
    assert_eq!(dead[0].value.as_deref(), Some(&b"poison"[..]));
    assert_eq!(delivered(&s.h), ["poison", "next"], "in order, none twice");
    let line = wait_for_line(&worker, "bill", |r| r.poisoned == 1 && r.succeeded == 1).await?;
    assert_eq!(line.status, "listening", "the error clears once written");
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn a_paused_stream_leaves_its_group_and_resumes_from_the_last_commit_in_order() -> Result<()>
{
    let s = Stream::start(Behaviour::Respond(json!({})), 1).await?;
    s.put_function(json!({"bindings": trigger(json!({}))}))
        .await?;
    s.produce(0, &["1", "2"]).await?;
    let worker = s.h.start_worker(s.h.worker_config("w1"))?;
    s.wait_for_lag(0).await?;

    set_by_hand(&s.h, "bill", BreakerCause::Paused).await?;
    wait_for_line(&worker, "bill", |r| r.status.starts_with("paused")).await?;
    s.produce(0, &["3", "4", "5"]).await?;
    // Observation window for a negative: nothing is fetched while paused.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(s.h.handler.count(), 2, "nothing is invoked while paused");
    assert_eq!(s.lag().await?, 3, "the events wait at the last commit");

    set_by_hand(&s.h, "bill", BreakerCause::Resumed).await?;
    s.h.handler.wait_for(5, WAIT).await?;
    s.wait_for_lag(0).await?;
    assert_eq!(
        delivered(&s.h),
        ["1", "2", "3", "4", "5"],
        "in order, none twice"
    );
    worker.shut_down().await?;
    Ok(())
}

/// An event hub is read through its Kafka endpoint with SASL PLAIN and the connection string
/// as the password. tansu 0.6 offers no PLAIN (only SCRAM and OAUTHBEARER; see
/// `shoal_testkit::kafka::SignIn`), so what this shows is that the broker's refusal reaches
/// the listener's status plainly, and the connection string (the password) appears nowhere in
/// it. Delivery after sign-in is the Kafka path above (SCRAM sign-in included); the Event Hubs
/// settings and metadata are checked in the domain's table tests.
#[tokio::test]
async fn an_event_hub_trigger_signs_in_with_its_connection_string_and_reports_a_refusal_without_it()
-> Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    let broker = TansuBroker::start().await.context("tansu starts")?;
    broker.create_topic("telemetry", 1).await?;
    // The Event Hubs emulator's form of connection string, pointed at the test broker.
    let key = "c2VjcmV0LWtleS1vZi10aGUtaHVi";
    let connection = format!(
        "Endpoint=sb://{};SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={key};UseDevelopmentEmulator=true;",
        broker.bootstrap()
    );
    h.put_app(
        json!({}),
        json!({
        "handler": {"url": h.handler.url().as_str(), "timeoutSeconds": 5},
        "appSettings": {
            "AzureWebJobsStorage": h.azurite.connection_string(),
            "Hub": connection,
        }}),
    )
    .await?;
    h.put_function_body(
        APP,
        "ingest",
        json!({"bindings": [{"type": "eventHubTrigger", "direction": "in", "name": "events",
            "eventHubName": "telemetry", "connection": "Hub", "cardinality": "many"}]}),
    )
    .await?;
    broker.produce("telemetry", 0, None, b"a", &[]).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;

    let line = wait_for_line(&worker, "ingest", |r| r.status.starts_with("error")).await?;
    assert!(line.status.contains("Authentication"), "{}", line.status);
    assert!(!line.status.contains(key), "{}", line.status);
    assert_eq!(line.source, "telemetry");
    assert_eq!(h.handler.count(), 0);
    worker.shut_down().await?;
    Ok(())
}

/// A Kafka trigger signing in with SCRAM-SHA-512 (tansu with `--authentication`, which checks
/// the password): with a wrong password from its app settings the broker refuses it and the
/// status says so without the password; with the right one the events arrive and the group
/// commits.
#[tokio::test]
async fn a_kafka_trigger_signs_in_with_scram_and_a_wrong_password_is_refused() -> Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    let broker = TansuBroker::start_with_scram_users(&[("billing", "right-pass-9")])
        .await
        .context("tansu starts")?;
    broker.create_topic("orders", 1).await?;
    let app = |password: &str| {
        json!({
        "handler": {"url": h.handler.url().as_str(), "timeoutSeconds": 5},
        "appSettings": {
            "AzureWebJobsStorage": h.azurite.connection_string(),
            "KafkaBrokers": broker.bootstrap(),
            "KafkaUser": "billing",
            "KafkaPassword": password,
        }})
    };
    h.put_app(json!({}), app("wrong-pass-1")).await?;
    h.put_function_body(
        APP,
        "bill",
        json!({"bindings": trigger(json!({"protocol": "saslPlaintext",
            "authenticationMode": "scramSha512", "username": "%KafkaUser%",
            "password": "%KafkaPassword%"}))}),
    )
    .await?;
    broker.produce("orders", 0, None, b"signed-in", &[]).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;

    let refused = wait_for_line(&worker, "bill", |r| r.status.starts_with("error")).await?;
    assert!(
        !refused.status.contains("wrong-pass-1"),
        "{}",
        refused.status
    );
    assert_eq!(h.handler.count(), 0, "{}", refused.status);

    h.put_app(json!({}), app("right-pass-9")).await?;
    h.handler.wait_for(1, WAIT).await?;
    assert_eq!(values(&h.handler.requests()[0].body), ["signed-in"]);

    let mut properties = KafkaProperties::new();
    properties.set("bootstrap.servers", broker.bootstrap());
    properties.set("security.protocol", "SASL_PLAINTEXT");
    properties.set("sasl.mechanisms", "SCRAM-SHA-512");
    properties.set("sasl.username", "billing");
    properties.set("sasl.password", "right-pass-9");
    wait_for_group_lag(&properties, 0).await?;
    worker.shut_down().await?;
    Ok(())
}

/// A Kafka trigger over mutual TLS (tansu behind the test CA's TLS front), its TLS material in
/// app settings as the extension's `sslCaPEM`, `sslCertificatePEM` and `sslKeyPEM` name it:
/// without a client certificate the broker refuses the handshake and the status says so; with
/// one, the events arrive and the group commits, and a failed one is dead-lettered over the
/// same TLS.
#[tokio::test]
async fn a_kafka_trigger_reads_over_mutual_tls_with_the_pem_of_its_app_settings() -> Result<()> {
    let ca = shoal_testkit::tls::ThrowawayCa::generate("shoal-kafka-test-ca")?;
    let client = ca.client_certificate("contoso-orders")?;
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    let broker = TansuBroker::start_with_mutual_tls(&ca)
        .await
        .context("tansu starts")?;
    broker.create_topic("orders", 1).await?;
    h.put_app(
        json!({}),
        json!({
        "handler": {"url": h.handler.url().as_str(), "timeoutSeconds": 5},
        "appSettings": {
            "AzureWebJobsStorage": h.azurite.connection_string(),
            "KafkaBrokers": broker.bootstrap(),
            "KafkaCa": ca.ca_pem,
            "KafkaClientCertificate": client.certificate_pem,
            "KafkaClientKey": client.key_pem,
        }}),
    )
    .await?;
    let binding = |with_client_certificate: bool| {
        let mut tls = json!({"protocol": "ssl", "sslCaPEM": "%KafkaCa%"});
        if with_client_certificate {
            tls["sslCertificatePEM"] = json!("%KafkaClientCertificate%");
            tls["sslKeyPEM"] = json!("%KafkaClientKey%");
        }
        json!({"bindings": trigger(tls)})
    };
    h.put_function_body(APP, "bill", binding(false)).await?;
    broker.produce("orders", 0, None, b"over-tls", &[]).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;

    let refused = wait_for_line(&worker, "bill", |r| r.status.starts_with("error")).await?;
    assert_eq!(h.handler.count(), 0, "{}", refused.status);

    h.put_function_body(APP, "bill", binding(true)).await?;
    h.handler.wait_for(1, WAIT).await?;
    let body = &h.handler.requests()[0].body;
    assert_eq!(values(body), ["over-tls"]);

    let mut properties = KafkaProperties::new();
    properties.set("bootstrap.servers", broker.bootstrap());
    properties.set("security.protocol", "ssl");
    properties.set("ssl.ca.pem", ca.ca_pem.clone());
    let reader = ca.client_certificate("inspector")?;
    properties.set("ssl.certificate.pem", reader.certificate_pem);
    properties.set("ssl.key.pem", reader.key_pem);
    wait_for_group_lag(&properties, 0).await?;

    // A failed event goes to `orders-poison` over the same TLS, created there first.
    h.handler.set_behaviour(Behaviour::Status(500));
    broker.produce("orders", 0, None, b"failing", &[]).await?;
    h.handler.wait_for(2, WAIT).await?;
    wait_for_group_lag(&properties, 0).await?;
    let dead = consumer_lag(&properties, "inspect", "orders-poison").await?;
    assert_eq!(dead.partitions.iter().map(|p| p.high).sum::<i64>(), 1);
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn a_dead_letter_queue_gets_the_failed_event_as_json_and_the_checkpoint_moves_on()
-> Result<()> {
    let s = Stream::start(Behaviour::Status(500), 1).await?;
    s.put_function(json!({
        "bindings": trigger(json!({})),
        "deadLetter": {"queueName": "orders-failed"},
    }))
    .await?;
    s.produce(0, &["broken"]).await?;
    let worker = s.h.start_worker(s.h.worker_config("w1"))?;

    let messages = s.h.wait_for_messages("orders-failed", 1, WAIT).await?;
    // The app's messageEncoding (base64 by default) applies, as to any queue output.
    let text = String::from_utf8(base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        &messages[0].text,
    )?)?;
    let dead: Value = serde_json::from_str(&text)?;
    assert_eq!(dead["topic"], "orders");
    assert_eq!(dead["partition"], 0);
    assert_eq!(dead["offset"], 0);
    assert_eq!(dead["value"], "YnJva2Vu", "the value in base64");
    assert_eq!(dead["function"], "bill");
    assert!(
        dead["reason"].as_str().is_some_and(|r| r.contains("500")),
        "{dead}"
    );
    s.wait_for_lag(0).await?;
    wait_for_line(&worker, "bill", |r| r.poisoned == 1).await?;
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn kafka_outputs_are_produced_after_a_successful_invocation_with_key_and_headers()
-> Result<()> {
    let s = Stream::start(
        Behaviour::Respond(json!({"Outputs": {"shipped": [
            "plain",
            {"Value": "framed", "Key": "k-1", "Headers": [{"Key": "source", "Value": "bill"}]},
        ]}})),
        1,
    )
    .await?;
    s.broker.create_topic("shipped", 1).await?;
    let mut bindings = trigger(json!({}));
    bindings
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "kafka", "direction": "out",
        "name": "shipped", "brokerList": "%KafkaBrokers%", "topic": "shipped"}));
    s.put_function(json!({"bindings": bindings})).await?;
    s.produce(0, &["order"]).await?;
    let worker = s.h.start_worker(s.h.worker_config("w1"))?;
    s.wait_for_lag(0).await?;

    let records = s.read_topic("shipped", 2).await?;
    type Seen = (Option<Vec<u8>>, Option<Vec<u8>>, usize);
    // The handler's headers; every record also carries the attempt's trace context.
    let mut seen: Vec<Seen> = records
        .iter()
        .map(|r| {
            let own = r.headers.iter().filter(|(k, _)| k != "traceparent");
            (r.key.clone(), r.value.clone(), own.count())
        })
        .collect();
    for record in &records {
        let traceparent = record.headers.iter().find(|(k, _)| k == "traceparent");
        let traceparent = traceparent
            .and_then(|(_, v)| v.as_deref())
            .unwrap_or_default();
        assert_eq!(traceparent.len(), 55, "{:?}", record.headers);
    }
    seen.sort();
    assert_eq!(
        seen,
        [
            (None, Some(b"plain".to_vec()), 0),
            (Some(b"k-1".to_vec()), Some(b"framed".to_vec()), 1),
        ]
    );
    let framed = records.iter().find(|r| r.key.is_some()).unwrap();
    assert_eq!(
        framed.headers[0],
        ("source".to_owned(), Some(b"bill".to_vec()))
    );
    worker.shut_down().await?;
    Ok(())
}

/// A `kafka` output's topic with a binding expression is resolved for each event, here from
/// the partition it was read from.
#[tokio::test]
async fn a_kafka_output_topic_with_an_expression_is_resolved_per_event() -> Result<()> {
    let s = Stream::start(
        Behaviour::Respond(json!({"Outputs": {"routed": "from partition one"}})),
        2,
    )
    .await?;
    s.broker.create_topic("routed-1", 1).await?;
    let mut bindings = trigger(json!({}));
    bindings
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "kafka", "direction": "out",
        "name": "routed", "brokerList": "%KafkaBrokers%", "topic": "routed-{Partition}"}));
    s.put_function(json!({"bindings": bindings})).await?;
    s.produce(1, &["order"]).await?;
    let worker = s.h.start_worker(s.h.worker_config("w1"))?;
    s.wait_for_lag(0).await?;

    let records = s.read_topic("routed-1", 1).await?;
    assert_eq!(
        records[0].value.as_deref(),
        Some(&b"from partition one"[..])
    );
    worker.shut_down().await?;
    Ok(())
}
