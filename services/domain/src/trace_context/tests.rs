use base64::Engine as _;
use proptest::prelude::*;

use super::*;

const EXAMPLE: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

#[test]
fn the_recommendations_example_reads_and_writes_back() {
    let context =
        TraceContext::parse(EXAMPLE, Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")).unwrap();
    assert_eq!(context.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(context.span_id(), "00f067aa0ba902b7");
    assert!(context.sampled());
    assert_eq!(context.traceparent(), EXAMPLE);
    assert_eq!(
        context.tracestate(),
        Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")
    );
    assert_eq!(
        context.headers(),
        [
            ("traceparent", EXAMPLE.to_owned()),
            (
                "tracestate",
                "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE".to_owned()
            )
        ]
    );
}

#[test]
fn what_a_receiver_may_not_use_is_refused() {
    let refused = [
        // Upper-case hex, a forbidden version, all-zero ids.
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
        // Version 00 with more after it, wrong separators and lengths, not hex.
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
        "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
        "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
        // Service Bus's legacy hierarchical Diagnostic-Id.
        "|4bf92f3577b34da6a3ce929d0e0e4736.00f067aa0ba902b7.",
        "",
    ];
    for traceparent in refused {
        assert_eq!(
            TraceContext::parse(traceparent, None),
            None,
            "{traceparent}"
        );
    }
    // A later version is read by its first four fields.
    let later = "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes-next";
    assert_eq!(
        TraceContext::parse(later, None).map(|c| c.traceparent()),
        Some(EXAMPLE.to_owned())
    );
}

#[test]
fn a_tracestate_out_of_bounds_is_dropped_and_the_parent_kept() {
    let many: Vec<String> = (0..33).map(|i| format!("k{i}=v")).collect();
    let too_long = format!("k={}", "v".repeat(600));
    for state in [
        many.join(","),
        too_long,
        "no-equals".into(),
        "k=a,b".into(),
        "K=v".into(),
    ] {
        let context = TraceContext::parse(EXAMPLE, Some(&state)).unwrap();
        assert_eq!(context.tracestate(), None, "{state}");
    }
    let context = TraceContext::parse(EXAMPLE, Some(" a=1 , ,b@vendor=2 ")).unwrap();
    assert_eq!(context.tracestate(), Some("a=1,b@vendor=2"));
}

#[test]
fn a_service_bus_message_is_read_by_traceparent_then_diagnostic_id() {
    let other = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00";
    let both = |name: &str| match name {
        "traceparent" => Some(EXAMPLE),
        "Diagnostic-Id" => Some(other),
        _ => None,
    };
    assert_eq!(TraceContext::extract(both).unwrap().traceparent(), EXAMPLE);
    let only_diagnostic = |name: &str| (name == "Diagnostic-Id").then_some(other);
    let context = TraceContext::extract(only_diagnostic).unwrap();
    assert_eq!(context.traceparent(), other);
    assert!(!context.sampled(), "the producer's flags travel on");
    let legacy = |name: &str| (name == "Diagnostic-Id").then_some("|abc.1.");
    assert_eq!(TraceContext::extract(legacy), None);
    assert_eq!(TraceContext::extract(|_| None), None);
}

#[test]
fn a_child_continues_the_trace_under_a_span_of_its_own() {
    let parent = TraceContext::parse(EXAMPLE, Some("a=1")).unwrap();
    let child = parent.child(0xabc);
    assert_eq!(child.trace_id(), parent.trace_id());
    assert_eq!(child.span_id(), "0000000000000abc");
    assert_eq!(child.tracestate(), Some("a=1"));
    // Zero ids are never written, whatever the caller drew.
    assert_eq!(parent.child(0).span_id(), "0000000000000001");
    let root = TraceContext::root(0, 0);
    assert!(TraceContext::parse(&root.traceparent(), None).is_some());
}

#[test]
fn a_request_body_gives_the_context_its_trigger_put_in_metadata() {
    use serde_json::json;
    let service_bus =
        json!({"Metadata": {"ApplicationProperties": {"Diagnostic-Id": EXAMPLE, "region": "eu"}}});
    let rabbit = json!({"Metadata": {"BasicProperties": {"Headers": {"traceparent": EXAMPLE, "tracestate": "a=1"}}}});
    // base64 of the example and of "a=1".
    let encoded = base64::engine::general_purpose::STANDARD.encode(EXAMPLE);
    let kafka = json!({"Metadata": {"Headers": [{"Key": "other", "Value": null}, {"Key": "traceparent", "Value": encoded}]}});
    let batch =
        json!({"Metadata": {"HeadersArray": [[{"Key": "traceparent", "Value": encoded}], []]}});
    for body in [&service_bus, &rabbit, &kafka, &batch] {
        assert_eq!(
            of_request(body).map(|c| c.traceparent()),
            Some(EXAMPLE.to_owned()),
            "{body}"
        );
    }
    assert_eq!(of_request(&rabbit).unwrap().tracestate(), Some("a=1"));
    let queue = json!({"Data": {"msg": "x"}, "Metadata": {"Id": "1", "DequeueCount": 1}});
    assert_eq!(of_request(&queue), None);
}

#[test]
fn an_output_continues_the_trace_unless_the_handler_gave_it_a_context() {
    let context = TraceContext::parse(EXAMPLE, None).unwrap();
    assert_eq!(
        context.for_output(true, |_| false),
        [
            ("traceparent", EXAMPLE.to_owned()),
            ("Diagnostic-Id", EXAMPLE.to_owned())
        ]
    );
    assert_eq!(
        context.for_output(false, |_| false),
        [("traceparent", EXAMPLE.to_owned())]
    );
    assert!(
        context
            .for_output(false, |name| name == "traceparent")
            .is_empty()
    );
    assert!(
        context
            .for_output(true, |name| name == "Diagnostic-Id")
            .is_empty()
    );
}

proptest! {
    #[test]
    fn every_context_written_reads_back_the_same(trace in any::<u128>(), span in any::<u64>(), child in any::<u64>(), flags in any::<u8>()) {
        let root = TraceContext::root(trace, span);
        let mut context = root.child(child);
        context.flags = flags;
        let read = TraceContext::parse(&context.traceparent(), None).unwrap();
        prop_assert_eq!(read, context);
    }

    #[test]
    fn no_text_makes_the_reader_panic_or_accept_a_zero_id(text in "\\PC{0,80}", state in "\\PC{0,80}") {
        if let Some(context) = TraceContext::parse(&text, Some(&state)) {
            prop_assert_ne!(context.trace_id(), "0".repeat(32));
            prop_assert_ne!(context.span_id(), "0".repeat(16));
            prop_assert!(context.tracestate().is_none_or(|s| s.len() <= MAX_STATE_LEN));
        }
    }
}

#[test]
fn a_samplers_decision_changes_only_the_sampled_flag() {
    let context = TraceContext::parse(
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03",
        Some("vendor=abc"),
    )
    .unwrap();
    let dropped = context.with_sampled(false);
    assert_eq!(
        dropped.traceparent(),
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-02"
    );
    assert_eq!(dropped.tracestate(), Some("vendor=abc"));
    assert_eq!(dropped.with_sampled(true), context);
}

#[test]
fn trace_ids_are_32_lowercase_hex_digits_not_all_zero() {
    let written = TraceContext::root(0x4bf9_2f35_77b3_4da6_a3ce_929d_0e0e_4736, 1).trace_id();
    assert!(is_trace_id(&written));
    assert!(is_trace_id(&TraceContext::root(1, 1).trace_id()));
    for bad in [
        "",
        "00000000000000000000000000000000",
        "4BF92F3577B34DA6A3CE929D0E0E4736",
        "4bf92f3577b34da6a3ce929d0e0e473",
        "4bf92f3577b34da6a3ce929d0e0e47360",
        "4bf92f3577b34da6a3ce929d0e0e473g",
        " 4bf92f3577b34da6a3ce929d0e0e473",
        "4bf92f35-77b3-4da6-a3ce-929d0e0e47",
        "ébf92f3577b34da6a3ce929d0e0e473",
    ] {
        assert!(!is_trace_id(bad), "{bad:?}");
    }
}
