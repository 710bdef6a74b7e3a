//! An app's limits on its webhook ingress (`webhooks` in the app resource): how large a
//! request body may be and how many requests per second it takes, with a burst.
//!
//! Azure Functions caps HTTP request bodies at 100 MB and leaves rate limiting to API
//! Management; Shoal's ingress is shared by every tenant, so each app gets a token bucket with
//! a modest default, and a body limit below Azure's ceiling that an app may raise to it.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::validation::{Problems, ValidationError, join_path, object_from_json};

/// 4 MiB: JSON webhooks are far smaller; a larger upload is better sent by reference.
pub const DEFAULT_MAX_REQUEST_BODY_BYTES: u64 = 4 * 1024 * 1024;
/// Azure Functions' own ceiling for an HTTP request body (100 MB).
pub const MAX_MAX_REQUEST_BODY_BYTES: u64 = 104_857_600;
pub const DEFAULT_REQUESTS_PER_SECOND: u32 = 100;
pub const MAX_REQUESTS_PER_SECOND: u32 = 100_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookLimits {
    /// Largest request body accepted, in bytes (1–104857600, default 4194304); larger ones
    /// answer 413.
    #[schema(minimum = 1, maximum = 104857600)]
    pub max_request_body_bytes: u64,
    /// Sustained requests per second through the ingress (1–100000, default 100); more answer
    /// 429 with `Retry-After`.
    #[schema(minimum = 1, maximum = 100000)]
    pub requests_per_second: u32,
    /// Requests accepted at once above the sustained rate (at least 1, default twice
    /// `requestsPerSecond`).
    #[schema(minimum = 1)]
    pub burst: u32,
}

impl Default for WebhookLimits {
    fn default() -> Self {
        WebhookLimits {
            max_request_body_bytes: DEFAULT_MAX_REQUEST_BODY_BYTES,
            requests_per_second: DEFAULT_REQUESTS_PER_SECOND,
            burst: 2 * DEFAULT_REQUESTS_PER_SECOND,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct WebhooksBody {
    max_request_body_bytes: Option<u64>,
    requests_per_second: Option<u32>,
    burst: Option<u32>,
}

impl WebhookLimits {
    /// Reads the `webhooks` object at `prefix`, every out-of-range field reported with its
    /// path; absent or null means the defaults.
    pub fn parse(value: Option<&Value>, prefix: &str) -> Result<WebhookLimits, ValidationError> {
        let body: WebhooksBody = match value {
            None | Some(Value::Null) => return Ok(WebhookLimits::default()),
            Some(value) => object_from_json(value.clone(), prefix)?,
        };
        let mut problems = Problems::new();
        let max_request_body_bytes = body
            .max_request_body_bytes
            .unwrap_or(DEFAULT_MAX_REQUEST_BODY_BYTES);
        if !(1..=MAX_MAX_REQUEST_BODY_BYTES).contains(&max_request_body_bytes) {
            problems.push(
                join_path(prefix, "maxRequestBodyBytes"),
                format!("must be between 1 and {MAX_MAX_REQUEST_BODY_BYTES}"),
            );
        }
        let requests_per_second = body
            .requests_per_second
            .unwrap_or(DEFAULT_REQUESTS_PER_SECOND);
        if !(1..=MAX_REQUESTS_PER_SECOND).contains(&requests_per_second) {
            problems.push(
                join_path(prefix, "requestsPerSecond"),
                format!("must be between 1 and {MAX_REQUESTS_PER_SECOND}"),
            );
        }
        let burst = body
            .burst
            .unwrap_or_else(|| requests_per_second.saturating_mul(2));
        if burst < 1 {
            problems.push(join_path(prefix, "burst"), "must be at least 1");
        }
        problems.finish()?;
        Ok(WebhookLimits {
            max_request_body_bytes,
            requests_per_second,
            burst,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn paths(err: &ValidationError) -> Vec<&str> {
        err.errors.iter().map(|e| e.path.as_str()).collect()
    }

    #[test]
    fn absent_means_documented_defaults() {
        for value in [None, Some(&Value::Null), Some(&json!({}))] {
            let limits = WebhookLimits::parse(value, "webhooks").unwrap();
            assert_eq!(limits.max_request_body_bytes, 4_194_304);
            assert_eq!(limits.requests_per_second, 100);
            assert_eq!(limits.burst, 200);
        }
    }

    #[test]
    fn burst_defaults_to_twice_the_rate() {
        let limits =
            WebhookLimits::parse(Some(&json!({"requestsPerSecond": 7})), "webhooks").unwrap();
        assert_eq!(limits.burst, 14);
        let limits = WebhookLimits::parse(
            Some(&json!({"requestsPerSecond": 7, "burst": 1, "maxRequestBodyBytes": 104857600})),
            "webhooks",
        )
        .unwrap();
        assert_eq!(
            (limits.burst, limits.max_request_body_bytes),
            (1, 104_857_600)
        );
    }

    #[test]
    fn every_range_problem_is_reported_with_its_path() {
        let err = WebhookLimits::parse(
            Some(&json!({"maxRequestBodyBytes": 104857601, "requestsPerSecond": 0, "burst": 0})),
            "webhooks",
        )
        .unwrap_err();
        assert_eq!(
            paths(&err),
            vec![
                "webhooks.maxRequestBodyBytes",
                "webhooks.requestsPerSecond",
                "webhooks.burst"
            ]
        );
        let err = WebhookLimits::parse(
            Some(&json!({"maxRequestBodyBytes": 0, "requestsPerSecond": 100001})),
            "webhooks",
        )
        .unwrap_err();
        assert_eq!(
            paths(&err),
            vec!["webhooks.maxRequestBodyBytes", "webhooks.requestsPerSecond"]
        );
    }

    #[test]
    fn wrong_shapes_and_unknown_fields_name_their_path() {
        let err = WebhookLimits::parse(Some(&json!({"rps": 1})), "webhooks").unwrap_err();
        assert_eq!(paths(&err), vec!["webhooks.rps"]);
        let err = WebhookLimits::parse(Some(&json!({"burst": "ten"})), "webhooks").unwrap_err();
        assert_eq!(paths(&err), vec!["webhooks.burst"]);
        let err = WebhookLimits::parse(Some(&json!([1])), "webhooks").unwrap_err();
        assert_eq!(paths(&err), vec!["webhooks"]);
    }
}
