//! `dead_letter` of `shoal_function`: the function's `deadLetter` (a Shoal extension of
//! `function.json` for `kafkaTrigger` and `eventHubTrigger` functions; docs/triggers.md), where
//! events whose final attempt failed are written: a `topic` on the trigger's own brokers, or a
//! Storage queue `queue_name` with an optional `connection`.
//!
//! Only Optional, like `max_concurrency`: a function without it dead-letters to
//! `<topic>-poison`, so removing the block removes the target, and one set outside Terraform
//! shows as drift instead of being dropped by the next PUT.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};
use tf_provider::schema::{Attribute, AttributeConstraint::Optional, AttributeType as T};
use tf_provider::value::Value;
use tf_provider::{AttributePath, Diagnostics};

use crate::resources::{attribute, attributes, json_string, put_known};

/// The API's name of the object in a function's document.
pub const API_KEY: &str = "deadLetter";

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeadLetter {
    pub topic: Value<String>,
    pub queue_name: Value<String>,
    pub connection: Value<String>,
}

pub fn schema_attribute() -> Attribute {
    let fields = attributes([
        (
            "topic",
            attribute(
                T::String,
                Optional,
                "A topic on the trigger's own brokers (1–249 letters, digits, `.`, `_`, `-`), or an app setting reference such as `%DeadLetterTopic%`. Set either `topic` or `queue_name`.",
            ),
        ),
        (
            "queue_name",
            attribute(
                T::String,
                Optional,
                "A Storage queue (a queue name, or a `%Setting%` reference). Set either `topic` or `queue_name`.",
            ),
        ),
        (
            "connection",
            attribute(
                T::String,
                Optional,
                "The app setting (prefix) of the Storage connection for `queue_name`, resolved like a queue binding's; left out: `AzureWebJobsStorage`. Only with `queue_name`.",
            ),
        ),
    ]);
    attribute(
        T::AttributeSingle(fields),
        Optional,
        "Where the events whose final attempt failed go, Shoal's `deadLetter` extension of `function.json`; only for `kafkaTrigger` and `eventHubTrigger` functions. Left out: the topic `<topic>-poison` on the trigger's brokers.",
    )
}

/// The block's rules the API would refuse with a 422, checked at plan time at their
/// attribute: exactly one of `topic` and `queue_name`, `connection` only with a queue (and not
/// empty, which the API reads as no connection and would answer as a different value).
/// Values not known yet are left to the API.
pub fn validate(diags: &mut Diagnostics, config: &Value<DeadLetter>) {
    let Value::Value(target) = config else {
        return;
    };
    let path = || AttributePath::new("dead_letter");
    if target.topic.is_unknown() || target.queue_name.is_unknown() {
        return;
    }
    match (target.topic.is_null(), target.queue_name.is_null()) {
        (true, true) => diags.error(
            "Invalid dead_letter",
            "dead_letter needs `topic` (a topic on the trigger's brokers) or `queue_name` (a \
             Storage queue)",
            path(),
        ),
        (false, false) => diags.error(
            "Invalid dead_letter",
            "dead_letter sets both `topic` and `queue_name`: set either one, not both",
            path().attribute("queue_name"),
        ),
        (false, true) if !target.connection.is_null() => diags.error(
            "Invalid dead_letter",
            "dead_letter.connection applies to `queue_name`; a dead-letter topic is on the \
             trigger's own brokers",
            path().attribute("connection"),
        ),
        _ => {}
    }
    if let Value::Value(connection) = &target.connection
        && connection.trim().is_empty()
    {
        diags.error(
            "Invalid dead_letter",
            "dead_letter.connection is empty: leave it out for `AzureWebJobsStorage`",
            path().attribute("connection"),
        );
    }
}

/// Adds `deadLetter` to a function's body when the plan has one; left out, the function has
/// none.
pub fn put(function: &mut Map<String, Json>, planned: &Value<DeadLetter>) {
    if let Value::Value(target) = planned {
        let mut d = Map::new();
        put_known(&mut d, "topic", &target.topic);
        put_known(&mut d, "queueName", &target.queue_name);
        put_known(&mut d, "connection", &target.connection);
        function.insert(API_KEY.into(), Json::Object(d));
    }
}

/// The target of a function as the API reads it.
pub fn from_api(function: &Json) -> Value<DeadLetter> {
    match function.get(API_KEY).filter(|d| d.is_object()) {
        Some(read) => Value::Value(DeadLetter {
            topic: json_string(read, "topic"),
            queue_name: json_string(read, "queueName"),
            connection: json_string(read, "connection"),
        }),
        None => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn v<T>(value: T) -> Value<T> {
        Value::Value(value)
    }

    #[test]
    fn the_body_and_the_read_agree() {
        let queue = v(DeadLetter {
            queue_name: v("failed".into()),
            connection: v("MyStorage".into()),
            ..DeadLetter::default()
        });
        let mut body = Map::new();
        put(&mut body, &queue);
        let body = Json::Object(body);
        assert_eq!(
            body,
            json!({"deadLetter": {"queueName": "failed", "connection": "MyStorage"}})
        );
        assert_eq!(from_api(&body), queue);
        let mut body = Map::new();
        put(&mut body, &Value::Null);
        assert!(body.is_empty(), "no target: the key is left out");
        assert_eq!(from_api(&json!({"deadLetter": null})), Value::Null);
        assert_eq!(
            from_api(&json!({"deadLetter": {"topic": "orders-failed"}})),
            v(DeadLetter {
                topic: v("orders-failed".into()),
                ..DeadLetter::default()
            })
        );
    }
}
