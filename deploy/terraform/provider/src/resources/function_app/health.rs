//! `handler.health` of `shoal_function_app`: the endpoint Shoal checks to know whether the
//! app's handler can take work (the API's `HealthCheck`; docs/triggers.md, "Telling Shoal to
//! slow down").
//!
//! The block itself is only Optional: an app without one has no health check, so removing the
//! block removes the check, and a check added outside Terraform shows as drift. Its fields but
//! `path` have server defaults and are Optional+Computed, so a plan after apply or import is
//! empty when the configuration writes only the path.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};
use tf_provider::schema::{
    Attribute,
    AttributeConstraint::{Optional, OptionalComputed, Required},
    AttributeType as T,
};
use tf_provider::value::Value;

use crate::resources::{attribute, attributes, json_i64, json_string, put_known, unknown_if_null};

/// The API's name of the object in an app's `handler`.
pub const API_KEY: &str = "health";

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HealthCheck {
    pub path: Value<String>,
    pub interval_seconds: Value<i64>,
    pub timeout_seconds: Value<i64>,
    pub failure_threshold: Value<i64>,
    pub success_threshold: Value<i64>,
}

pub fn schema_attribute() -> Attribute {
    let fields = attributes([
        (
            "path",
            attribute(
                T::String,
                Required,
                "Path on the handler's scheme, host and port, called with GET (starts with `/`; a query is allowed). An answer from 200 to 399 passes.",
            ),
        ),
        (
            "interval_seconds",
            attribute(
                T::Number,
                OptionalComputed,
                "Seconds between checks (1–300; server default 5).",
            ),
        ),
        (
            "timeout_seconds",
            attribute(
                T::Number,
                OptionalComputed,
                "Seconds to wait for an answer (1–60, at most `interval_seconds`; server default 1).",
            ),
        ),
        (
            "failure_threshold",
            attribute(
                T::Number,
                OptionalComputed,
                "Failed checks in a row that make the handler unhealthy (1–100; server default 3).",
            ),
        ),
        (
            "success_threshold",
            attribute(
                T::Number,
                OptionalComputed,
                "Passed checks in a row that make an unhealthy handler healthy again (1–100; server default 1).",
            ),
        ),
    ]);
    attribute(
        T::AttributeSingle(fields),
        Optional,
        "The handler's health endpoint: while its checks fail, no listener of the app receives. Left out, the app has no health check (only refused connections say the handler is down).",
    )
}

/// The planned check of a create or an update: what the configuration sets (Terraform's
/// proposal keeps the prior value of a field the configuration leaves out), the server's
/// defaults for the rest.
pub fn plan(planned: &mut Value<HealthCheck>) {
    if let Value::Value(check) = planned {
        unknown_if_null(&mut check.interval_seconds);
        unknown_if_null(&mut check.timeout_seconds);
        unknown_if_null(&mut check.failure_threshold);
        unknown_if_null(&mut check.success_threshold);
    }
}

/// Adds `health` to a handler's body with the fields the plan knows. No check planned: the
/// key is left out, which the API reads as none.
pub fn put(handler: &mut Map<String, Json>, planned: &Value<HealthCheck>) {
    if let Value::Value(check) = planned {
        let mut h = Map::new();
        put_known(&mut h, "path", &check.path);
        put_known(&mut h, "intervalSeconds", &check.interval_seconds);
        put_known(&mut h, "timeoutSeconds", &check.timeout_seconds);
        put_known(&mut h, "failureThreshold", &check.failure_threshold);
        put_known(&mut h, "successThreshold", &check.success_threshold);
        handler.insert(API_KEY.into(), Json::Object(h));
    }
}

/// The check of a handler as the API reads it (`Null` when it has none).
pub fn from_api(handler: &Json) -> Value<HealthCheck> {
    let Some(read) = handler.get(API_KEY).filter(|h| h.is_object()) else {
        return Value::Null;
    };
    Value::Value(HealthCheck {
        path: json_string(read, "path"),
        interval_seconds: json_i64(read, "intervalSeconds"),
        timeout_seconds: json_i64(read, "timeoutSeconds"),
        failure_threshold: json_i64(read, "failureThreshold"),
        success_threshold: json_i64(read, "successThreshold"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn v<T>(value: T) -> Value<T> {
        Value::Value(value)
    }

    #[test]
    fn a_read_holds_every_field_or_no_check() {
        let read = json!({"url": "http://h", "health": {
            "path": "/healthz", "intervalSeconds": 5, "timeoutSeconds": 1,
            "failureThreshold": 3, "successThreshold": 1
        }});
        assert_eq!(
            from_api(&read),
            v(HealthCheck {
                path: v("/healthz".into()),
                interval_seconds: v(5),
                timeout_seconds: v(1),
                failure_threshold: v(3),
                success_threshold: v(1),
            })
        );
        assert_eq!(from_api(&json!({"url": "http://h"})), Value::Null);
        assert_eq!(from_api(&json!({"health": null})), Value::Null);
    }

    #[test]
    fn a_plan_leaves_the_server_its_defaults_and_the_body_sends_what_it_knows() {
        let mut planned = v(HealthCheck {
            path: v("/healthz".into()),
            interval_seconds: v(10),
            ..HealthCheck::default()
        });
        plan(&mut planned);
        let check = planned.as_ref_option().unwrap();
        assert_eq!(check.interval_seconds, v(10));
        assert_eq!(check.timeout_seconds, Value::Unknown);
        let mut handler = Map::new();
        put(&mut handler, &planned);
        assert_eq!(
            Json::Object(handler),
            json!({"health": {"path": "/healthz", "intervalSeconds": 10}})
        );

        let mut none = Value::Null;
        plan(&mut none);
        assert_eq!(none, Value::Null, "no check stays no check");
        let mut handler = Map::new();
        put(&mut handler, &none);
        assert!(handler.is_empty());
    }
}
