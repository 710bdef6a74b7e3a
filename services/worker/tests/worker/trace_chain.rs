//! One trace followed from a producer nobody here wrote through Shoal: a message whose first
//! handler call asks for a retry and whose second writes one output. What every trigger's trace
//! test asserts of the exported spans and of the handler's requests lives here once, so a span
//! added to the chain is asserted for every producer in one place.

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::Result;
use serde_json::{Value, json};
use shoal_testkit::handler::Recorded;
use shoal_testkit::otlp::{self, OtlpReceiver};
use shoal_trace_export::settings::QueueSettings;
use shoal_trace_export::{ExportSettings, SamplerSetting, TraceExport};

use crate::support::{APP, TENANT};

/// Installs the process's export to `endpoint` (nextest runs each test in a process of its own,
/// so each test has its own).
pub(crate) fn export_to(endpoint: &str, queue: QueueSettings) -> Result<TraceExport> {
    Ok(TraceExport::install(ExportSettings {
        endpoint: endpoint.parse()?,
        service_name: "shoal-worker-test".into(),
        sampler: SamplerSetting::ParentBasedAlwaysOn,
        queue,
    })?)
}

/// Batches sent within a tenth of a second, so the test does not wait five.
pub(crate) fn quick_queue() -> QueueSettings {
    QueueSettings {
        schedule_delay: Duration::from_millis(100),
        export_timeout: Duration::from_secs(2),
        ..QueueSettings::default()
    }
}

/// The handler of the chain: the first call asks for a retry, the second writes `written` to
/// the output binding `copy`.
pub(crate) fn second_call_succeeds(body: &Value) -> Value {
    if body["Metadata"]["RetryContext"]["RetryCount"].as_u64() == Some(0) {
        json!({"retryAfter": "00:00:00.050"})
    } else {
        json!({"Outputs": {"copy": "written"}})
    }
}

/// The retry policy of the chain's function: room for the one retry the handler asks for.
pub(crate) fn retry_policy() -> Value {
    json!({"strategy": "fixedDelay", "maxRetryCount": 2, "delayInterval": "00:00:00.050"})
}

/// The parent span id a `traceparent` names.
pub(crate) fn parent_of(traceparent: &str) -> &str {
    traceparent.get(36..52).unwrap_or_default()
}

/// The trace id a `traceparent` names.
pub(crate) fn trace_of(traceparent: &str) -> &str {
    traceparent.get(3..35).unwrap_or_default()
}

/// What the producer started and what the test set up, to hold the exported chain against.
pub(crate) struct Expected<'a> {
    pub trace_id: &'a str,
    /// The producer's span the message named as its parent.
    pub producer_span: &'a str,
    /// The `tracestate` the message carried, if any.
    pub trace_state: Option<&'a str>,
    pub function: &'a str,
    /// The output binding's `type` (its name is `copy`).
    pub output_type: &'a str,
    /// The step that settles the message (`ack`, `complete`); None for a stream's events,
    /// which a checkpoint settles, not a step per message.
    pub settle: Option<&'a str>,
    /// The message's body: no span may hold it.
    pub body: &'a str,
}

/// The chain's spans, once every one was exported (with the settlement's, when `settled`).
pub(crate) async fn exported(receiver: &OtlpReceiver, settled: bool) -> Result<Vec<Value>> {
    receiver
        .wait_for(Duration::from_secs(20), |spans| {
            otlp::named(spans, "deliver").len() == 1
                && otlp::named(spans, "invoke").len() == 2
                && otlp::named(spans, "output").len() == 1
                && otlp::named(spans, "settle").len() == usize::from(settled)
        })
        .await
}

/// Asserts one trace, the producer's, from its span through the delivery, both calls (siblings
/// under the delivery, each the parent the handler was told of) to the output written under the
/// second call and the `traceparent`s the output message `carries` (each must name that call).
pub(crate) fn assert_chain(
    spans: &[Value],
    requests: &[Recorded],
    carries: &[&str],
    expected: &Expected,
) -> Result<()> {
    let traces: BTreeSet<&str> = spans.iter().filter_map(|s| s["traceId"].as_str()).collect();
    assert_eq!(traces, BTreeSet::from([expected.trace_id]), "{spans:#?}");
    let delivery = otlp::named(spans, "deliver")[0];
    assert_eq!(
        delivery["parentSpanId"], expected.producer_span,
        "under the producer's span"
    );
    assert_eq!(delivery["kind"], 5, "a consumer span");
    assert_eq!(delivery["attributes"]["shoal.outcome"], "succeeded");
    assert_eq!(
        delivery["traceState"],
        expected.trace_state.unwrap_or_default()
    );
    assert_eq!(delivery["resource"]["service.name"], "shoal-worker-test");

    // Each call: a sibling under the delivery, and the parent the handler was told of.
    let mut attempts = otlp::named(spans, "invoke");
    attempts.sort_by_key(|s| s["attributes"]["shoal.attempt"].as_i64());
    assert_eq!(requests.len(), 2, "one retry, then success");
    for (number, (span, request)) in attempts.iter().zip(requests).enumerate() {
        assert_eq!(span["parentSpanId"], delivery["spanId"], "{span:#}");
        assert_eq!(span["attributes"]["shoal.attempt"], number as i64 + 1);
        assert_eq!(span["attributes"]["shoal.retry_count"], number as i64);
        let traceparent = request.header("traceparent").unwrap_or_default();
        assert_eq!(trace_of(traceparent), expected.trace_id);
        assert_eq!(
            parent_of(traceparent),
            span["spanId"],
            "the handler's parent is the exported call span"
        );
        assert_eq!(request.header("tracestate"), expected.trace_state);
        for (key, value) in [
            ("shoal.tenant", TENANT),
            ("shoal.app", APP),
            ("shoal.function", expected.function),
        ] {
            assert_eq!(span["attributes"][key], value, "{span:#}");
        }
    }
    assert_eq!(attempts[0]["attributes"]["shoal.outcome"], "retry_asked");
    assert_eq!(attempts[0]["status"]["code"], 2, "an error status");
    assert_eq!(attempts[1]["attributes"]["shoal.outcome"], "succeeded");
    let retries = delivery["events"]
        .as_array()
        .map(|events| {
            events
                .iter()
                .filter(|e| e["name"] == "retry scheduled")
                .count()
        })
        .unwrap_or_default();
    assert_eq!(retries, 1, "{delivery:#}");

    // The output: written under the call that returned it, and the message carries that call
    // as its parent for the next consumer.
    let output = otlp::named(spans, "output")[0];
    assert_eq!(output["parentSpanId"], attempts[1]["spanId"]);
    assert_eq!(output["attributes"]["shoal.output.binding"], "copy");
    assert_eq!(
        output["attributes"]["shoal.output.type"],
        expected.output_type
    );
    assert_eq!(output["attributes"]["messaging.batch.message_count"], 1);
    anyhow::ensure!(!carries.is_empty(), "the output message carries no context");
    for carried in carries {
        assert_eq!(trace_of(carried), expected.trace_id, "{carried}");
        assert_eq!(parent_of(carried), attempts[1]["spanId"], "{carried}");
    }

    // The settlement: under the delivery, after the last call; the delivery's span ends after it.
    let settles = otlp::named(spans, "settle");
    match expected.settle {
        Some(step) => {
            assert_eq!(settles.len(), 1, "{settles:#?}");
            let settle = settles[0];
            assert_eq!(settle["parentSpanId"], delivery["spanId"], "{settle:#}");
            assert_eq!(settle["attributes"]["messaging.operation.name"], step);
            assert_eq!(settle["attributes"]["shoal.outcome"], "settled");
            assert_eq!(settle["attributes"]["shoal.settle.tries"], 1);
            let nanos = |span: &Value, at: &str| span[at].as_u64().unwrap_or_default();
            assert!(
                nanos(settle, "start") >= nanos(attempts[1], "end")
                    && nanos(settle, "end") <= nanos(delivery, "end")
                    && nanos(settle, "end") > 0,
                "settled after the last call, within the delivery: {settle:#} {delivery:#}"
            );
        }
        None => assert!(settles.is_empty(), "{settles:#?}"),
    }

    let text = serde_json::to_string(spans)?;
    assert!(!text.contains(expected.body), "the body in a span: {text}");
    Ok(())
}
