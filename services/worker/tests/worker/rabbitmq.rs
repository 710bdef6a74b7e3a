//! The RabbitMQ trigger and output against a real broker (`deploy/local/rabbitmq.sh`), the
//! messages published and read by PyPI `pika`, a client nobody here wrote.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use anyhow::Result;
use serde_json::{Value, json};
use shoal_testkit::handler::Behaviour;
use shoal_testkit::rabbitmq::{self, pika};

use crate::support::*;
use crate::trace_chain;

pub(crate) fn trigger(queue: &str) -> Value {
    json!({"type": "rabbitMQTrigger", "direction": "in", "name": "order", "queueName": queue,
        "connectionStringSetting": "Rabbit"})
}

/// The app, its settings naming the broker in `Rabbit`.
pub(crate) async fn put_app(h: &Harness, url: &str, host: Value) -> Result<()> {
    let mut settings = h.storage_settings();
    settings["Rabbit"] = json!(url);
    h.put_app(host, json!({"appSettings": settings})).await
}

async fn ready(url: &str, queue: &str) -> Result<u64> {
    Ok(pika(url, &["count", queue])
        .await?
        .as_u64()
        .unwrap_or(u64::MAX))
}

/// Waits until the queue has no message ready (every one acknowledged or in hand).
async fn wait_drained(url: &str, queue: &str) -> Result<()> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let left = ready(url, queue).await?;
        if left == 0 {
            return Ok(());
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "{left} messages still ready on {queue}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn messages_published_with_pika_reach_the_handler_once_and_are_acknowledged() -> Result<()> {
    let url = rabbitmq::url()?;
    let queue = rabbitmq::queue_name("orders");
    pika(&url, &["declare", &queue]).await?;
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    put_app(&h, &url, json!({})).await?;
    h.put_function("process", json!([trigger(&queue)])).await?;
    let published = pika(&url, &["publish", &queue, "20", "order"]).await?;
    assert_eq!(published.as_array().map(Vec::len), Some(20));

    let worker = h.start_worker(h.worker_config("w1"))?;
    let requests = h.handler.wait_for(20, Duration::from_secs(30)).await?;
    wait_drained(&url, &queue).await?;
    // Nothing comes again once acknowledged.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(h.handler.count(), 20, "a message was delivered twice");
    let bodies: BTreeSet<&str> = requests
        .iter()
        .map(|r| r.body["Data"]["order"].as_str().unwrap_or_default())
        .collect();
    let expected: BTreeSet<String> = (0..20).map(|i| format!("order-{i}")).collect();
    assert_eq!(
        bodies,
        expected.iter().map(String::as_str).collect::<BTreeSet<_>>()
    );
    let request = &requests[0];
    let metadata = &request.body["Metadata"];
    assert_eq!(metadata["RoutingKey"], queue.as_str(), "{metadata}");
    assert_eq!(metadata["Exchange"], "");
    assert_eq!(metadata["Redelivered"], false);
    assert_eq!(metadata["BasicProperties"]["ContentType"], "text/plain");
    assert_eq!(metadata["BasicProperties"]["DeliveryMode"], 2);
    assert_eq!(metadata["sys"]["MethodName"], "process");
    // The message id is the handler's idempotency key.
    assert_eq!(
        request.headers["webhook-id"].to_str()?,
        metadata["BasicProperties"]["MessageId"]
            .as_str()
            .unwrap_or_default()
    );
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn a_failing_message_is_requeued_four_times_then_dead_lettered_as_the_extension_does()
-> Result<()> {
    let url = rabbitmq::url()?;
    let queue = rabbitmq::queue_name("payments");
    let dead = format!("{queue}-dead");
    pika(&url, &["declare", &queue, &dead]).await?;
    let h = Harness::start(Behaviour::Status(500)).await?;
    put_app(&h, &url, json!({})).await?;
    // One retry in hand before each failure counts: 2 calls a delivery, 5 deliveries.
    h.put_function_body(
        APP,
        "pay",
        json!({"bindings": [trigger(&queue)],
            "retry": {"strategy": "fixedDelay", "maxRetryCount": 1, "delayInterval": "00:00:00.100"}}),
    )
    .await?;
    pika(&url, &["publish", &queue, "1", "payment"]).await?;

    let worker = h.start_worker(h.worker_config("w1"))?;
    let dead_lettered = pika(&url, &["get", &dead, "1", "30"]).await?;
    let dead_lettered = dead_lettered.as_array().cloned().unwrap_or_default();
    assert_eq!(dead_lettered.len(), 1, "nothing dead-lettered");
    assert_eq!(dead_lettered[0]["body"], "payment-0");
    assert_eq!(dead_lettered[0]["messageId"], "payment-0");
    assert_eq!(
        dead_lettered[0]["headers"]["x-ms-rabbitmq-requeuecount"], 4,
        "{dead_lettered:?}"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    let requests = h.handler.requests();
    assert_eq!(requests.len(), 10, "5 deliveries of 2 attempts each");
    let keys: BTreeSet<&str> = requests
        .iter()
        .map(|r| r.headers["webhook-id"].to_str().unwrap_or_default())
        .collect();
    assert_eq!(keys, BTreeSet::from(["payment-0"]), "one idempotency key");
    let counts: Vec<i64> = requests
        .iter()
        .map(|r| {
            r.body["Metadata"]["BasicProperties"]["Headers"]["x-ms-rabbitmq-requeuecount"]
                .as_i64()
                .unwrap_or(0)
        })
        .collect();
    assert_eq!(counts, vec![0, 0, 1, 1, 2, 2, 3, 3, 4, 4]);
    assert_eq!(ready(&url, &queue).await?, 0);
    // Every failed call counted by how it failed, for shoal_worker_attempts_failed_total.
    let failed: BTreeMap<_, _> = worker
        .stats
        .failed_attempts()
        .snapshot()
        .into_iter()
        .collect();
    assert_eq!(failed["status"], 10, "{failed:?}");
    assert_eq!(failed["timeout"], 0, "{failed:?}");
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn the_output_publishes_to_the_queue_its_expression_names() -> Result<()> {
    let url = rabbitmq::url()?;
    let queue = rabbitmq::queue_name("in");
    let out = format!("{queue}-out");
    pika(&url, &["declare", &queue]).await?;
    pika(&url, &["declare", &out]).await?;
    let h = Harness::start(Behaviour::Respond(
        json!({"Outputs": {"copy": ["first", {"n": 2}]}}),
    ))
    .await?;
    put_app(&h, &url, json!({})).await?;
    h.put_function(
        "copy",
        json!([trigger(&queue), {"type": "rabbitMQ", "direction": "out", "name": "copy",
            "queueName": "{RoutingKey}-out", "connectionStringSetting": "Rabbit"}]),
    )
    .await?;
    pika(&url, &["publish", &queue, "1", "x"]).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;
    let written = pika(&url, &["get", &out, "2", "30"]).await?;
    let bodies: Vec<&str> = written
        .as_array()
        .map(|a| a.iter().filter_map(|m| m["body"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(bodies, vec!["first", "{\"n\":2}"]);
    wait_drained(&url, &queue).await?;
    worker.shut_down().await?;
    Ok(())
}

/// Every output's messages are made and checked before any is written: a binary output whose
/// value is not base64 fails the invocation without the output listed before it writing.
#[tokio::test]
async fn an_output_value_that_cannot_be_sent_fails_the_invocation_before_any_output_writes()
-> Result<()> {
    let url = rabbitmq::url()?;
    let queue = rabbitmq::queue_name("in");
    let (text, binary) = (format!("{queue}-text"), format!("{queue}-binary"));
    for name in [&queue, &text, &binary] {
        pika(&url, &["declare", name]).await?;
    }
    let h = Harness::start(Behaviour::Respond(
        json!({"Outputs": {"text": "fine", "raw": "not base64!"}}),
    ))
    .await?;
    put_app(&h, &url, json!({})).await?;
    h.put_function(
        "copy",
        json!([trigger(&queue),
            {"type": "rabbitMQ", "direction": "out", "name": "text", "queueName": text,
                "connectionStringSetting": "Rabbit"},
            {"type": "rabbitMQ", "direction": "out", "name": "raw", "queueName": binary,
                "dataType": "binary", "connectionStringSetting": "Rabbit"}]),
    )
    .await?;
    pika(&url, &["publish", &queue, "1", "x"]).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;
    // The message is delivered again after its first invocation failed: by then that
    // invocation's outputs were either written or refused.
    h.handler.wait_for(2, Duration::from_secs(30)).await?;
    assert_eq!(ready(&url, &text).await?, 0, "the text output was written");
    assert_eq!(ready(&url, &binary).await?, 0);
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn a_broker_the_egress_policy_refuses_is_never_dialled() -> Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    put_app(&h, "amqp://shoal:shoal@10.0.0.1:5672/%2f", json!({})).await?;
    h.put_function("process", json!([trigger("orders")]))
        .await?;
    let worker = h.start_worker(h.worker_config("w1"))?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let status = loop {
        let listeners = listeners_of(&worker, APP);
        if let Some((_, status)) = listeners.iter().find(|(_, s)| s.contains("Rabbit")) {
            break status.clone();
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "no refusal shown: {listeners:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.contains("10.0.0.1"), "{status}");
    assert!(
        !status.contains("shoal:shoal"),
        "the password is shown: {status}"
    );
    assert_eq!(h.handler.count(), 0);
    // Counted by why, for shoal_worker_listeners_not_started_total.
    let not_started: BTreeMap<_, _> = worker.stats.not_started().snapshot().into_iter().collect();
    assert!(not_started["egress_refused"] >= 1, "{not_started:?}");
    assert_eq!(not_started["source_unresolved"], 0, "{not_started:?}");
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn a_message_over_the_workers_limit_is_dead_lettered_unread_and_the_rest_flow() -> Result<()>
{
    let url = rabbitmq::url()?;
    let queue = rabbitmq::queue_name("large");
    let dead = format!("{queue}-dead");
    pika(&url, &["declare", &queue, &dead]).await?;
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    put_app(&h, &url, json!({})).await?;
    h.put_function("process", json!([trigger(&queue)])).await?;
    // 300 KiB first, in several frames, then three small ones behind it.
    pika(&url, &["publish-sized", &queue, "big", "307200"]).await?;
    pika(&url, &["publish", &queue, "3", "small"]).await?;

    let mut config = h.worker_config("w1");
    config.max_message_bytes = 64 * 1024;
    config.max_held_bytes = 1024 * 1024;
    let worker = h.start_worker(config)?;
    let requests = h.handler.wait_for(3, Duration::from_secs(30)).await?;
    let dead_lettered = pika(&url, &["get", &dead, "1", "30"]).await?;
    let dead_lettered = dead_lettered.as_array().cloned().unwrap_or_default();
    assert_eq!(dead_lettered.len(), 1, "nothing dead-lettered");
    assert_eq!(dead_lettered[0]["messageId"], "big");
    // The broker's copy is whole: only the worker did not read it.
    assert_eq!(dead_lettered[0]["size"], 307_200);
    wait_drained(&url, &queue).await?;
    let bodies: BTreeSet<&str> = requests
        .iter()
        .map(|r| r.body["Data"]["order"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        bodies,
        BTreeSet::from(["small-0", "small-1", "small-2"]),
        "the large message reached the handler"
    );
    assert_eq!(h.handler.count(), 3);

    // 1 MiB of 64 KiB messages: 16 held at once, not Azure's default 30; the status says so.
    let status = listeners_of(&worker, APP)
        .into_iter()
        .map(|(_, status)| status)
        .find(|s| s.starts_with("listening"))
        .unwrap_or_default();
    assert!(
        status.contains("holding 16 messages at a time rather than prefetchCount 30"),
        "{status}"
    );
    worker.shut_down().await?;
    Ok(())
}

/// How long `order-0` keeps the handler busy in the test below (within the harness's 5 s
/// handler timeout).
const SLOW: Duration = Duration::from_secs(3);

fn order_0_is_slow(body: &Value) -> Duration {
    match body["Data"]["order"].as_str() {
        Some("order-0") => SLOW,
        _ => Duration::ZERO,
    }
}

/// Acknowledgements go out in runs (one `basic.ack multiple`), never past a message still in
/// hand: with two messages held at once and the first one slow, the ones behind it are
/// acknowledged without it and keep the window open, and once the worker has stopped every
/// message was acknowledged (none comes back to the queue).
#[tokio::test]
async fn a_slow_message_holds_back_neither_the_ones_behind_it_nor_their_acknowledgements()
-> Result<()> {
    let url = rabbitmq::url()?;
    let queue = rabbitmq::queue_name("slow-head");
    pika(&url, &["declare", &queue]).await?;
    let h = Harness::start(Behaviour::DelayBy(order_0_is_slow, json!({}))).await?;
    put_app(
        &h,
        &url,
        json!({"extensions": {"rabbitMQ": {"prefetchCount": 2}}}),
    )
    .await?;
    h.put_function("process", json!([trigger(&queue)])).await?;
    pika(&url, &["publish", &queue, "12", "order"]).await?;

    let worker = h.start_worker(h.worker_config("w1"))?;
    let first = h.handler.wait_for(1, Duration::from_secs(30)).await?;
    assert_eq!(first[0].body["Data"]["order"], "order-0");
    // Had the eleven others waited for order-0's acknowledgement, the second of the two held
    // would have kept the window shut until order-0 was answered.
    let all = h.handler.wait_for(12, SLOW).await?;
    let behind = all[11].at.duration_since(first[0].at);
    assert!(
        behind < SLOW,
        "the last came {behind:?} after order-0, once it was answered"
    );
    let deadline = tokio::time::Instant::now() + SLOW + Duration::from_secs(20);
    while h.handler.running_of("process") > 0 {
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "order-0 never answered"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    worker.shut_down().await?;
    assert_eq!(
        ready(&url, &queue).await?,
        0,
        "a message came back unacknowledged"
    );
    assert_eq!(h.handler.count(), 12, "a message was delivered twice");
    Ok(())
}

#[tokio::test]
async fn a_message_without_an_id_keeps_one_idempotency_key_through_its_requeues() -> Result<()> {
    let url = rabbitmq::url()?;
    let queue = rabbitmq::queue_name("anon");
    let dead = format!("{queue}-dead");
    pika(&url, &["declare", &queue, &dead]).await?;
    let h = Harness::start(Behaviour::Status(500)).await?;
    put_app(&h, &url, json!({})).await?;
    // `stream` is read as `binary`: the handler gets base64.
    let mut binding = trigger(&queue);
    binding["dataType"] = json!("stream");
    h.put_function("anon", json!([binding])).await?;
    pika(&url, &["publish-anon", &queue, "no id"]).await?;

    let worker = h.start_worker(h.worker_config("w1"))?;
    let dead_lettered = pika(&url, &["get", &dead, "1", "30"]).await?;
    let dead_lettered = dead_lettered.as_array().cloned().unwrap_or_default();
    assert_eq!(dead_lettered.len(), 1, "nothing dead-lettered");
    let requests = h.handler.requests();
    assert_eq!(requests.len(), 5, "five deliveries, one attempt each");
    let keys: BTreeSet<&str> = requests
        .iter()
        .map(|r| r.headers["webhook-id"].to_str().unwrap_or_default())
        .collect();
    assert_eq!(keys.len(), 1, "one idempotency key: {keys:?}");
    let key = keys.into_iter().next().unwrap_or_default();
    assert_eq!(dead_lettered[0]["headers"]["x-shoal-webhook-id"], key);
    assert_eq!(dead_lettered[0]["messageId"], Value::Null);
    for request in &requests {
        assert_eq!(
            request.body["Data"]["order"], "bm8gaWQ=",
            "base64 of \"no id\""
        );
    }
    worker.shut_down().await?;
    Ok(())
}

/// A producer's trace context on a message (`publish-traced`), for the trace tests.
pub(crate) const PRODUCER: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// A RabbitMQ function `traced` that fails its first call (asking for a retry) and then
/// publishes an output message to `<queue>-out`, and one message on its queue published by
/// `pika` with [`PRODUCER`]'s context and a `tracestate` of `vendor=abc`: the harness and the
/// broker's URL and output queue.
pub(crate) async fn traced_message_retried_once(
    name: &str,
    message_id: &str,
) -> Result<(Harness, String, String)> {
    let url = rabbitmq::url()?;
    let queue = rabbitmq::queue_name(name);
    let out = format!("{queue}-out");
    pika(&url, &["declare", &queue, &out]).await?;
    let h = Harness::start(Behaviour::RespondBy(trace_chain::second_call_succeeds)).await?;
    put_app(&h, &url, json!({})).await?;
    h.put_function_body(
        APP,
        "traced",
        json!({"bindings": [trigger(&queue),
            {"type": "rabbitMQ", "direction": "out", "name": "copy", "queueName": out,
             "connectionStringSetting": "Rabbit"}],
            "retry": trace_chain::retry_policy()}),
    )
    .await?;
    pika(
        &url,
        &["publish-traced", &queue, message_id, PRODUCER, "vendor=abc"],
    )
    .await?;
    Ok((h, url, out))
}

/// The trace context a producer put on its message: every handler call continues it under a
/// span of its own (a retry's attempts are siblings under one delivery), and the message the
/// output publishes carries the attempt that wrote it as its parent.
#[tokio::test]
async fn a_producers_trace_runs_through_every_attempt_and_into_the_output() -> Result<()> {
    let (h, url, out) = traced_message_retried_once("traced", "t-1").await?;
    let worker = h.start_worker(h.worker_config("w1"))?;
    let written = pika(&url, &["get", &out, "1", "30"]).await?;
    let requests = h.handler.requests();
    assert_eq!(requests.len(), 2, "one retry, then success");
    let parents: Vec<&str> = requests
        .iter()
        .map(|r| r.headers["traceparent"].to_str().unwrap_or_default())
        .collect();
    for parent in &parents {
        assert_eq!(
            &parent[..36],
            &PRODUCER[..36],
            "the producer's trace: {parent}"
        );
        assert_ne!(*parent, PRODUCER, "a span of Shoal's own");
    }
    assert_ne!(parents[0], parents[1], "each attempt is a span of its own");
    for request in &requests {
        assert_eq!(request.headers["tracestate"].to_str()?, "vendor=abc");
    }
    let written = written.as_array().cloned().unwrap_or_default();
    assert_eq!(written.len(), 1, "{written:?}");
    assert_eq!(
        written[0]["headers"]["traceparent"], parents[1],
        "the output's parent is the attempt that wrote it"
    );
    worker.shut_down().await?;
    Ok(())
}
