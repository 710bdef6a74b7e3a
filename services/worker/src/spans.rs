//! The worker's OpenTelemetry spans: one per delivery (under the producer's span when the
//! message carries its context, a new trace's root otherwise), one per handler call under it,
//! and one per output binding written under the call that wrote it. They are exported when
//! the process installed `shoal_trace_export`'s export (the `opentelemetry` API's global
//! provider) and are no-ops otherwise: attributes are only built for a span that records.
//!
//! Each span takes the ids of the [`TraceContext`] Shoal already made for it, so the
//! `traceparent` a handler receives names the exported attempt span as its parent, and the
//! handler's own spans join the trace. Attributes name the tenant, app and function; never a
//! secret or a message's body.

use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::global::BoxedSpan;
use opentelemetry::trace::{Span as _, SpanKind, Status};
use shoal_domain::trace_context::TraceContext;
use shoal_trace_export::span::{self, Parent};
use uuid::Uuid;

/// The instrumentation scope every worker span is exported under.
const SCOPE: &str = "shoal-worker";

/// The function a span works for.
#[derive(Clone, Copy)]
pub struct Function<'a> {
    pub tenant: &'a str,
    pub app: &'a str,
    pub function: &'a str,
}

impl Function<'_> {
    fn attributes(&self) -> [KeyValue; 4] {
        [
            KeyValue::new("shoal.tenant", self.tenant.to_owned()),
            KeyValue::new("shoal.app", self.app.to_owned()),
            KeyValue::new("shoal.function", self.function.to_owned()),
            // `<app>/<function>`, as Azure's WebJobs host names its invocation activity's
            // function (azure-webjobs-sdk, src/Microsoft.Azure.WebJobs.Host/Trace/
            // TraceConstants.cs, `AttributeFaasNameKey`).
            KeyValue::new("faas.name", format!("{}/{}", self.app, self.function)),
        ]
    }
}

/// A span that ends when it is dropped, if [`WorkerSpan::end`] did not end it before.
pub struct WorkerSpan(BoxedSpan);

impl WorkerSpan {
    pub fn recording(&self) -> bool {
        self.0.is_recording()
    }

    /// Whether the sampler kept this span's trace, when a provider decided it (None with
    /// export off).
    pub fn sampled(&self) -> Option<bool> {
        let context = self.0.span_context();
        context.is_valid().then(|| context.is_sampled())
    }

    /// Ends the span with `outcome`, an error when `failed`. The outcome is a fixed word, never
    /// the failure's text: a handler's error answer may echo the message it was sent.
    pub fn end(mut self, outcome: &'static str, failed: bool) {
        if self.0.is_recording() {
            self.0
                .set_attribute(KeyValue::new("shoal.outcome", outcome));
            if failed {
                self.0.set_attribute(KeyValue::new("error.type", outcome));
                self.0.set_status(Status::error(outcome));
            }
        }
        self.0.end();
    }

    fn set(&mut self, attributes: impl IntoIterator<Item = KeyValue>) {
        if self.0.is_recording() {
            self.0.set_attributes(attributes);
        }
    }
}

/// The delivery of one message (or batch): `delivery` is its own context, a child of
/// `producer` when the message carried one.
pub fn delivery(
    function: &Function<'_>,
    producer: Option<&TraceContext>,
    delivery: &TraceContext,
) -> WorkerSpan {
    let parent = producer.map_or(Parent::None, Parent::Remote);
    let mut span = start("deliver", SpanKind::Consumer, delivery, parent);
    span.set(function.attributes());
    span
}

/// One call of the handler: `attempt` is its context (the `traceparent` the handler is sent),
/// a child of `delivery`. `number` counts the calls of this delivery from 1; `retry_count` is
/// the `RetryCount` the handler sees.
pub fn attempt(
    function: &Function<'_>,
    delivery: &TraceContext,
    attempt: &TraceContext,
    number: u32,
    retry_count: u32,
    invocation_id: Uuid,
) -> WorkerSpan {
    let mut span = start("invoke", SpanKind::Client, attempt, Parent::Local(delivery));
    if span.recording() {
        span.set(function.attributes());
        span.set([
            KeyValue::new("shoal.attempt", i64::from(number)),
            KeyValue::new("shoal.retry_count", i64::from(retry_count)),
            KeyValue::new("faas.invocation_id", invocation_id.to_string()),
        ]);
    }
    span
}

/// The handler's HTTP status, when it answered one that failed the call.
pub fn http_status(span: &mut WorkerSpan, status: u16) {
    span.set([KeyValue::new(
        "http.response.status_code",
        i64::from(status),
    )]);
}

/// Writing one output binding's messages, under the handler call that returned them.
pub fn output(attempt: &TraceContext, binding: &str, kind: &str) -> WorkerSpan {
    let own = attempt.child(rand::random());
    let mut span = start("output", SpanKind::Producer, &own, Parent::Local(attempt));
    span.set([
        KeyValue::new("shoal.output.binding", binding.to_owned()),
        KeyValue::new("shoal.output.type", kind.to_owned()),
    ]);
    span
}

/// How many messages an output span wrote.
pub fn messages_written(span: &mut WorkerSpan, count: usize) {
    span.set([KeyValue::new("messaging.batch.message_count", count as i64)]);
}

/// How long a delivery waited before its next call, as an event on the delivery's span.
pub fn retry_scheduled(span: &mut WorkerSpan, retry_count: u32, wait: Duration) {
    if span.recording() {
        span.0.add_event(
            "retry scheduled",
            vec![
                KeyValue::new("shoal.retry_count", i64::from(retry_count)),
                KeyValue::new("shoal.retry_in_ms", wait.as_millis() as i64),
            ],
        );
    }
}

fn start(name: &'static str, kind: SpanKind, own: &TraceContext, parent: Parent<'_>) -> WorkerSpan {
    WorkerSpan(span::start(SCOPE, name.into(), kind, own, parent))
}
