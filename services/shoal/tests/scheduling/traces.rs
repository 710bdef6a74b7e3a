//! A leader's ticks exported over OTLP to a real receiver (`shoal_testkit::otlp`: OpenTelemetry's
//! own protobuf definitions served by `grpcio`), from a `shoal scheduler` process given the
//! collector's endpoint by its flags, as the chart gives it by OpenTelemetry's variables.

use std::time::Duration;

use serde_json::{Value, json};
use shoal_testkit::handler::Behaviour;
use shoal_testkit::otlp::{self, OtlpReceiver};

use crate::fair_share::free_port;
use crate::processes::Cluster;
use crate::queue_app;
use crate::support::Harness;

const PHASES: [&str; 5] = ["read", "metrics", "plan", "write", "upkeep"];

/// The spans under `parent`, by name.
fn children<'a>(spans: &'a [Value], parent: &Value) -> Vec<&'a Value> {
    spans
        .iter()
        .filter(|s| s["parentSpanId"] == parent["spanId"] && s["traceId"] == parent["traceId"])
        .collect()
}

/// A tick whose five phases have all arrived, with the store operations of the two that
/// always query (the others may have nothing to ask the database).
fn complete_tick(spans: &[Value]) -> Option<&Value> {
    otlp::named(spans, "tick").into_iter().find(|tick| {
        let phases = children(spans, tick);
        PHASES.iter().all(|name| {
            phases.iter().any(|p| {
                p["name"] == *name
                    && (!matches!(*name, "read" | "write") || !children(spans, p).is_empty())
            })
        })
    })
}

#[tokio::test]
async fn each_tick_is_a_trace_of_its_phases_with_their_store_operations() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    queue_app(&h, json!({})).await?;
    let receiver = OtlpReceiver::start().await?;
    let endpoint = receiver.endpoint();
    let metrics = format!("127.0.0.1:{}", free_port()?);
    let mut cluster = Cluster::new(&h);
    cluster.scheduler_with(
        "s1",
        &[
            "--listen",
            &metrics,
            "--otel-exporter-otlp-endpoint",
            &endpoint,
            "--otel-bsp-schedule-delay",
            "100",
        ],
    );

    let spans = receiver
        .wait_for(Duration::from_secs(30), |spans| {
            complete_tick(spans).is_some()
        })
        .await?;
    let tick = complete_tick(&spans).expect("found by the wait");
    assert_eq!(tick["parentSpanId"], "", "a trace's root: {tick:#}");
    assert_eq!(tick["attributes"]["shoal.scheduler"], "s1");
    assert_eq!(tick["attributes"]["shoal.outcome"], "ok");
    assert_eq!(tick["attributes"]["shoal.apps"], 1);
    assert_eq!(tick["resource"]["service.name"], "shoal-scheduler");
    // The phases in their order, each within the tick.
    let mut phases = children(&spans, tick);
    phases.sort_by_key(|p| p["start"].as_u64());
    let names: Vec<&str> = phases.iter().filter_map(|p| p["name"].as_str()).collect();
    assert_eq!(names, PHASES, "{phases:#?}");
    let nanos = |span: &Value, at: &str| span[at].as_u64().expect("a span's time");
    for phase in &phases {
        assert!(
            nanos(phase, "start") >= nanos(tick, "start")
                && nanos(phase, "end") <= nanos(tick, "end")
        );
    }
    // The store's operations under the phase that ran them, labelled as in /metrics.
    let operations = |phase: usize| -> Vec<&str> {
        children(&spans, phases[phase])
            .iter()
            .filter_map(|s| s["name"].as_str())
            .collect()
    };
    assert!(
        operations(0).contains(&"db workers_live"),
        "{:?}",
        operations(0)
    );
    assert!(
        operations(3).contains(&"db leadership_fence"),
        "{:?}",
        operations(3)
    );
    for operation in children(&spans, phases[0]) {
        assert_eq!(operation["kind"], 3, "a client span: {operation:#}");
        assert_eq!(operation["attributes"]["db.system.name"], "postgresql");
        assert_eq!(operation["attributes"]["shoal.outcome"], "ok");
    }

    // The scheduler's /metrics counts what it exported.
    let client = reqwest::Client::new();
    let metrics = format!("http://{metrics}/metrics");
    let text = client.get(&metrics).send().await?.text().await?;
    let exported = text
        .lines()
        .find_map(|l| l.strip_prefix("shoal_trace_spans_exported_total "))
        .and_then(|v| v.parse::<f64>().ok());
    assert!(exported.is_some_and(|n| n > 0.0), "{text}");
    Ok(())
}
