//! `circuit_breaker` of `shoal_function`: the function's `circuitBreaker` (a Shoal extension of
//! `function.json`; docs/triggers.md "Circuit breaker").
//!
//! The API reads it back on every function with each default filled in, so the object and its
//! defaulted fields are Optional+Computed: leaving the block or a field out takes the value the
//! function has (the server's default on create), and a plan after apply or import is empty.
//! `notify_url` has no default and is only Optional, so removing it from the configuration
//! removes the webhook.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};
use tf_provider::schema::{
    Attribute,
    AttributeConstraint::{Optional, OptionalComputed},
    AttributeType as T,
};
use tf_provider::value::Value;

use crate::resources::{
    attribute, attributes, json_bool, json_i64, json_string, put_known, unknown_if_null,
};
use crate::spelling::{keep_timespan, keep_url};

/// The API's name of the object in a function's document.
pub const API_KEY: &str = "circuitBreaker";

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CircuitBreaker {
    pub enabled: Value<bool>,
    pub failure_threshold: Value<i64>,
    pub window: Value<String>,
    pub half_open: Value<bool>,
    pub cooldown: Value<String>,
    pub notify_url: Value<String>,
}

pub fn schema_attribute() -> Attribute {
    let fields = attributes([
        (
            "enabled",
            attribute(
                T::Bool,
                OptionalComputed,
                "Whether final failures are counted and open the breaker (server default `true`). A function can still be paused by hand when `false`.",
            ),
        ),
        (
            "failure_threshold",
            attribute(
                T::Number,
                OptionalComputed,
                "The breaker opens when more than this many final failures (after the retry policy) happen within `window`, across every instance (1–1000000; server default 100).",
            ),
        ),
        (
            "window",
            attribute(
                T::String,
                OptionalComputed,
                "The counting window, a TimeSpan between `00:00:01` and `01:00:00` (server default `00:00:30`).",
            ),
        ),
        (
            "half_open",
            attribute(
                T::Bool,
                OptionalComputed,
                "Whether an opened breaker lets one probe message through after `cooldown` (server default `true`); when `false` it stays open until resumed through the API.",
            ),
        ),
        (
            "cooldown",
            attribute(
                T::String,
                OptionalComputed,
                "How long an opened breaker waits before half-opening, a TimeSpan between `00:00:01` and `7.00:00:00` (server default `00:01:00`).",
            ),
        ),
        (
            "notify_url",
            attribute(
                T::String,
                Optional,
                "Absolute http(s) URL each transition is posted to, signed with the app's webhook signing secret. No default: leave it out for no webhook.",
            ),
        ),
    ]);
    attribute(
        T::AttributeSingle(fields),
        OptionalComputed,
        "The function's circuit breaker. Left out, the function keeps the settings it has (the server's defaults on create).",
    )
}

/// The planned breaker of a new function: what the configuration sets, the server's defaults
/// for the rest (unknown until the API answers).
pub fn plan_create(planned: &mut Value<CircuitBreaker>) {
    match planned {
        Value::Value(breaker) => unknown_computed(breaker),
        other => *other = Value::Unknown,
    }
}

/// The planned breaker of an update, from Terraform's proposal (the configuration over the
/// prior state).
pub fn plan_update(prior: &Value<CircuitBreaker>, planned: &mut Value<CircuitBreaker>) {
    match planned {
        Value::Value(breaker) => {
            if let Value::Value(prior) = prior {
                // The same duration or URL spelled differently is no change.
                breaker.window = keep_timespan(&prior.window, breaker.window.clone());
                breaker.cooldown = keep_timespan(&prior.cooldown, breaker.cooldown.clone());
                breaker.notify_url = keep_url(&prior.notify_url, breaker.notify_url.clone());
            }
            unknown_computed(breaker);
        }
        // Terraform proposes no object when the block was removed while the prior one held a
        // `notify_url` (a value only a configuration sets). The defaulted fields keep their
        // values, as they do when the block is removed otherwise; the webhook goes.
        Value::Null => match prior {
            Value::Value(prior) => {
                *planned = Value::Value(CircuitBreaker {
                    notify_url: Value::Null,
                    ..prior.clone()
                });
            }
            _ => *planned = Value::Unknown,
        },
        Value::Unknown => {}
    }
}

fn unknown_computed(breaker: &mut CircuitBreaker) {
    unknown_if_null(&mut breaker.enabled);
    unknown_if_null(&mut breaker.failure_threshold);
    unknown_if_null(&mut breaker.window);
    unknown_if_null(&mut breaker.half_open);
    unknown_if_null(&mut breaker.cooldown);
}

/// Adds `circuitBreaker` to a function's body with the fields the plan knows; an unknown
/// object is left out, which the API reads as every default.
pub fn put(function: &mut Map<String, Json>, planned: &Value<CircuitBreaker>) {
    if let Value::Value(breaker) = planned {
        let mut b = Map::new();
        put_known(&mut b, "enabled", &breaker.enabled);
        put_known(&mut b, "failureThreshold", &breaker.failure_threshold);
        put_known(&mut b, "window", &breaker.window);
        put_known(&mut b, "halfOpen", &breaker.half_open);
        put_known(&mut b, "cooldown", &breaker.cooldown);
        put_known(&mut b, "notifyUrl", &breaker.notify_url);
        function.insert(API_KEY.into(), Json::Object(b));
    }
}

/// The breaker of a function as the API reads it, spelled as `prior` spells the same values.
pub fn from_api(function: &Json, prior: &Value<CircuitBreaker>) -> Value<CircuitBreaker> {
    let Some(read) = function.get(API_KEY).filter(|b| b.is_object()) else {
        return Value::Null;
    };
    let mine = match prior {
        Value::Value(prior) => prior.clone(),
        _ => CircuitBreaker::default(),
    };
    Value::Value(CircuitBreaker {
        enabled: json_bool(read, "enabled"),
        failure_threshold: json_i64(read, "failureThreshold"),
        window: keep_timespan(&mine.window, json_string(read, "window")),
        half_open: json_bool(read, "halfOpen"),
        cooldown: keep_timespan(&mine.cooldown, json_string(read, "cooldown")),
        notify_url: keep_url(&mine.notify_url, json_string(read, "notifyUrl")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn v<T>(value: T) -> Value<T> {
        Value::Value(value)
    }

    fn defaults() -> CircuitBreaker {
        CircuitBreaker {
            enabled: v(true),
            failure_threshold: v(100),
            window: v("00:00:30".into()),
            half_open: v(true),
            cooldown: v("00:01:00".into()),
            notify_url: Value::Null,
        }
    }

    #[test]
    fn a_read_fills_every_default_and_keeps_the_users_spelling() {
        let read = json!({"circuitBreaker": {
            "enabled": true, "failureThreshold": 5, "window": "00:01:00", "halfOpen": false,
            "cooldown": "1.00:00:00", "notifyUrl": "https://ops.example/"
        }});
        let prior = v(CircuitBreaker {
            window: v("00:01".into()),
            notify_url: v("https://ops.example".into()),
            ..CircuitBreaker::default()
        });
        let breaker = from_api(&read, &prior).unwrap();
        assert_eq!(breaker.failure_threshold, v(5));
        assert_eq!(breaker.half_open, v(false));
        assert_eq!(breaker.window, v("00:01".into()), "the user's spelling");
        assert_eq!(breaker.cooldown, v("1.00:00:00".into()), "the server's");
        assert_eq!(breaker.notify_url, v("https://ops.example".into()));
        let without = json!({"circuitBreaker": {
            "enabled": true, "failureThreshold": 100, "window": "00:00:30", "halfOpen": true,
            "cooldown": "00:01:00"
        }});
        assert_eq!(from_api(&without, &Value::Null), v(defaults()));
        assert_eq!(from_api(&json!({}), &Value::Null), Value::Null);
    }

    #[test]
    fn the_body_sends_what_the_plan_knows() {
        let mut body = Map::new();
        put(
            &mut body,
            &v(CircuitBreaker {
                failure_threshold: v(7),
                enabled: Value::Unknown,
                notify_url: Value::Null,
                ..defaults()
            }),
        );
        assert_eq!(
            Json::Object(body),
            json!({"circuitBreaker": {
                "failureThreshold": 7, "window": "00:00:30", "halfOpen": true,
                "cooldown": "00:01:00"
            }})
        );
        let mut body = Map::new();
        put(&mut body, &Value::Unknown);
        assert!(body.is_empty(), "the server's defaults");
    }

    #[test]
    fn plans_leave_the_server_its_defaults_and_drop_only_the_webhook() {
        let mut planned = Value::Null;
        plan_create(&mut planned);
        assert_eq!(planned, Value::Unknown);

        let mut planned = v(CircuitBreaker {
            failure_threshold: v(5),
            ..CircuitBreaker::default()
        });
        plan_create(&mut planned);
        let breaker = planned.unwrap();
        assert_eq!(breaker.failure_threshold, v(5));
        assert_eq!(breaker.window, Value::Unknown);
        assert_eq!(breaker.notify_url, Value::Null);

        let prior = v(CircuitBreaker {
            failure_threshold: v(5),
            notify_url: v("https://ops.example/".into()),
            ..defaults()
        });
        let mut planned = Value::Null;
        plan_update(&prior, &mut planned);
        assert_eq!(
            planned,
            v(CircuitBreaker {
                failure_threshold: v(5),
                ..defaults()
            })
        );

        let mut planned = v(CircuitBreaker {
            window: v("0.00:00:30".into()),
            cooldown: v("00:02:00".into()),
            ..prior.clone().unwrap()
        });
        plan_update(&prior, &mut planned);
        let breaker = planned.unwrap();
        assert_eq!(breaker.window, v("00:00:30".into()), "no change");
        assert_eq!(breaker.cooldown, v("00:02:00".into()));

        let mut planned = Value::Null;
        plan_update(&Value::Null, &mut planned);
        assert_eq!(planned, Value::Unknown);
    }
}
