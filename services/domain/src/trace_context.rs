//! W3C Trace Context (<https://www.w3.org/TR/trace-context/>): the `traceparent` and
//! `tracestate` a message or request carries, read and written as the recommendation says, so
//! a trace that a producer started continues through Shoal into the handler and out through
//! the output bindings.
//!
//! Where a message carries its context:
//! * an HTTP request, a Kafka record, a RabbitMQ message: `traceparent` and `tracestate`
//!   headers (OpenTelemetry's propagators and `confluent-kafka` instrumentations write these);
//! * a Service Bus message: its application properties. The Azure SDKs write `Diagnostic-Id`
//!   (Service Bus's own name, holding a W3C `traceparent` since the SDKs moved to W3C) and,
//!   the Python SDK with OpenTelemetry, `traceparent` beside it (azure-sdk-for-python,
//!   `azure/servicebus/_common/tracing.py`, `TRACE_PARENT_PROPERTY`/`TRACE_DIAGNOSTIC_ID_PROPERTY`).
//!   `traceparent` is read first, then `Diagnostic-Id`; a legacy hierarchical `Diagnostic-Id`
//!   (`|abc.1.`, from SDKs before W3C) is not a W3C context and starts a new trace;
//! * a Storage queue message has no headers, and no Azure SDK puts a context in its body: a
//!   Storage-queue-triggered invocation starts a new trace.
//!
//! The ids are given by the caller (random in the worker), so everything here is pure.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::Value;

/// The only version this implementation writes.
const VERSION: &str = "00";

/// `tracestate`'s limits: more list members than this and the whole value is discarded (W3C
/// §3.3.1.1); a longer value than this is discarded too, which the recommendation allows
/// (it "MAY" truncate instead).
const MAX_STATE_MEMBERS: usize = 32;
const MAX_STATE_LEN: usize = 512;

/// Bit 0 of `trace-flags`: the caller sampled this trace.
pub const SAMPLED: u8 = 0x01;

/// A position in a trace: the trace, the span that is the parent of whatever comes next, and
/// the flags and vendor state that travel with them.
#[derive(Clone, PartialEq, Eq)]
pub struct TraceContext {
    trace_id: u128,
    span_id: u64,
    flags: u8,
    state: Option<String>,
}

impl TraceContext {
    /// A new trace (nothing came with the message), sampled.
    pub fn root(trace_id: u128, span_id: u64) -> TraceContext {
        TraceContext {
            trace_id: trace_id.max(1),
            span_id: span_id.max(1),
            flags: SAMPLED,
            state: None,
        }
    }

    /// A span under this one: the same trace, flags and state, `span_id` as its own id.
    pub fn child(&self, span_id: u64) -> TraceContext {
        TraceContext {
            span_id: span_id.max(1),
            ..self.clone()
        }
    }

    /// Reads a `traceparent` (and its `tracestate`); None when the `traceparent` is not one
    /// this recommendation lets a receiver use. A `tracestate` that is not well formed is
    /// dropped, the `traceparent` kept.
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<TraceContext> {
        let traceparent = traceparent.trim();
        // Header text is ASCII; anything else is not a context (and would not slice by byte).
        if !traceparent.is_ascii() {
            return None;
        }
        let bytes = traceparent.as_bytes();
        // version "-" trace-id "-" parent-id "-" trace-flags: 2 + 1 + 32 + 1 + 16 + 1 + 2.
        if bytes.len() < 55 {
            return None;
        }
        let version = &traceparent[..2];
        if !is_lower_hex(version) || version == "ff" {
            return None;
        }
        // Version 00 is exactly 55 characters; a later version may add fields after a dash.
        if (version == VERSION && bytes.len() != 55) || (bytes.len() > 55 && bytes[55] != b'-') {
            return None;
        }
        if bytes[2] != b'-' || bytes[35] != b'-' || bytes[52] != b'-' {
            return None;
        }
        let (trace, span, flags) = (
            &traceparent[3..35],
            &traceparent[36..52],
            &traceparent[53..55],
        );
        if !is_lower_hex(trace) || !is_lower_hex(span) || !is_lower_hex(flags) {
            return None;
        }
        let trace_id = u128::from_str_radix(trace, 16).ok().filter(|id| *id != 0)?;
        let span_id = u64::from_str_radix(span, 16).ok().filter(|id| *id != 0)?;
        let flags = u8::from_str_radix(flags, 16).ok()?;
        Some(TraceContext {
            trace_id,
            span_id,
            flags,
            state: tracestate.and_then(well_formed_state),
        })
    }

    /// The context a message carries, by the names it may carry it under (see the module's
    /// doc): `get` looks a header or property up by name.
    pub fn extract<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Option<TraceContext> {
        let state = get("tracestate");
        get("traceparent")
            .and_then(|parent| TraceContext::parse(parent, state))
            .or_else(|| get("Diagnostic-Id").and_then(|parent| TraceContext::parse(parent, state)))
    }

    /// `00-<trace-id>-<span-id>-<flags>`.
    pub fn traceparent(&self) -> String {
        format!(
            "{VERSION}-{:032x}-{:016x}-{:02x}",
            self.trace_id, self.span_id, self.flags
        )
    }

    pub fn tracestate(&self) -> Option<&str> {
        self.state.as_deref()
    }

    /// The trace's id as it is shown and searched for (32 lowercase hex digits).
    pub fn trace_id(&self) -> String {
        format!("{:032x}", self.trace_id)
    }

    /// This span's id (16 lowercase hex digits).
    pub fn span_id(&self) -> String {
        format!("{:016x}", self.span_id)
    }

    /// The trace's and this span's ids as numbers, for an exporter that takes them as such
    /// (formatting them as hex only to parse them back costs a delivery two strings).
    pub fn ids(&self) -> (u128, u64) {
        (self.trace_id, self.span_id)
    }

    /// The same position with the sampled flag set as a sampler decided: a trace Shoal starts
    /// tells the handler whether its spans are kept.
    pub fn with_sampled(&self, sampled: bool) -> TraceContext {
        let flags = if sampled {
            self.flags | SAMPLED
        } else {
            self.flags & !SAMPLED
        };
        TraceContext {
            flags,
            ..self.clone()
        }
    }

    pub fn sampled(&self) -> bool {
        self.flags & SAMPLED != 0
    }

    /// The headers (or properties) that carry this context to the next hop: `traceparent`,
    /// and `tracestate` when there is one.
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        let mut headers = vec![("traceparent", self.traceparent())];
        if let Some(state) = &self.state {
            headers.push(("tracestate", state.clone()));
        }
        headers
    }

    /// What an output message gets so that its consumer continues this trace, unless the
    /// handler gave the message a context of its own (`has` says whether a name is set):
    /// [`TraceContext::headers`], and for Service Bus `Diagnostic-Id` too (`service_bus`),
    /// which the Azure SDKs and the Functions host read.
    pub fn for_output(
        &self,
        service_bus: bool,
        has: impl Fn(&str) -> bool,
    ) -> Vec<(&'static str, String)> {
        if has("traceparent") || (service_bus && has("Diagnostic-Id")) {
            return Vec::new();
        }
        let mut headers = self.headers();
        if service_bus {
            headers.push(("Diagnostic-Id", self.traceparent()));
        }
        headers
    }
}

/// The context the message of a custom-handler request `body` carries, read from where each
/// trigger puts the message's properties in `Metadata`: a Service Bus message's
/// `ApplicationProperties`, a RabbitMQ message's `BasicProperties.Headers`, a Kafka record's
/// `Headers` (`{Key, Value}` with the value in base64), an Event Hubs event's `Properties`;
/// for a batch, the first message's, whose trace the batch's invocation continues. None when
/// the message carries none.
pub fn of_request(body: &Value) -> Option<TraceContext> {
    let metadata = &body["Metadata"];
    let from_object = |object: &Value| {
        let object = object.as_object()?;
        TraceContext::extract(|name| object.get(name).and_then(Value::as_str))
    };
    from_object(&metadata["ApplicationProperties"])
        .or_else(|| from_object(&metadata["BasicProperties"]["Headers"]))
        .or_else(|| kafka_headers(&metadata["Headers"]))
        .or_else(|| kafka_headers(&metadata["HeadersArray"][0]))
        .or_else(|| from_object(&metadata["Properties"]))
        .or_else(|| from_object(&metadata["PropertiesArray"][0]))
}

/// Kafka headers as the stream trigger's payload writes them.
fn kafka_headers(headers: &Value) -> Option<TraceContext> {
    let headers: Vec<(String, String)> = headers
        .as_array()?
        .iter()
        .filter_map(|header| {
            let key = header["Key"].as_str()?;
            let value = BASE64.decode(header["Value"].as_str()?).ok()?;
            Some((key.to_owned(), String::from_utf8(value).ok()?))
        })
        .collect();
    TraceContext::extract(|name| {
        headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    })
}

/// Shown as its `traceparent`: ids are not secrets, and a state may be (it is left out).
impl fmt::Debug for TraceContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.traceparent())
    }
}

/// Whether `text` is a trace id as [`TraceContext::trace_id`] writes it and trace viewers show
/// it: 32 lowercase hex digits, not all zero (W3C's invalid id). What the explorer searches by.
pub fn is_trace_id(text: &str) -> bool {
    text.len() == 32 && is_lower_hex(text) && text.bytes().any(|b| b != b'0')
}

fn is_lower_hex(text: &str) -> bool {
    text.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A `tracestate` kept as received when it is within the limits and every list member is
/// `key=value` of printable ASCII without `,` or `=` in the value; None otherwise.
fn well_formed_state(state: &str) -> Option<String> {
    let state = state.trim();
    if state.is_empty() || state.len() > MAX_STATE_LEN {
        return None;
    }
    let members: Vec<&str> = state
        .split(',')
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .collect();
    if members.is_empty() || members.len() > MAX_STATE_MEMBERS {
        return None;
    }
    let valid = members.iter().all(|member| {
        let Some((key, value)) = member.split_once('=') else {
            return false;
        };
        !key.is_empty()
            && key.len() <= 256
            && key.bytes().all(|b| {
                b.is_ascii_lowercase()
                    || b.is_ascii_digit()
                    || matches!(b, b'_' | b'-' | b'*' | b'/' | b'@')
            })
            && !value.is_empty()
            && value.len() <= 256
            && value
                .bytes()
                .all(|b| (0x20..=0x7e).contains(&b) && b != b',' && b != b'=')
    });
    valid.then(|| members.join(","))
}

#[cfg(test)]
mod tests;
