//! What a worker reports about itself in its heartbeats: its state and one line of statistics
//! per listener. Written by workers, stored as is, shown by `GET /v1/workers`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum WorkerState {
    /// Polling and invoking.
    Running,
    /// Shutting down: no new polls, finishing in-flight invocations.
    Draining,
    /// Shut down cleanly; nothing in flight.
    Stopped,
}

impl WorkerState {
    pub fn as_str(self) -> &'static str {
        match self {
            WorkerState::Running => "running",
            WorkerState::Draining => "draining",
            WorkerState::Stopped => "stopped",
        }
    }

    pub fn parse(s: &str) -> Option<WorkerState> {
        match s {
            "running" => Some(WorkerState::Running),
            "draining" => Some(WorkerState::Draining),
            "stopped" => Some(WorkerState::Stopped),
            _ => None,
        }
    }
}

/// One trigger listener's statistics since it started.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListenerReport {
    pub tenant: String,
    pub app: String,
    /// The app instance this listener belongs to (0 until the scheduler places several).
    pub instance: u32,
    pub function: String,
    /// `queueTrigger`, …
    pub trigger: String,
    /// The queue (or entity) listened to.
    pub source: String,
    /// `listening`, or `stopped: <why>` when the listener cannot run (e.g. its connection does
    /// not resolve); the reason never contains secret values.
    pub status: String,
    pub received: u64,
    pub succeeded: u64,
    /// Invocations that failed finally, after the attempts of the function's retry policy.
    pub failed: u64,
    /// Attempts the function's retry policy repeated after a failure (on the same instance,
    /// before the failure counts as final).
    #[serde(default)]
    pub retried: u64,
    /// Calls the handler answered 429 or 503: the message was deferred by its `Retry-After`,
    /// and no attempt counted. Absent in older heartbeats.
    #[serde(default)]
    pub deferred: u64,
    /// Messages parked at their source until a far-off retry is due (its state kept in
    /// Postgres, see `durable_retry`). Absent in older heartbeats.
    #[serde(default)]
    pub parked: u64,
    /// Since when the app's handler takes no connections, as this listener's worker sees it;
    /// absent while it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handler_unreachable_since: Option<DateTime<Utc>>,
    pub poisoned: u64,
    pub in_flight: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_poll: Option<DateTime<Utc>>,
    /// The wait before the next poll, in milliseconds.
    pub current_backoff_ms: u64,
    /// Why the connection's last token request failed (identity-based connections), as the
    /// identity platform answered; absent once a token was obtained.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_token_error: Option<String>,
    /// Successful invocations whose response set `Outputs` names that are no output binding
    /// of the function (ignored, as Azure ignores them). Absent in older heartbeats.
    #[serde(default)]
    pub undeclared_outputs: u64,
    /// The first such names seen (at most 8), so diagnostics can say which values the handler
    /// sets in vain.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub undeclared_output_names: Vec<String>,
    /// The instance's part of the function's `maxConcurrency`; absent without a cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<ConcurrencyReport>,
}

/// An instance's slots of its function's `maxConcurrency` (see [`crate::concurrency`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConcurrencyReport {
    /// The function's cap, across every instance.
    pub max_concurrency: u32,
    /// Slots this instance holds in Postgres.
    pub held: u32,
    /// Calls it may have in flight: its fair share of the cap, or fewer while other instances
    /// still hold their slots; 0 while its lease is not renewed.
    pub limit: u32,
    /// Its handler calls in flight now.
    pub in_use: u32,
}

/// How many undeclared output names a listener remembers: enough to name a handler's mistakes,
/// bounded so a handler that invents names per message cannot grow the heartbeat.
pub const MAX_UNDECLARED_OUTPUT_NAMES: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heartbeats_written_before_undeclared_outputs_were_counted_still_parse() {
        let old = serde_json::json!({
            "tenant": "t", "app": "a", "instance": 0, "function": "f",
            "trigger": "queueTrigger", "source": "q", "status": "listening",
            "received": 1, "succeeded": 1, "failed": 0, "poisoned": 0, "inFlight": 0,
            "currentBackoffMs": 200
        });
        let report: ListenerReport = serde_json::from_value(old).unwrap();
        assert_eq!(report.undeclared_outputs, 0);
        assert!(report.undeclared_output_names.is_empty());
        let round_trip = serde_json::to_value(&report).unwrap();
        assert_eq!(round_trip["undeclaredOutputs"], 0);
        assert!(round_trip.get("undeclaredOutputNames").is_none());
    }
}
