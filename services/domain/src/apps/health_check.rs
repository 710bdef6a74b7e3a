//! `handler.health`: the endpoint a tenant's handler answers to say whether it can take work.
//!
//! The shape is the one users know from Dapr's app health checks (`appHealthCheckPath`,
//! `appHealthProbeInterval`, `appHealthProbeTimeout`, `appHealthThreshold`) and Kubernetes'
//! HTTP probes (`path`, `periodSeconds`, `timeoutSeconds`, `failureThreshold`,
//! `successThreshold`). As in Kubernetes, an answer from 200 to 399 passes; anything else, a
//! refused connection or no answer within the timeout fails. Defaults are Dapr's, except the
//! timeout (Dapr's is 500 ms; whole seconds here, as Kubernetes has them).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::validation::{Problems, from_json};

pub const DEFAULT_INTERVAL_SECONDS: u32 = 5;
pub const MAX_INTERVAL_SECONDS: u32 = 300;
pub const DEFAULT_TIMEOUT_SECONDS: u32 = 1;
pub const MAX_TIMEOUT_SECONDS: u32 = 60;
pub const DEFAULT_FAILURE_THRESHOLD: u32 = 3;
pub const DEFAULT_SUCCESS_THRESHOLD: u32 = 1;
pub const MAX_THRESHOLD: u32 = 100;
const MAX_PATH_LEN: usize = 1024;

/// How Shoal checks that the app's handler can take work.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HealthCheck {
    /// Path on the handler's host (starting with `/`, a query allowed), called with GET.
    #[schema(example = "/healthz")]
    pub path: String,
    /// Seconds between checks (1–300, default 5).
    pub interval_seconds: u32,
    /// Seconds to wait for an answer (1–60, default 1; at most the interval).
    pub timeout_seconds: u32,
    /// Failed checks in a row that make the handler unhealthy (1–100, default 3).
    pub failure_threshold: u32,
    /// Passed checks in a row that make an unhealthy handler healthy again (1–100, default 1).
    pub success_threshold: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Body {
    path: String,
    interval_seconds: Option<u32>,
    timeout_seconds: Option<u32>,
    failure_threshold: Option<u32>,
    success_threshold: Option<u32>,
}

impl HealthCheck {
    /// Parses `value` at `path` (`handler.health`), reporting every problem.
    pub fn parse(value: &Value, at: &str, problems: &mut Problems) -> Option<HealthCheck> {
        let body: Body = match from_json(value.clone(), at) {
            Ok(body) => body,
            Err(e) => {
                problems.absorb(e);
                return None;
            }
        };
        let field = |name: &str| format!("{at}.{name}");
        if let Err(why) = check_path(&body.path) {
            problems.push(field("path"), why);
        }
        let mut ranged = |name: &str, value: Option<u32>, default: u32, max: u32| {
            let value = value.unwrap_or(default);
            if !(1..=max).contains(&value) {
                problems.push(field(name), format!("must be between 1 and {max}"));
            }
            value
        };
        let check = HealthCheck {
            interval_seconds: ranged(
                "intervalSeconds",
                body.interval_seconds,
                DEFAULT_INTERVAL_SECONDS,
                MAX_INTERVAL_SECONDS,
            ),
            timeout_seconds: ranged(
                "timeoutSeconds",
                body.timeout_seconds,
                DEFAULT_TIMEOUT_SECONDS,
                MAX_TIMEOUT_SECONDS,
            ),
            failure_threshold: ranged(
                "failureThreshold",
                body.failure_threshold,
                DEFAULT_FAILURE_THRESHOLD,
                MAX_THRESHOLD,
            ),
            success_threshold: ranged(
                "successThreshold",
                body.success_threshold,
                DEFAULT_SUCCESS_THRESHOLD,
                MAX_THRESHOLD,
            ),
            path: body.path,
        };
        // A check still waiting when the next is due would overlap it.
        if check.timeout_seconds > check.interval_seconds {
            problems.push(
                field("timeoutSeconds"),
                "must not be longer than intervalSeconds",
            );
        }
        Some(check)
    }

    /// The URL to call: the path on the handler's scheme, host and port.
    pub fn url(&self, handler: &url::Url) -> Result<url::Url, url::ParseError> {
        handler.join(&self.path)
    }
}

fn check_path(path: &str) -> Result<(), &'static str> {
    if !path.starts_with('/') {
        return Err("must start with /");
    }
    // `//host/x` would be resolved as another host, not a path.
    if path.starts_with("//") {
        return Err("must not start with //");
    }
    if path.len() > MAX_PATH_LEN {
        return Err("must be at most 1024 characters");
    }
    if path.contains('#') {
        return Err("must not hold a fragment (#)");
    }
    if path
        .chars()
        .any(|c| c.is_control() || c == ' ' || c == '\\')
    {
        return Err("must not hold spaces, backslashes or control characters");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(value: Value) -> Result<HealthCheck, Vec<(String, String)>> {
        let mut problems = Problems::default();
        let check = HealthCheck::parse(&value, "handler.health", &mut problems);
        match problems.finish() {
            Ok(()) => Ok(check.expect("no problems, a check")),
            Err(e) => Err(e.errors.into_iter().map(|e| (e.path, e.message)).collect()),
        }
    }

    #[test]
    fn a_path_alone_gets_dapr_defaults() {
        let check = parse(json!({"path": "/healthz"})).unwrap();
        assert_eq!(
            check,
            HealthCheck {
                path: "/healthz".into(),
                interval_seconds: 5,
                timeout_seconds: 1,
                failure_threshold: 3,
                success_threshold: 1,
            }
        );
    }

    #[test]
    fn bad_fields_are_named_by_path() {
        let cases: &[(Value, &str)] = &[
            (json!({}), "handler.health.path"),
            (json!({"path": "healthz"}), "handler.health.path"),
            (json!({"path": "//evil.example/x"}), "handler.health.path"),
            (json!({"path": "/a b"}), "handler.health.path"),
            (json!({"path": "/a#b"}), "handler.health.path"),
            (
                json!({"path": format!("/{}", "a".repeat(1024))}),
                "handler.health.path",
            ),
            (
                json!({"path": "/h", "intervalSeconds": 0}),
                "handler.health.intervalSeconds",
            ),
            (
                json!({"path": "/h", "intervalSeconds": 301}),
                "handler.health.intervalSeconds",
            ),
            (
                json!({"path": "/h", "timeoutSeconds": 61, "intervalSeconds": 300}),
                "handler.health.timeoutSeconds",
            ),
            (
                json!({"path": "/h", "timeoutSeconds": 6}),
                "handler.health.timeoutSeconds",
            ),
            (
                json!({"path": "/h", "failureThreshold": 0}),
                "handler.health.failureThreshold",
            ),
            (
                json!({"path": "/h", "successThreshold": 101}),
                "handler.health.successThreshold",
            ),
            (
                json!({"path": "/h", "periodSeconds": 5}),
                "handler.health.periodSeconds",
            ),
            (
                json!({"path": "/h", "intervalSeconds": "5"}),
                "handler.health.intervalSeconds",
            ),
        ];
        for (body, path) in cases {
            let errors = parse(body.clone()).expect_err(&body.to_string());
            assert!(
                errors.iter().any(|(p, _)| p == path),
                "{body}: {errors:?} should name {path}"
            );
        }
    }

    #[test]
    fn the_url_is_the_path_on_the_handlers_host() {
        let check = parse(json!({"path": "/healthz?deep=1"})).unwrap();
        let handler = url::Url::parse("https://h.example:8443/api/").unwrap();
        assert_eq!(
            check.url(&handler).unwrap().as_str(),
            "https://h.example:8443/healthz?deep=1"
        );
    }
}
