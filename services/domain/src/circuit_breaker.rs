//! A function's circuit breaker: the rule of the reliable-event-processing reference document
//! (more than N final failures within T seconds across all instances → stop triggering), its
//! settings (`circuitBreaker` in a function's document, a Shoal extension of `function.json`)
//! and the states it moves between.
//!
//! Azure Functions has no breaker of its own; the document builds one from shared state and a
//! Logic App that stops the app and mails a restart link. Shoal keeps the shared state in
//! Postgres, pauses only the function's listeners (messages stay in their queue), half-opens
//! after a cooldown with one probe, and posts each transition to an operator webhook.

use serde::Serialize;
use serde_json::Value;
use url::Url;
use utoipa::ToSchema;

use crate::host_config::section::Section;
use crate::timespan::TimeSpan;
use crate::validation::{Problems, ValidationError};

/// The reference document's example rule: more than 100 final failures in 30 seconds.
pub const DEFAULT_FAILURE_THRESHOLD: u32 = 100;
pub const DEFAULT_WINDOW: TimeSpan = TimeSpan::from_secs(30);
/// How long an opened breaker waits before one instance probes with a single message.
pub const DEFAULT_COOLDOWN: TimeSpan = TimeSpan::from_secs(60);

const MAX_FAILURE_THRESHOLD: u32 = 1_000_000;
const MIN_WINDOW: TimeSpan = TimeSpan::from_secs(1);
const MAX_WINDOW: TimeSpan = TimeSpan::from_secs(3600);
const MIN_COOLDOWN: TimeSpan = TimeSpan::from_secs(1);
const MAX_COOLDOWN: TimeSpan = TimeSpan::from_secs(7 * 24 * 3600);

/// `circuitBreaker` of a function, every default filled in.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CircuitBreaker {
    /// Whether final failures are counted and open the breaker. Default true; a function can
    /// still be paused by hand when false.
    pub enabled: bool,
    /// The breaker opens when *more than* this many final failures (after the retry policy)
    /// happen within `window`, counted across every instance. Default 100.
    pub failure_threshold: u32,
    /// The counting window, a `hh:mm:ss` duration between 1 s and 1 h. Default `00:00:30`.
    /// Also how long the handler may keep answering 429 or 503 before the function pauses.
    #[schema(value_type = String, example = "00:00:30")]
    pub window: TimeSpan,
    /// Whether an opened breaker half-opens by itself after `cooldown` (opened by failures, a
    /// failed probe or a persistent throttle; one opened because the handler is unreachable
    /// closes when a probe of the handler is answered instead): one instance receives
    /// one message; its success closes the breaker, its failure opens it again. When false it
    /// stays open until resumed through the API. Default true. A breaker paused by hand never
    /// half-opens by itself.
    pub half_open: bool,
    /// How long an opened breaker waits before half-opening (1 s to 7 days). Default `00:01:00`.
    #[schema(value_type = String, example = "00:01:00")]
    pub cooldown: TimeSpan,
    /// Where each transition is posted, signed with the app's webhook signing secret by the
    /// Standard Webhooks scheme (as handler calls are). Absolute `http` or `https` URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, example = "https://ops.example/hooks/shoal")]
    pub notify_url: Option<Url>,
}

impl Default for CircuitBreaker {
    fn default() -> Self {
        CircuitBreaker {
            enabled: true,
            failure_threshold: DEFAULT_FAILURE_THRESHOLD,
            window: DEFAULT_WINDOW,
            half_open: true,
            cooldown: DEFAULT_COOLDOWN,
            notify_url: None,
        }
    }
}

impl CircuitBreaker {
    /// Parses a `circuitBreaker` object; absent or `null` fields take their defaults. Every
    /// problem is reported with its path under `prefix`.
    pub fn parse(value: &Value, prefix: &str) -> Result<CircuitBreaker, ValidationError> {
        let mut problems = Problems::new();
        if value.is_null() {
            problems.push(prefix, "expected an object");
        }
        let s = Section::open(
            &mut problems,
            Some(value),
            prefix.to_owned(),
            &[
                "enabled",
                "failureThreshold",
                "window",
                "halfOpen",
                "cooldown",
                "notifyUrl",
            ],
        );
        let defaults = CircuitBreaker::default();
        let enabled = s.boolean(&mut problems, "enabled", defaults.enabled);
        let failure_threshold = s
            .opt_u32(&mut problems, "failureThreshold", 1, MAX_FAILURE_THRESHOLD)
            .unwrap_or(defaults.failure_threshold);
        let window = s.duration(
            &mut problems,
            "window",
            defaults.window,
            MIN_WINDOW,
            Some(MAX_WINDOW),
        );
        let half_open = s.boolean(&mut problems, "halfOpen", defaults.half_open);
        let cooldown = s.duration(
            &mut problems,
            "cooldown",
            defaults.cooldown,
            MIN_COOLDOWN,
            Some(MAX_COOLDOWN),
        );
        let notify_url = s
            .opt_string(&mut problems, "notifyUrl")
            .and_then(|raw| match Url::parse(raw) {
                Ok(url) if matches!(url.scheme(), "http" | "https") && url.has_host() => Some(url),
                Ok(_) => {
                    problems.push(s.path("notifyUrl"), "must be an absolute http or https URL");
                    None
                }
                Err(e) => {
                    problems.push(s.path("notifyUrl"), format!("is not a URL: {e}"));
                    None
                }
            });
        problems.finish()?;
        Ok(CircuitBreaker {
            enabled,
            failure_threshold,
            window,
            half_open,
            cooldown,
            notify_url,
        })
    }

    /// Whether `failures` final failures within the window open the breaker.
    pub fn trips(&self, failures: u64) -> bool {
        self.enabled && failures > u64::from(self.failure_threshold)
    }
}

/// Where a function's breaker stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum BreakerState {
    /// Listeners receive; final failures are counted.
    Closed,
    /// Listeners receive nothing; messages stay in their queue.
    Open,
    /// One instance receives one message to probe whether the handler recovered.
    HalfOpen,
}

impl BreakerState {
    pub const ALL: [BreakerState; 3] = [
        BreakerState::Closed,
        BreakerState::Open,
        BreakerState::HalfOpen,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            BreakerState::Closed => "closed",
            BreakerState::Open => "open",
            BreakerState::HalfOpen => "halfOpen",
        }
    }

    pub fn parse(s: &str) -> Option<BreakerState> {
        Self::ALL.into_iter().find(|state| state.as_str() == s)
    }
}

/// Why a breaker moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum BreakerCause {
    /// More final failures within the window than the threshold.
    Failures,
    /// Paused through the API.
    Paused,
    /// Resumed through the API.
    Resumed,
    /// The cooldown passed; one instance probes.
    Cooldown,
    /// The probe succeeded.
    ProbeSucceeded,
    /// The probe failed.
    ProbeFailed,
    /// A run of connection failures: the app's handler takes no connections. Every function
    /// of the app opens at once; messages in hand are held, not failed.
    HandlerUnreachable,
    /// A probe of the handler was answered: every function it opened closes.
    HandlerReachable,
    /// The handler kept answering 429 or 503 for longer than the breaker's `window`.
    Throttled,
}

impl BreakerCause {
    pub const ALL: [BreakerCause; 9] = [
        BreakerCause::Failures,
        BreakerCause::Paused,
        BreakerCause::Resumed,
        BreakerCause::Cooldown,
        BreakerCause::ProbeSucceeded,
        BreakerCause::ProbeFailed,
        BreakerCause::HandlerUnreachable,
        BreakerCause::HandlerReachable,
        BreakerCause::Throttled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            BreakerCause::Failures => "failures",
            BreakerCause::Paused => "paused",
            BreakerCause::Resumed => "resumed",
            BreakerCause::Cooldown => "cooldown",
            BreakerCause::ProbeSucceeded => "probeSucceeded",
            BreakerCause::ProbeFailed => "probeFailed",
            BreakerCause::HandlerUnreachable => "handlerUnreachable",
            BreakerCause::HandlerReachable => "handlerReachable",
            BreakerCause::Throttled => "throttled",
        }
    }

    pub fn parse(s: &str) -> Option<BreakerCause> {
        Self::ALL.into_iter().find(|cause| cause.as_str() == s)
    }

    /// The state a transition for this cause leads to.
    pub fn leads_to(self) -> BreakerState {
        match self {
            BreakerCause::Failures
            | BreakerCause::Paused
            | BreakerCause::ProbeFailed
            | BreakerCause::HandlerUnreachable
            | BreakerCause::Throttled => BreakerState::Open,
            BreakerCause::Cooldown => BreakerState::HalfOpen,
            BreakerCause::Resumed
            | BreakerCause::ProbeSucceeded
            | BreakerCause::HandlerReachable => BreakerState::Closed,
        }
    }

    /// The Standard Webhooks event type posted to the operator webhook.
    pub fn event_type(self) -> &'static str {
        match self.leads_to() {
            BreakerState::Open => "shoal.function.breaker.opened",
            BreakerState::HalfOpen => "shoal.function.breaker.halfOpened",
            BreakerState::Closed => "shoal.function.breaker.closed",
        }
    }
}

/// One transition as the operator webhook receives it (a Standard Webhooks event: `type`,
/// `timestamp`, `data`). `data.resume` names the request that closes the breaker again: the
/// reference document's "notification with a way to restart".
pub struct TransitionEvent<'a> {
    pub tenant: &'a str,
    pub app: &'a str,
    pub function: &'a str,
    /// The transition's id in the breaker's history; the event's `webhook-id` is built from it.
    pub id: i64,
    pub at: chrono::DateTime<chrono::Utc>,
    pub from: BreakerState,
    pub to: BreakerState,
    pub cause: BreakerCause,
    pub actor: &'a str,
    /// `[{at, reason}]`, the failures that opened it (empty for other moves).
    pub failures: Value,
}

impl TransitionEvent<'_> {
    /// The `webhook-id`: stable across the deliveries of one transition.
    pub fn webhook_id(&self) -> String {
        format!("breaker_transition_{}", self.id)
    }

    pub fn body(&self) -> Value {
        let function = format!(
            "/v1/tenants/{}/apps/{}/functions/{}",
            self.tenant, self.app, self.function
        );
        serde_json::json!({
            "type": self.cause.event_type(),
            "timestamp": self.at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "data": {
                "tenant": self.tenant,
                "app": self.app,
                "function": self.function,
                "from": self.from,
                "to": self.to,
                "cause": self.cause,
                "actor": self.actor,
                "failures": self.failures,
                "breaker": format!("{function}/breaker"),
                "resume": format!("POST {function}/resume"),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_are_the_reference_documents_rule() {
        let b = CircuitBreaker::parse(&json!({}), "circuitBreaker").unwrap();
        assert_eq!(b, CircuitBreaker::default());
        assert!(!b.trips(100), "100 is not more than 100");
        assert!(b.trips(101));
    }

    #[test]
    fn every_field_is_read() {
        let b = CircuitBreaker::parse(
            &json!({"enabled": false, "failureThreshold": 5, "window": "00:00:10",
                "halfOpen": false, "cooldown": "00:05:00", "notifyUrl": "https://ops.example/hook"}),
            "circuitBreaker",
        )
        .unwrap();
        assert!(!b.enabled);
        assert_eq!(b.failure_threshold, 5);
        assert_eq!(b.window, TimeSpan::from_secs(10));
        assert!(!b.half_open);
        assert_eq!(b.cooldown, TimeSpan::from_secs(300));
        assert_eq!(
            b.notify_url.as_ref().unwrap().as_str(),
            "https://ops.example/hook"
        );
        assert!(!b.trips(1_000), "a disabled breaker never trips");
    }

    #[test]
    fn bad_values_name_their_fields() {
        let cases = [
            (
                json!({"failureThreshold": 0}),
                "circuitBreaker.failureThreshold",
            ),
            (
                json!({"failureThreshold": "many"}),
                "circuitBreaker.failureThreshold",
            ),
            (json!({"window": "00:00:00"}), "circuitBreaker.window"),
            (json!({"window": "02:00:00"}), "circuitBreaker.window"),
            (json!({"window": 30}), "circuitBreaker.window"),
            (json!({"cooldown": "00:00:00"}), "circuitBreaker.cooldown"),
            (json!({"halfOpen": "yes"}), "circuitBreaker.halfOpen"),
            (json!({"enabled": 1}), "circuitBreaker.enabled"),
            (
                json!({"notifyUrl": "ftp://x/y"}),
                "circuitBreaker.notifyUrl",
            ),
            (
                json!({"notifyUrl": "/relative"}),
                "circuitBreaker.notifyUrl",
            ),
            (json!({"threshold": 3}), "circuitBreaker.threshold"),
            (json!([]), "circuitBreaker"),
            (Value::Null, "circuitBreaker"),
        ];
        for (value, path) in cases {
            let err = CircuitBreaker::parse(&value, "circuitBreaker")
                .expect_err(&format!("{value} must be refused"));
            assert!(
                err.errors.iter().any(|e| e.path == path),
                "{value}: expected a problem at {path}, got {:?}",
                err.errors
            );
        }
    }

    #[test]
    fn an_event_names_the_transition_and_the_way_back() {
        let event = TransitionEvent {
            tenant: "t",
            app: "a",
            function: "f",
            id: 7,
            at: chrono::DateTime::parse_from_rfc3339("2026-01-02T03:04:05Z")
                .unwrap()
                .into(),
            from: BreakerState::Closed,
            to: BreakerState::Open,
            cause: BreakerCause::Failures,
            actor: "worker-1",
            failures: json!([{"at": "2026-01-02T03:04:05Z", "reason": "boom"}]),
        };
        assert_eq!(event.webhook_id(), "breaker_transition_7");
        let body = event.body();
        assert_eq!(body["type"], "shoal.function.breaker.opened");
        assert_eq!(body["timestamp"], "2026-01-02T03:04:05.000Z");
        assert_eq!(body["data"]["from"], "closed");
        assert_eq!(body["data"]["to"], "open");
        assert_eq!(body["data"]["cause"], "failures");
        assert_eq!(body["data"]["failures"][0]["reason"], "boom");
        assert_eq!(
            body["data"]["resume"],
            "POST /v1/tenants/t/apps/a/functions/f/resume"
        );
    }

    #[test]
    fn states_and_causes_round_trip_their_names() {
        for state in BreakerState::ALL {
            assert_eq!(BreakerState::parse(state.as_str()), Some(state));
            assert_eq!(serde_json::to_value(state).unwrap(), json!(state.as_str()));
        }
        for cause in BreakerCause::ALL {
            assert_eq!(BreakerCause::parse(cause.as_str()), Some(cause));
            assert_eq!(serde_json::to_value(cause).unwrap(), json!(cause.as_str()));
        }
        assert_eq!(BreakerCause::Cooldown.leads_to(), BreakerState::HalfOpen);
        assert_eq!(
            BreakerCause::ProbeFailed.event_type(),
            "shoal.function.breaker.opened"
        );
    }
}
