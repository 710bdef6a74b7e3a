//! Starting a span with the ids of a [`TraceContext`] Shoal already made (and sends on in
//! `traceparent`), so what is exported is what the handler and the next consumer see. Through
//! the `opentelemetry` API's global provider: a no-op span until [`crate::TraceExport`] is
//! installed.

use opentelemetry::Context;
use opentelemetry::global::{self, BoxedSpan};
use opentelemetry::trace::{
    SpanContext, SpanId, SpanKind, TraceContextExt as _, TraceFlags, TraceId, TraceState,
    Tracer as _,
};
use shoal_domain::trace_context::TraceContext;

/// Where a span's parent was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parent<'a> {
    /// A new trace's root.
    None,
    /// In another process (the producer, the caller).
    Remote(&'a TraceContext),
    /// In this one.
    Local(&'a TraceContext),
}

/// Starts the span `name` of the instrumentation scope `scope` with `own`'s ids under `parent`.
pub fn start(
    scope: &'static str,
    name: String,
    kind: SpanKind,
    own: &TraceContext,
    parent: Parent<'_>,
) -> BoxedSpan {
    let tracer = global::tracer(scope);
    let (trace_id, span_id) = ids(own);
    let builder = tracer
        .span_builder(name)
        .with_kind(kind)
        .with_trace_id(trace_id)
        .with_span_id(span_id);
    let parent = match parent {
        Parent::None => Context::new(),
        Parent::Remote(parent) => {
            Context::new().with_remote_span_context(span_context(parent, true))
        }
        Parent::Local(parent) => {
            Context::new().with_remote_span_context(span_context(parent, false))
        }
    };
    builder.start_with_context(&tracer, &parent)
}

fn ids(trace: &TraceContext) -> (TraceId, SpanId) {
    (
        TraceId::from_hex(&trace.trace_id()).unwrap_or(TraceId::INVALID),
        SpanId::from_hex(&trace.span_id()).unwrap_or(SpanId::INVALID),
    )
}

fn span_context(trace: &TraceContext, remote: bool) -> SpanContext {
    let (trace_id, span_id) = ids(trace);
    let flags = if trace.sampled() {
        TraceFlags::SAMPLED
    } else {
        TraceFlags::default()
    };
    // A vendor's state OpenTelemetry's parser refuses is not carried into the export; the
    // handler still receives it as it came.
    let state = trace
        .tracestate()
        .and_then(|state| state.parse::<TraceState>().ok())
        .unwrap_or_default();
    SpanContext::new(trace_id, span_id, flags, remote, state)
}

#[cfg(test)]
mod tests {
    use opentelemetry::trace::Span as _;

    use super::*;

    #[test]
    fn without_a_provider_a_span_is_a_no_op() {
        let own = TraceContext::root(7, 9);
        let span = start("test", "x".into(), SpanKind::Internal, &own, Parent::None);
        assert!(!span.is_recording());
    }

    #[test]
    fn a_parents_context_keeps_its_ids_flags_and_state() {
        let parent = TraceContext::parse(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            Some("vendor=abc"),
        )
        .unwrap();
        let context = span_context(&parent, true);
        assert_eq!(
            context.trace_id().to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert_eq!(context.span_id().to_string(), "00f067aa0ba902b7");
        assert!(context.is_sampled() && context.is_remote());
        assert_eq!(context.trace_state().header(), "vendor=abc");
    }
}
