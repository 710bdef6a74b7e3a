//! The ingress's calls in the invocation log and the monitor's counts, as the workers record
//! their deliveries: through the same recorder ([`shoal_store::invocation_recorder`]), flushed
//! once a second by each API process, so the dashboard's explorer lists an HTTP-triggered
//! function's invocations (successes too) with their attempts, `Logs` and trace ids, and its
//! monitor counts them, whichever API process served them.
//!
//! What is kept of a request is the domain's preview of `Data.<trigger>` (method, URL, query,
//! body; never its headers, which carry the caller's credentials:
//! `shoal_domain::invocation_log::preview`); a forwarded request keeps none, since nothing
//! reads its body. An invocation is its id: a queued (`mode=async`) invocation keeps its id
//! over its attempts, which are grouped under it with their RetryCount.
//!
//! Off (`--invocation-telemetry off`) nothing is gathered or written, as for workers.

use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Utc};
use shoal_domain::invocation_log::{Preview, RequestFacts};
use shoal_domain::trace_context::TraceContext;
use shoal_store::invocation_log::TraceIds;
use shoal_store::invocation_recorder::{Delivery, Flusher, InvocationTelemetry, Target};
use uuid::Uuid;

use super::catalog::{HttpApp, HttpFunction};

/// Whether, and under which name, the ingress records its calls.
#[derive(Clone, Default)]
pub struct Recording(Option<Recorder>);

#[derive(Clone)]
struct Recorder {
    telemetry: Arc<InvocationTelemetry>,
    /// What the rows' `worker` column says of this process.
    name: String,
}

impl Recording {
    /// Calls are recorded as `name`'s (an API process's name; what the explorer shows in an
    /// attempt's worker column).
    pub fn on(name: String) -> Recording {
        Recording(Some(Recorder {
            telemetry: Arc::default(),
            name,
        }))
    }

    /// Whether calls are recorded: what a request's preview is worth computing for.
    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }

    /// Starts the once-a-second flush; none when off.
    pub fn start(&self, pool: sqlx::PgPool) -> Option<Flusher> {
        let recorder = self.0.as_ref()?;
        Some(Flusher::start(
            pool,
            recorder.name.clone(),
            recorder.telemetry.clone(),
        ))
    }

    /// Adds one handler call, with the handler's `Logs` and, when it failed, why.
    pub fn record(&self, call: Attempt<'_>, outcome: Outcome<'_>) {
        let Some(recorder) = &self.0 else { return };
        recorder
            .telemetry
            .handler_logs(call.invocation_id, outcome.logs);
        recorder.telemetry.record(
            Target {
                tenant: call.app.tenant.as_str(),
                app: &call.app.name,
                function: &call.function.name,
            },
            call.invocation_id,
            Delivery {
                key: call.invocation_id.to_string(),
                retry_count: call.retry_count,
                facts: RequestFacts {
                    message_id: None,
                    delivery_count: None,
                    payload: call.preview,
                },
                trace: call.trace.map(|trace| TraceIds {
                    trace_id: trace.trace_id(),
                    span_id: trace.span_id(),
                }),
            },
            call.started,
            call.since.elapsed(),
            outcome.failure,
        );
    }
}

/// One call of a function's handler, as the invocation log keeps it.
pub struct Attempt<'a> {
    pub app: &'a HttpApp,
    pub function: &'a HttpFunction,
    pub invocation_id: Uuid,
    /// Attempts of the same invocation before this one.
    pub retry_count: u32,
    /// The request's data as the domain previews it.
    pub preview: Option<Preview>,
    /// The trace context the handler was sent.
    pub trace: Option<&'a TraceContext>,
    pub started: DateTime<Utc>,
    /// When it began on the clock that times it.
    pub since: Instant,
}

/// How a call ended.
pub struct Outcome<'a> {
    pub logs: &'a [String],
    /// Why it failed, as stored and shown (no connection detail, never a secret).
    pub failure: Option<&'a str>,
}
