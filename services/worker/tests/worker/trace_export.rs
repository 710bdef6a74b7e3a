//! Spans exported over OTLP to a real receiver (`shoal_testkit::otlp`: OpenTelemetry's own
//! protobuf definitions served by `grpcio`), for a message a producer nobody here wrote (PyPI
//! `pika`) published with its trace context, and for a Storage Queue message whose failure is
//! settled (poisoned) and opens its function's circuit breaker. The export is the process's
//! tracer provider, so each test installs its own: nextest runs every test in a process of its
//! own.

use std::time::Duration;

use anyhow::Result;
use serde_json::{Value, json};
use shoal_testkit::handler::Behaviour;
use shoal_testkit::otlp::{self, OtlpReceiver};
use shoal_testkit::rabbitmq::{self, pika};

use crate::rabbitmq::{PRODUCER, put_app, traced_message_retried_once, trigger};
use crate::support::*;
use crate::trace_chain::{self, Expected, export_to, quick_queue};

#[tokio::test]
async fn one_trace_runs_from_the_producer_through_every_attempt_to_the_output_in_the_exported_spans()
-> Result<()> {
    let receiver = OtlpReceiver::start().await?;
    let export = export_to(&receiver.endpoint(), quick_queue())?;
    let (h, url, out) = traced_message_retried_once("exported", "order-1").await?;

    let worker = h.start_worker(h.worker_config("w1"))?;
    let written = pika(&url, &["get", &out, "1", "30"]).await?;
    let spans = trace_chain::exported(&receiver, true).await?;

    let written = written.as_array().cloned().unwrap_or_default();
    assert_eq!(written.len(), 1, "{written:?}");
    let carried = written[0]["headers"]["traceparent"]
        .as_str()
        .unwrap_or_default();
    trace_chain::assert_chain(
        &spans,
        &h.handler.requests(),
        &[carried],
        &Expected {
            trace_id: trace_chain::trace_of(PRODUCER),
            producer_span: trace_chain::parent_of(PRODUCER),
            trace_state: Some("vendor=abc"),
            function: "traced",
            output_type: "rabbitMQ",
            settle: Some("ack"),
            body: "order-1",
        },
    )?;

    worker.shut_down().await?;
    export.shut_down(Duration::from_secs(5)).await;
    Ok(())
}

#[tokio::test]
async fn a_failed_queue_message_is_settled_under_its_delivery_and_the_breaker_it_opens_is_a_span()
-> Result<()> {
    let receiver = OtlpReceiver::start().await?;
    let export = export_to(&receiver.endpoint(), quick_queue())?;
    let h = Harness::start(Behaviour::Status(500)).await?;
    // One attempt each: a failure poisons its message (copy, then delete); the two open the
    // breaker (one failure is its threshold; the second exceeds it).
    h.put_jobs_function(
        json!({"maxDequeueCount": 1, "batchSize": 1}),
        "fails",
        json!({"circuitBreaker": {"failureThreshold": 1, "window": "00:00:30", "cooldown": "00:05:00"}}),
    )
    .await?;
    for i in 0..2 {
        h.enqueue("jobs", &base64(&format!("job {i}"))).await?;
    }

    let worker = h.start_worker(h.worker_config("w1"))?;
    let spans = receiver
        .wait_for(Duration::from_secs(30), |spans| {
            !otlp::named(spans, "breaker").is_empty() && otlp::named(spans, "settle").len() == 4
        })
        .await?;

    let deliveries = otlp::named(&spans, "deliver");
    assert_eq!(deliveries.len(), 2, "{deliveries:#?}");
    for delivery in deliveries {
        assert_eq!(delivery["attributes"]["shoal.outcome"], "failed");
        let mut steps: Vec<&Value> = otlp::named(&spans, "settle")
            .into_iter()
            .filter(|s| s["parentSpanId"] == delivery["spanId"])
            .collect();
        steps.sort_by_key(|s| s["start"].as_u64());
        let names: Vec<&Value> = steps
            .iter()
            .map(|s| &s["attributes"]["messaging.operation.name"])
            .collect();
        assert_eq!(names, [&json!("poison"), &json!("delete")], "{steps:#?}");
        for step in &steps {
            assert_eq!(step["traceId"], delivery["traceId"]);
            assert_eq!(step["attributes"]["shoal.outcome"], "settled");
        }
    }
    let breaker = otlp::named(&spans, "breaker")[0];
    assert_eq!(breaker["parentSpanId"], "", "its own trace: {breaker:#}");
    for (key, value) in [
        ("shoal.breaker.from", "closed"),
        ("shoal.breaker.to", "open"),
        ("shoal.breaker.cause", "failures"),
        ("shoal.function", "fails"),
        ("shoal.tenant", TENANT),
    ] {
        assert_eq!(breaker["attributes"][key], value, "{breaker:#}");
    }

    worker.shut_down().await?;
    export.shut_down(Duration::from_secs(5)).await;
    Ok(())
}

#[tokio::test]
async fn with_the_collector_gone_delivery_goes_on_and_the_spans_are_counted_as_dropped()
-> Result<()> {
    // A receiver that listened once and stopped: its port refuses every export.
    let mut receiver = OtlpReceiver::start().await?;
    let endpoint = receiver.endpoint();
    receiver.stop().await?;
    let export = export_to(&endpoint, quick_queue())?;
    let url = rabbitmq::url()?;
    let queue = rabbitmq::queue_name("unexported");
    pika(&url, &["declare", &queue]).await?;
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    put_app(&h, &url, json!({})).await?;
    h.put_function("process", json!([trigger(&queue)])).await?;
    pika(&url, &["publish", &queue, "20", "order"]).await?;

    let worker = h.start_worker(h.worker_config("w1"))?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while h.handler.requests().len() < 20 {
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "only {} of 20 messages reached the handler",
            h.handler.requests().len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Each message made a delivery and an attempt span; none reached a collector.
    while export.counts().dropped.get() < 40 {
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "{} spans counted as dropped",
            export.counts().dropped.get()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(export.counts().exported.get(), 0);
    let mut registry = prometheus_client::registry::Registry::with_prefix("shoal");
    registry.register_collector(export.counts().metrics());
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry)?;
    let dropped = text
        .lines()
        .find_map(|line| line.strip_prefix("shoal_trace_spans_dropped_total "))
        .and_then(|n| n.parse::<u64>().ok());
    assert!(dropped.is_some_and(|n| n >= 40), "{text}");

    worker.shut_down().await?;
    export.shut_down(Duration::from_secs(1)).await;
    Ok(())
}
