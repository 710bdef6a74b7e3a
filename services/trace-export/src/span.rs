//! Starting a span with the ids of a [`TraceContext`] Shoal already made (and sends on in
//! `traceparent`), so what is exported is what the handler and the next consumer see. Through
//! the `opentelemetry` API's global provider: a no-op span until [`crate::TraceExport`] is
//! installed.
//!
//! And the spans of work inside another's ([`within`], [`child_of_current`]): an API request
//! or a scheduler tick makes its span current for the future that does its work, and a store
//! operation or a tick's phase anywhere below starts its span as a child of it, with nothing
//! passed down. Work with no current span (a worker's telemetry flush) starts none: a root
//! for every background query would bury the traces people look for.

use std::borrow::Cow;

use opentelemetry::global::{self, BoxedSpan};
use opentelemetry::trace::{
    FutureExt as _, SpanContext, SpanId, SpanKind, TraceContextExt as _, TraceFlags, TraceId,
    TraceState, Tracer as _,
};
use opentelemetry::{Context, KeyValue};
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

/// Starts the span `name` of `scope` as a new trace's root, with ids the provider picks (for
/// work no message or caller started: a scheduler tick).
pub fn root(
    scope: &'static str,
    name: impl Into<Cow<'static, str>>,
    kind: SpanKind,
    attributes: Vec<KeyValue>,
) -> BoxedSpan {
    let tracer = global::tracer(scope);
    tracer
        .span_builder(name)
        .with_kind(kind)
        .with_attributes(attributes)
        .start_with_context(&tracer, &Context::new())
}

/// Runs `work` with `span` as the current span, then hands the span back (to set what the
/// work's result says and end it). A span that does not record is not made current, so with
/// export off nothing below starts a span either.
pub async fn within<T>(span: BoxedSpan, work: impl Future<Output = T>) -> (T, Current) {
    use opentelemetry::trace::Span as _;
    if !span.is_recording() {
        return (work.await, Current(None));
    }
    let cx = Context::new().with_span(span);
    let out = work.with_context(cx.clone()).await;
    (out, Current(Some(cx)))
}

/// A span [`within`] made current, handed back after its work.
pub struct Current(Option<Context>);

impl Current {
    /// Sets `attributes` on the span, when it records.
    pub fn set(&self, attributes: impl IntoIterator<Item = KeyValue>) {
        if let Some(cx) = &self.0 {
            cx.span().set_attributes(attributes);
        }
    }

    /// Marks the span failed with `description` (a fixed word or a status code, never a
    /// message's text).
    pub fn failed(&self, description: impl Into<Cow<'static, str>>) {
        if let Some(cx) = &self.0 {
            cx.span()
                .set_status(opentelemetry::trace::Status::error(description));
        }
    }

    pub fn end(self) {
        if let Some(cx) = self.0 {
            cx.span().end();
        }
    }
}

/// Starts the span `name` of `scope` as a child of the current span (see [`within`]); None
/// when no span is current.
pub fn child_of_current(
    scope: &'static str,
    name: impl Into<Cow<'static, str>>,
    kind: SpanKind,
    attributes: Vec<KeyValue>,
) -> Option<BoxedSpan> {
    // Checked in place first: most store operations (a worker's) run with no span current.
    if !Context::map_current(|cx| cx.has_active_span()) {
        return None;
    }
    let parent = Context::current();
    let tracer = global::tracer(scope);
    Some(
        tracer
            .span_builder(name)
            .with_kind(kind)
            .with_attributes(attributes)
            .start_with_context(&tracer, &parent),
    )
}

fn ids(trace: &TraceContext) -> (TraceId, SpanId) {
    let (trace_id, span_id) = trace.ids();
    (
        TraceId::from_bytes(trace_id.to_be_bytes()),
        SpanId::from_bytes(span_id.to_be_bytes()),
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

    #[tokio::test]
    async fn without_a_current_span_nothing_below_starts_one() {
        let own = TraceContext::root(7, 9);
        let span = start("test", "x".into(), SpanKind::Internal, &own, Parent::None);
        // Export is off in this process: the span does not record, so it is not made current.
        let (child, current) = within(span, async {
            child_of_current("test", "y", SpanKind::Client, Vec::new()).is_some()
        })
        .await;
        current.end();
        assert!(!child);
        assert!(child_of_current("test", "z", SpanKind::Client, Vec::new()).is_none());
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
