//! `shoal_function`'s schema and state, and how they map to the API's `Function`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};
use tf_provider::schema::{
    AttributeConstraint::{Computed, Optional, OptionalComputed, Required},
    AttributeType as T, Block, Description, Schema,
};
use tf_provider::value::Value;

use super::breaker::{self, CircuitBreaker};
use super::dead_letter::{self, DeadLetter};
use crate::ids::FunctionId;
use crate::json_doc;
use crate::problem::FieldMap;
use crate::resources::{attribute, attributes, json_bool, json_i64, json_string, put_known};

/// The `function.json` keys `config_json` carries; `disabled`, `retry`, `circuitBreaker`,
/// `deadLetter` and `maxConcurrency` have attributes.
pub const DOCUMENT_KEYS: [&str; 6] = [
    "bindings",
    "excluded",
    "scriptFile",
    "entryPoint",
    "configurationSource",
    "generatedBy",
];

pub const FIELDS: FieldMap = FieldMap {
    documents: &[
        ("bindings", "config_json"),
        ("excluded", "config_json"),
        ("scriptFile", "config_json"),
        ("entryPoint", "config_json"),
        ("configurationSource", "config_json"),
        ("generatedBy", "config_json"),
    ],
    maps: &[],
};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionState {
    pub id: Value<String>,
    pub function_app_id: Value<String>,
    pub name: Value<String>,
    pub config_json: Value<String>,
    pub disabled: Value<bool>,
    pub retry: Value<Retry>,
    pub circuit_breaker: Value<CircuitBreaker>,
    pub max_concurrency: Value<i64>,
    pub dead_letter: Value<DeadLetter>,
    pub trigger_type: Value<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Retry {
    pub strategy: Value<String>,
    pub max_retry_count: Value<i64>,
    pub delay_interval: Value<String>,
    pub minimum_interval: Value<String>,
    pub maximum_interval: Value<String>,
}

pub fn schema() -> Schema {
    let retry = attributes([
        (
            "strategy",
            attribute(T::String, Required, "`fixedDelay` or `exponentialBackoff`."),
        ),
        (
            "max_retry_count",
            attribute(
                T::Number,
                Required,
                "Retries after the first attempt; `-1` retries indefinitely.",
            ),
        ),
        (
            "delay_interval",
            attribute(
                T::String,
                Optional,
                "Wait between attempts (`fixedDelay`), a TimeSpan such as `00:00:10`.",
            ),
        ),
        (
            "minimum_interval",
            attribute(
                T::String,
                Optional,
                "First back-off (`exponentialBackoff`).",
            ),
        ),
        (
            "maximum_interval",
            attribute(
                T::String,
                Optional,
                "Longest back-off (`exponentialBackoff`).",
            ),
        ),
    ]);
    Schema {
        version: 1,
        block: Block {
            version: 1,
            description: Description::markdown(
                "A function of a Shoal function app: its `function.json`.",
            ),
            attributes: attributes([
                (
                    "id",
                    attribute(
                        T::String,
                        Computed,
                        "`/tenants/{tenant}/apps/{app}/functions/{name}`; the id `terraform import` takes.",
                    ),
                ),
                (
                    "function_app_id",
                    attribute(
                        T::String,
                        Required,
                        "The `id` of the `shoal_function_app`. Changing it replaces the function.",
                    ),
                ),
                (
                    "name",
                    attribute(
                        T::String,
                        Required,
                        "The function's name. Changing it replaces the function.",
                    ),
                ),
                (
                    "config_json",
                    attribute(
                        T::String,
                        Required,
                        "The `function.json` as a JSON object (use `jsonencode`): `bindings` (exactly one trigger) and optionally `excluded`, `scriptFile`, `entryPoint`, `configurationSource`, `generatedBy`.",
                    ),
                ),
                (
                    "disabled",
                    attribute(
                        T::Bool,
                        OptionalComputed,
                        "Whether the function's trigger is stopped (server default false).",
                    ),
                ),
                (
                    "retry",
                    attribute(
                        T::AttributeSingle(retry),
                        Optional,
                        "The retry policy of the function's invocations.",
                    ),
                ),
                ("circuit_breaker", breaker::schema_attribute()),
                (
                    "max_concurrency",
                    // Only Optional: a function without it has no cap, so removing it removes
                    // the cap, and one set outside Terraform shows as drift.
                    attribute(
                        T::Number,
                        Optional,
                        "At most this many calls of the function's handler in flight at once, across every instance (1–10000), Shoal's `maxConcurrency` extension of `function.json`. Not for HTTP-triggered functions. Left out: no cap.",
                    ),
                ),
                ("dead_letter", dead_letter::schema_attribute()),
                (
                    "trigger_type",
                    attribute(T::String, Computed, "The trigger binding's type."),
                ),
            ]),
            ..Default::default()
        },
    }
}

pub fn check_document(text: &str) -> Result<(), String> {
    let document = json_doc::parse_object(text).map_err(|m| format!("config_json {m}"))?;
    for (key, attribute) in [
        ("disabled", "disabled"),
        ("retry", "retry"),
        (breaker::API_KEY, "circuit_breaker"),
        ("maxConcurrency", "max_concurrency"),
        (dead_letter::API_KEY, "dead_letter"),
    ] {
        if document.contains_key(key) {
            return Err(format!(
                "config_json holds `{key}`: set it with the resource's `{attribute}` attribute \
                 instead"
            ));
        }
    }
    if let Some(unknown) = document
        .keys()
        .find(|k| !DOCUMENT_KEYS.contains(&k.as_str()))
    {
        return Err(format!(
            "config_json holds `{unknown}`, which is not a function.json key Shoal knows \
             (expected {})",
            DOCUMENT_KEYS.join(", ")
        ));
    }
    if !document.contains_key("bindings") {
        return Err("config_json needs `bindings` (the function.json bindings array)".into());
    }
    Ok(())
}

pub fn body(planned: &FunctionState) -> Json {
    let mut function = match &planned.config_json {
        Value::Value(text) => json_doc::parse_object(text).unwrap_or_default(),
        _ => Map::new(),
    };
    put_known(&mut function, "disabled", &planned.disabled);
    if let Value::Value(retry) = &planned.retry {
        let mut r = Map::new();
        put_known(&mut r, "strategy", &retry.strategy);
        put_known(&mut r, "maxRetryCount", &retry.max_retry_count);
        put_known(&mut r, "delayInterval", &retry.delay_interval);
        put_known(&mut r, "minimumInterval", &retry.minimum_interval);
        put_known(&mut r, "maximumInterval", &retry.maximum_interval);
        function.insert("retry".into(), Json::Object(r));
    }
    breaker::put(&mut function, &planned.circuit_breaker);
    put_known(&mut function, "maxConcurrency", &planned.max_concurrency);
    dead_letter::put(&mut function, &planned.dead_letter);
    Json::Object(function)
}

pub fn from_api(function: &Json, id: &FunctionId, prior: &FunctionState) -> FunctionState {
    let mut document: Map<String, Json> = DOCUMENT_KEYS
        .iter()
        .filter_map(|k| {
            function
                .get(*k)
                .filter(|v| !v.is_null())
                .map(|v| ((*k).to_owned(), v.clone()))
        })
        .collect();
    // With no text of the user's to keep (an import), the read becomes the text: the API's
    // `excluded: false` is its default, which a function.json rarely spells out, so leaving
    // it out lets an imported function plan no change.
    if prior.config_json.as_ref_option().is_none()
        && document.get("excluded") == Some(&Json::Bool(false))
    {
        document.remove("excluded");
    }
    let config_json = json_doc::reconcile(
        prior.config_json.as_ref_option().map(String::as_str),
        &Json::Object(document),
    );
    let retry = match function.get("retry") {
        Some(r) if r.is_object() => Value::Value(Retry {
            strategy: json_string(r, "strategy"),
            max_retry_count: json_i64(r, "maxRetryCount"),
            delay_interval: json_string(r, "delayInterval"),
            minimum_interval: json_string(r, "minimumInterval"),
            maximum_interval: json_string(r, "maximumInterval"),
        }),
        _ => Value::Null,
    };
    FunctionState {
        id: Value::Value(id.to_string()),
        function_app_id: Value::Value(id.app.to_string()),
        name: Value::Value(id.function.clone()),
        config_json: Value::Value(config_json),
        disabled: json_bool(function, "disabled"),
        retry,
        circuit_breaker: breaker::from_api(function, &prior.circuit_breaker),
        max_concurrency: json_i64(function, "maxConcurrency"),
        dead_letter: dead_letter::from_api(function),
        trigger_type: json_string(function, "triggerType"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn config_json_must_be_a_function_json_without_the_attributes_keys() {
        let ok = r#"{"bindings": [{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "q"}]}"#;
        assert!(check_document(ok).is_ok());
        let cases = [
            ("[]", "JSON object"),
            (
                r#"{"bindings": [], "disabled": true}"#,
                "`disabled` attribute",
            ),
            (r#"{"bindings": [], "retry": {}}"#, "`retry` attribute"),
            (
                r#"{"bindings": [], "circuitBreaker": {"enabled": false}}"#,
                "`circuitBreaker`: set it with the resource's `circuit_breaker` attribute",
            ),
            (
                r#"{"bindings": [], "maxConcurrency": 5}"#,
                "`maxConcurrency`: set it with the resource's `max_concurrency` attribute",
            ),
            (
                r#"{"bindings": [], "deadLetter": {"topic": "x"}}"#,
                "`deadLetter`: set it with the resource's `dead_letter` attribute",
            ),
            (r#"{"bindings": [], "bindngs": []}"#, "`bindngs`"),
            (r#"{"scriptFile": "x"}"#, "needs `bindings`"),
        ];
        for (text, expected) in cases {
            let error = check_document(text).unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }

    #[test]
    fn the_body_sends_the_cap_only_when_the_plan_has_one() {
        let mut planned = FunctionState {
            config_json: Value::Value(r#"{"bindings": []}"#.into()),
            max_concurrency: Value::Value(4),
            ..FunctionState::default()
        };
        assert_eq!(body(&planned)["maxConcurrency"], json!(4));
        // No cap in the plan: the key is left out, which the API reads as no cap.
        planned.max_concurrency = Value::Null;
        assert_eq!(body(&planned), json!({"bindings": []}));
    }

    #[test]
    fn reads_keep_the_users_document_while_the_server_agrees() {
        let id = FunctionId::parse("/tenants/tt/apps/aa/functions/f").unwrap();
        let mine =
            r#"{"bindings":[{"type":"queueTrigger","direction":"in","name":"m","queueName":"q"}]}"#;
        let prior = FunctionState {
            config_json: Value::Value(mine.into()),
            ..FunctionState::default()
        };
        let read = json!({
            "name": "f", "app": "aa", "triggerType": "queueTrigger", "disabled": false,
            "excluded": false, "retry": null, "scriptFile": null,
            "bindings": [{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "q"}],
            "etag": "x"
        });
        let state = from_api(&read, &id, &prior);
        assert_eq!(state.config_json, Value::Value(mine.into()));
        assert_eq!(
            state.function_app_id,
            Value::Value("/tenants/tt/apps/aa".into())
        );
        assert_eq!(state.retry, Value::Null);
        assert_eq!(state.max_concurrency, Value::Null, "no cap");
        let mut capped = read.clone();
        capped["maxConcurrency"] = json!(12);
        assert_eq!(
            from_api(&capped, &id, &prior).max_concurrency,
            Value::Value(12)
        );
        let imported = from_api(&read, &id, &FunctionState::default());
        assert_eq!(
            json_doc::parse_object(&imported.config_json.unwrap()).unwrap(),
            json_doc::parse_object(mine).unwrap(),
            "an import leaves the default `excluded: false` out"
        );
        let mut excluded = read.clone();
        excluded["excluded"] = json!(true);
        let imported = from_api(&excluded, &id, &FunctionState::default());
        assert!(imported.config_json.unwrap().contains(r#""excluded":true"#));
        let mut changed = read.clone();
        changed["bindings"][0]["queueName"] = json!("other");
        let drifted = from_api(&changed, &id, &prior);
        assert!(drifted.config_json.unwrap().contains("other"));
    }
}
