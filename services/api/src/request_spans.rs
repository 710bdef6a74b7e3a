//! A span per API request (`<method> <route template>`, never the raw path, whose tenant and
//! app names would be high-cardinality and the callers' own), under the caller's span when the
//! request carried a `traceparent`. The request's own context goes into its extensions
//! ([`RequestTrace`]), so a webhook's handler call is a span under the request's, and the span
//! is current while the request is handled, so the store's operations are spans under it. With
//! export off the span is a no-op and nothing is added to the request.

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use opentelemetry::KeyValue;
use opentelemetry::trace::{Span as _, SpanKind};
use shoal_domain::trace_context::TraceContext;
use shoal_trace_export::span::{self, Parent};

/// The instrumentation scope of the API's spans.
pub(crate) const SCOPE: &str = "shoal-api";

/// The request span's context, for what the request calls next.
#[derive(Debug, Clone)]
pub struct RequestTrace(pub TraceContext);

pub async fn trace(mut request: Request, next: Next) -> Response {
    let headers = request.headers();
    let caller = TraceContext::extract(|name| headers.get(name).and_then(|v| v.to_str().ok()));
    let own = match &caller {
        Some(caller) => caller.child(rand::random()),
        None => TraceContext::root(rand::random(), rand::random()),
    };
    let method = request.method().as_str().to_owned();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |p| p.as_str())
        .to_owned();
    let parent = caller.as_ref().map_or(Parent::None, Parent::Remote);
    let mut span = span::start(
        SCOPE,
        format!("{method} {route}"),
        SpanKind::Server,
        &own,
        parent,
    );
    if !span.is_recording() {
        return next.run(request).await;
    }
    span.set_attributes([
        KeyValue::new("http.request.method", method),
        KeyValue::new("http.route", route),
    ]);
    request.extensions_mut().insert(RequestTrace(own));
    // Current for the handler's future, so its store operations are spans under it.
    let (response, span) = span::within(span, next.run(request)).await;
    let status = response.status();
    span.set([KeyValue::new(
        "http.response.status_code",
        i64::from(status.as_u16()),
    )]);
    // OpenTelemetry's HTTP conventions: a server span is an error for 5xx only.
    if status.is_server_error() {
        span.failed(status.as_str().to_owned());
    }
    span.end();
    response
}
