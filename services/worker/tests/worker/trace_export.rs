//! Spans exported over OTLP to a real receiver (`shoal_testkit::otlp`: OpenTelemetry's own
//! protobuf definitions served by `grpcio`), for a message a producer nobody here wrote (PyPI
//! `pika`) published with its trace context, and for a Storage Queue message whose failure is
//! settled (poisoned) and opens its function's circuit breaker. The export is the process's
//! tracer provider, so each test installs its own: nextest runs every test in a process of its
//! own.

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::Result;
use serde_json::{Value, json};
use shoal_testkit::handler::Behaviour;
use shoal_testkit::otlp::{self, OtlpReceiver};
use shoal_testkit::rabbitmq::{self, pika};
use shoal_trace_export::settings::QueueSettings;
use shoal_trace_export::{ExportSettings, SamplerSetting, TraceExport};

use crate::rabbitmq::{put_app, traced_message_retried_once, trigger};
use crate::support::*;

const PRODUCER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PRODUCER_SPAN: &str = "00f067aa0ba902b7";

fn export_to(endpoint: &str, queue: QueueSettings) -> Result<TraceExport> {
    Ok(TraceExport::install(ExportSettings {
        endpoint: endpoint.parse()?,
        service_name: "shoal-worker-test".into(),
        sampler: SamplerSetting::ParentBasedAlwaysOn,
        queue,
    })?)
}

/// Batches sent within a tenth of a second, so the test does not wait five.
fn quick_queue() -> QueueSettings {
    QueueSettings {
        schedule_delay: Duration::from_millis(100),
        export_timeout: Duration::from_secs(2),
        ..QueueSettings::default()
    }
}

fn parent_of(traceparent: &str) -> &str {
    traceparent.get(36..52).unwrap_or_default()
}

#[tokio::test]
async fn one_trace_runs_from_the_producer_through_every_attempt_to_the_output_in_the_exported_spans()
-> Result<()> {
    let receiver = OtlpReceiver::start().await?;
    let export = export_to(&receiver.endpoint(), quick_queue())?;
    let (h, url, out) = traced_message_retried_once("exported", "order-1").await?;

    let worker = h.start_worker(h.worker_config("w1"))?;
    let written = pika(&url, &["get", &out, "1", "30"]).await?;
    let spans = receiver
        .wait_for(Duration::from_secs(20), |spans| {
            otlp::named(spans, "deliver").len() == 1
                && otlp::named(spans, "invoke").len() == 2
                && otlp::named(spans, "output").len() == 1
                && otlp::named(spans, "settle").len() == 1
        })
        .await?;

    // One trace, the producer's, in every span.
    let traces: BTreeSet<&str> = spans.iter().filter_map(|s| s["traceId"].as_str()).collect();
    assert_eq!(traces, BTreeSet::from([PRODUCER_TRACE]), "{spans:#?}");
    let delivery = otlp::named(&spans, "deliver")[0];
    assert_eq!(
        delivery["parentSpanId"], PRODUCER_SPAN,
        "under the producer's span"
    );
    assert_eq!(delivery["kind"], 5, "a consumer span");
    assert_eq!(delivery["attributes"]["shoal.outcome"], "succeeded");
    assert_eq!(delivery["traceState"], "vendor=abc");
    // Each attempt: a sibling under the delivery, and the parent the handler was told of.
    let mut attempts = otlp::named(&spans, "invoke");
    attempts.sort_by_key(|s| s["attributes"]["shoal.attempt"].as_i64());
    let requests = h.handler.requests();
    assert_eq!(requests.len(), 2, "one retry, then success");
    for (number, (span, request)) in attempts.iter().zip(&requests).enumerate() {
        assert_eq!(span["parentSpanId"], delivery["spanId"], "{span:#}");
        assert_eq!(span["attributes"]["shoal.attempt"], number as i64 + 1);
        assert_eq!(span["attributes"]["shoal.retry_count"], number as i64);
        let traceparent = request.headers["traceparent"].to_str()?;
        assert_eq!(&traceparent[3..35], PRODUCER_TRACE);
        assert_eq!(
            parent_of(traceparent),
            span["spanId"],
            "the handler's parent is the exported attempt span"
        );
        for (key, value) in [
            ("shoal.tenant", TENANT),
            ("shoal.app", APP),
            ("shoal.function", "traced"),
        ] {
            assert_eq!(span["attributes"][key], value, "{span:#}");
        }
    }
    assert_eq!(attempts[0]["attributes"]["shoal.outcome"], "retry_asked");
    assert_eq!(attempts[0]["status"]["code"], 2, "an error status");
    assert_eq!(attempts[1]["attributes"]["shoal.outcome"], "succeeded");
    let retries: Vec<&Value> = delivery["events"]
        .as_array()
        .map(|events| {
            events
                .iter()
                .filter(|e| e["name"] == "retry scheduled")
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(retries.len(), 1, "{delivery:#}");
    // The output: written under the attempt that returned it, and the message carries that
    // attempt as its parent for the next consumer.
    let output = otlp::named(&spans, "output")[0];
    assert_eq!(output["parentSpanId"], attempts[1]["spanId"]);
    assert_eq!(output["attributes"]["shoal.output.binding"], "copy");
    assert_eq!(output["attributes"]["shoal.output.type"], "rabbitMQ");
    assert_eq!(output["attributes"]["messaging.batch.message_count"], 1);
    let written = written.as_array().cloned().unwrap_or_default();
    assert_eq!(written.len(), 1, "{written:?}");
    let carried = written[0]["headers"]["traceparent"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(parent_of(carried), attempts[1]["spanId"]);
    // The settlement: the message acked under the delivery, whose span ends after it.
    let settle = otlp::named(&spans, "settle")[0];
    assert_eq!(settle["parentSpanId"], delivery["spanId"], "{settle:#}");
    assert_eq!(settle["attributes"]["messaging.operation.name"], "ack");
    assert_eq!(settle["attributes"]["shoal.outcome"], "settled");
    assert_eq!(settle["attributes"]["shoal.settle.tries"], 1);
    let nanos = |span: &Value, at: &str| span[at].as_u64().expect("a span's time");
    assert!(
        nanos(settle, "start") >= nanos(attempts[1], "end")
            && nanos(settle, "end") <= nanos(delivery, "end"),
        "settled after the last call, within the delivery: {settle:#} {delivery:#}"
    );
    // Never the message's body in an attribute.
    let text = serde_json::to_string(&spans)?;
    assert!(!text.contains("order-1"), "the body in a span: {text}");
    assert_eq!(delivery["resource"]["service.name"], "shoal-worker-test");

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
