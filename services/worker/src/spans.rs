//! The worker's OpenTelemetry spans: one per delivery (under the producer's span when the
//! message carries its context, a new trace's root otherwise), one per handler call under it,
//! one per output binding written under the call that wrote it, one per settlement step
//! (delete, complete, ack, poison…) under the delivery, and one per circuit breaker transition
//! this worker made. They are exported when
//! the process installed `shoal_trace_export`'s export (the `opentelemetry` API's global
//! provider) and are no-ops otherwise: attributes are only built for a span that records.
//!
//! Each span takes the ids of the [`TraceContext`] Shoal already made for it, so the
//! `traceparent` a handler receives names the exported attempt span as its parent, and the
//! handler's own spans join the trace. Attributes name the tenant, app and function; never a
//! secret or a message's body.

use std::cell::RefCell;
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::global::BoxedSpan;
use opentelemetry::trace::{Span as _, SpanKind, Status};
use shoal_domain::circuit_breaker::{BreakerCause, BreakerState};
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
        self.outcome(outcome, failed);
        self.0.end();
    }

    fn outcome(&mut self, outcome: &'static str, failed: bool) {
        if self.0.is_recording() {
            self.0
                .set_attribute(KeyValue::new("shoal.outcome", outcome));
            if failed {
                self.0.set_attribute(KeyValue::new("error.type", outcome));
                self.0.set_status(Status::error(outcome));
            }
        }
    }

    fn set(&mut self, attributes: impl IntoIterator<Item = KeyValue>) {
        if self.0.is_recording() {
            self.0.set_attributes(attributes);
        }
    }
}

tokio::task_local! {
    /// The delivery on this task, from the message's receipt to its settlement (see
    /// [`delivering`]).
    static DELIVERY: RefCell<Option<Delivering>>;
}

/// A delivery whose handler calls are over and whose settlement is under way.
struct Delivering {
    trace: TraceContext,
    /// Ends when the task's delivery does (dropped with the task-local).
    _span: WorkerSpan,
}

/// Runs one delivery (a message or batch, from receipt to settlement) so that its `deliver`
/// span, started at its first handler call, ends after the settlement, and each settlement
/// step ([`settlement`]) is a span under it. The trigger's own code settles the message after
/// the handler calls are over, so the delivery's context travels with the task, as a `tracing`
/// span does, rather than through every settlement function's arguments.
pub async fn delivering<F: Future>(work: F) -> F::Output {
    DELIVERY.scope(RefCell::new(None), work).await
}

/// The handler calls of a delivery ended with `outcome`: within [`delivering`] its span stays
/// open for the settlement; elsewhere (a stream's batch, a timer's occurrence, settled by a
/// checkpoint or a schedule rather than per message) it ends now.
pub fn calls_ended(trace: TraceContext, mut span: WorkerSpan, outcome: &'static str, failed: bool) {
    span.outcome(outcome, failed);
    // Outside `delivering` the closure is dropped unrun, and the span with it, which ends it.
    let _outside = DELIVERY.try_with(|slot| {
        *slot.borrow_mut() = Some(Delivering { trace, _span: span });
    });
}

/// One settlement step (`delete`, `poison`, `complete`, `abandon`, `ack`…) of the delivery on
/// this task, under its `deliver` span; None when the message was settled without a handler
/// call (held back while the breaker is open, poisoned on arrival) or outside [`delivering`].
pub fn settlement(step: &str) -> Option<WorkerSpan> {
    let delivery = DELIVERY
        .try_with(|slot| slot.borrow().as_ref().map(|d| d.trace.clone()))
        .ok()
        .flatten()?;
    let own = delivery.child(rand::random());
    let mut span = start("settle", SpanKind::Client, &own, Parent::Local(&delivery));
    span.set([KeyValue::new("messaging.operation.name", step.to_owned())]);
    Some(span)
}

/// How many tries a settlement step took.
pub fn settle_tries(span: &mut WorkerSpan, tries: u32) {
    span.set([KeyValue::new("shoal.settle.tries", i64::from(tries))]);
}

/// A transition of a function's circuit breaker this worker made (opened on failures, a probe's
/// outcome…): a span of its own, since it belongs to no one message.
pub fn breaker_transition(
    function: &Function<'_>,
    from: BreakerState,
    to: BreakerState,
    cause: BreakerCause,
) {
    let own = TraceContext::root(rand::random(), rand::random());
    let mut span = start("breaker", SpanKind::Internal, &own, Parent::None);
    if span.recording() {
        span.set(function.attributes());
        span.set([
            KeyValue::new("shoal.breaker.from", from.as_str()),
            KeyValue::new("shoal.breaker.to", to.as_str()),
            KeyValue::new("shoal.breaker.cause", cause.as_str()),
        ]);
    }
    span.end("transition", false);
}

/// A decision of the function's circuit breaker about this delivery, as an event on its span.
pub fn breaker_decision(span: &mut WorkerSpan, decision: &'static str) {
    if span.recording() {
        span.0.add_event(
            "circuit breaker",
            vec![KeyValue::new("shoal.breaker.decision", decision)],
        );
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
