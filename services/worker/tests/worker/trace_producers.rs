//! Traces started by producers nobody here wrote, followed through Shoal in the spans exported
//! to a real OTLP receiver: Microsoft's `azure-servicebus` SDK traced by its OpenTelemetry
//! plugin (`azure-core-tracing-opentelemetry`), which writes the context into the message's
//! application properties itself, and `confluent-kafka` with OpenTelemetry's propagator writing
//! `traceparent`/`tracestate` headers. What each producer wrote is read from its own output and
//! asserted, not assumed; the chain through Shoal is asserted by `trace_chain`, as for RabbitMQ.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::{Value, json};
use shoal_testkit::handler::Behaviour;
use shoal_testkit::otlp::OtlpReceiver;
use shoal_testkit::python;

use crate::kafka::{self, Stream};
use crate::service_bus_support::{self as service_bus, Bus, namespace, queue_entity};
use crate::support::{APP, Harness};
use crate::trace_chain::{self, Expected, export_to, quick_queue, second_call_succeeds};

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/worker/python")
        .join(name)
}

/// Runs `python/service_bus_traced.py` (the SDK with its tracing plugin) against `bus`.
async fn azure_sdk(bus: &Bus, args: &[&str]) -> Result<Value> {
    let env = HashMap::from([("SB_CONNECTION".to_owned(), bus.connection_string())]);
    let script = script("service_bus_traced.py");
    python::run_json(&script, args, &env, Duration::from_secs(60)).await
}

/// Runs `python/kafka_traced.py` (`confluent-kafka` with OpenTelemetry) against `brokers`.
async fn confluent_kafka(brokers: &str, args: &[&str]) -> Result<Value> {
    let env = HashMap::from([("KAFKA_BROKERS".to_owned(), brokers.to_owned())]);
    let script = script("kafka_traced.py");
    python::run_json(&script, args, &env, Duration::from_secs(60)).await
}

/// The one span a producer script reported by `name`.
fn span<'a>(reported: &'a Value, name: &str) -> Result<&'a Value> {
    let spans = reported["spans"].as_array().context("the script's spans")?;
    let found: Vec<&Value> = spans.iter().filter(|s| s["name"] == name).collect();
    anyhow::ensure!(found.len() == 1, "no single {name} span in {spans:#?}");
    Ok(found[0])
}

/// Asserts that `traceparent` names `span` of `trace`, sampled. (OpenTelemetry's Python SDK
/// sends flags `03`: sampled, and Trace Context level 2's random trace id.)
fn assert_names(traceparent: &str, trace: &str, span: &str) {
    assert_eq!(trace_chain::trace_of(traceparent), trace, "{traceparent}");
    assert_eq!(trace_chain::parent_of(traceparent), span, "{traceparent}");
    let flags = traceparent.get(53..55).unwrap_or_default();
    let flags = u8::from_str_radix(flags, 16).unwrap_or_default();
    assert_eq!(flags & 1, 1, "sampled: {traceparent}");
}

fn text<'a>(value: &'a Value, what: &str) -> Result<&'a str> {
    value
        .as_str()
        .with_context(|| format!("{what} is not text: {value}"))
}

/// The function `traced` on `orders`, retried once at the handler's request, copying to
/// `shipped` through a Service Bus output.
async fn service_bus_chain() -> Result<(Harness, Bus)> {
    let (h, bus) = service_bus::start(
        Behaviour::RespondBy(second_call_succeeds),
        namespace(
            json!([
                queue_entity("orders", json!({})),
                queue_entity("shipped", json!({}))
            ]),
            json!([]),
        ),
    )
    .await?;
    service_bus::put_app(&h, &bus, json!({})).await?;
    h.put_function_body(
        APP,
        "traced",
        json!({"bindings": [
            {"type": "serviceBusTrigger", "direction": "in", "name": "msg", "queueName": "orders"},
            {"type": "serviceBus", "direction": "out", "name": "copy", "queueName": "shipped"}],
            "retry": trace_chain::retry_policy()}),
    )
    .await?;
    Ok((h, bus))
}

#[tokio::test]
async fn a_trace_the_azure_service_bus_sdk_starts_runs_through_every_attempt_to_the_output()
-> Result<()> {
    let receiver = OtlpReceiver::start().await?;
    let export = export_to(&receiver.endpoint(), quick_queue())?;
    let (h, bus) = service_bus_chain().await?;

    // What the SDK wrote: under the application's span, a producer span of its own per message
    // (`ServiceBus.message`), named in both `Diagnostic-Id` and `traceparent`.
    let sent = azure_sdk(&bus, &["send", "orders", "sb-order-1"]).await?;
    let application = span(&sent, "place-order")?;
    let message = span(&sent, "ServiceBus.message")?;
    assert_eq!(message["kind"], "PRODUCER");
    assert_eq!(message["trace_id"], application["trace_id"]);
    assert_eq!(message["parent_span_id"], application["span_id"]);
    let trace_id = text(&message["trace_id"], "the trace id")?;
    let message_span = text(&message["span_id"], "the message span")?;
    let written = &sent["application_properties"];
    let traceparent = text(&written["traceparent"], "the SDK's traceparent")?;
    assert_names(traceparent, trace_id, message_span);
    assert_eq!(written["Diagnostic-Id"], traceparent, "{written}");
    assert_eq!(written.get("tracestate"), None, "{written}");

    let worker = h.start_worker(h.worker_config("w1"))?;
    // The next consumer: Microsoft's SDK again, reading the output message.
    let read = azure_sdk(&bus, &["receive", "shipped", "1"]).await?;
    let spans = trace_chain::exported(&receiver, true).await?;
    let requests = h.handler.requests();
    // The handler sees the properties as the SDK wrote them.
    assert_eq!(
        requests[0].body["Metadata"]["ApplicationProperties"], *written,
        "{:#}",
        requests[0].body
    );
    let copy = &read["messages"][0]["application_properties"];
    let carried = [
        text(&copy["traceparent"], "the output's traceparent")?,
        text(&copy["Diagnostic-Id"], "the output's Diagnostic-Id")?,
    ];
    trace_chain::assert_chain(
        &spans,
        &requests,
        &carried,
        &Expected {
            trace_id,
            producer_span: message_span,
            trace_state: None,
            function: "traced",
            output_type: "serviceBus",
            settle: Some("complete"),
            body: "sb-order-1",
        },
    )?;
    // The SDK's receive span links to the call that wrote the output: the trace goes on.
    let receive = span(&read, "ServiceBus.receive")?;
    assert_eq!(
        receive["links"],
        json!([{"trace_id": trace_id, "span_id": trace_chain::parent_of(carried[0])}])
    );

    worker.shut_down().await?;
    export.shut_down(Duration::from_secs(5)).await;
    Ok(())
}

#[tokio::test]
async fn a_trace_a_confluent_kafka_producer_starts_runs_through_every_attempt_to_the_output()
-> Result<()> {
    let receiver = OtlpReceiver::start().await?;
    let export = export_to(&receiver.endpoint(), quick_queue())?;
    let s = Stream::start(Behaviour::RespondBy(second_call_succeeds), 1).await?;
    s.broker.create_topic("shipped", 1).await?;
    let mut bindings = kafka::trigger(json!({}));
    if let Some(bindings) = bindings.as_array_mut() {
        bindings.push(json!({"type": "kafka", "direction": "out", "name": "copy",
            "brokerList": "%KafkaBrokers%", "topic": "shipped"}));
    }
    s.put_function(json!({"bindings": bindings, "retry": trace_chain::retry_policy()}))
        .await?;

    // What the producer sent: its span's context as `traceparent`, and the trace's state.
    let brokers = s.broker.bootstrap();
    let sent = confluent_kafka(&brokers, &["produce", "orders", "kafka-order-1"]).await?;
    let producer = span(&sent, "orders publish")?;
    assert_eq!(producer["kind"], "PRODUCER");
    let trace_id = text(&producer["trace_id"], "the trace id")?;
    let producer_span = text(&producer["span_id"], "the producer span")?;
    let headers = &sent["headers"];
    let traceparent = text(&headers["traceparent"], "the producer's traceparent")?;
    assert_names(traceparent, trace_id, producer_span);
    assert_eq!(headers["tracestate"], "vendor=abc", "{headers}");

    let worker = s.h.start_worker(s.h.worker_config("w1"))?;
    let read = confluent_kafka(&brokers, &["consume", "shipped", "1"]).await?;
    let spans = trace_chain::exported(&receiver, false).await?;
    let copy = &read[0]["headers"];
    assert_eq!(copy["tracestate"], "vendor=abc", "{read}");
    trace_chain::assert_chain(
        &spans,
        &s.h.handler.requests(),
        &[text(&copy["traceparent"], "the output's traceparent")?],
        &Expected {
            trace_id,
            producer_span,
            trace_state: Some("vendor=abc"),
            function: "bill",
            output_type: "kafka",
            settle: None,
            body: "kafka-order-1",
        },
    )?;

    worker.shut_down().await?;
    export.shut_down(Duration::from_secs(5)).await;
    Ok(())
}
