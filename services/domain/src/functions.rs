//! The function resource: its `function.json` — bindings (exactly one trigger), `disabled`,
//! `excluded`, an optional `retry` policy, and the keys that describe where the Functions host
//! finds the code (`scriptFile`, `entryPoint`, `configurationSource`, `generatedBy`), which
//! Shoal stores as written without effect because the code is the app's handler.
//!
//! The top-level keys are those of SchemaStore's `function.json` schema, plus `generatedBy`,
//! which the .NET SDK's generator writes into every `function.json` it emits.

use serde::Deserialize;
use serde_json::Value;

use crate::bindings::{Binding, parse_bindings};
use crate::circuit_breaker::CircuitBreaker;
use crate::concurrency::parse_max_concurrency;
use crate::host_config::RetryPolicy;
use crate::stream_trigger::DeadLetter;
use crate::validation::{Problems, ValidationError, named_body};

#[derive(Debug, Clone, PartialEq)]
pub struct FunctionSpec {
    pub bindings: Vec<Binding>,
    pub disabled: bool,
    /// Azure does not load an excluded function at all; Shoal runs no listener for it and
    /// its webhook answers 404, as for a disabled one.
    pub excluded: bool,
    pub retry: Option<RetryPolicy>,
    /// `circuitBreaker` as written (a Shoal extension); [`FunctionSpec::breaker`] fills in
    /// the defaults when it is absent.
    pub circuit_breaker: Option<CircuitBreaker>,
    /// `deadLetter` (a Shoal extension, stream triggers only): where events whose final
    /// attempt failed go; absent means `<topic>-poison` (see [`crate::stream_trigger::dead_letter`]).
    pub dead_letter: Option<DeadLetter>,
    /// `maxConcurrency` (a Shoal extension): at most this many calls of the handler for this
    /// function in flight at once across every instance (see [`crate::concurrency`]).
    pub max_concurrency: Option<u32>,
    /// Stored as written; no effect (see [`STORED_ONLY`]).
    pub script_file: Option<String>,
    pub entry_point: Option<String>,
    pub configuration_source: Option<String>,
    pub generated_by: Option<String>,
}

/// Why `retry` does nothing on an HTTP-triggered function: the caller's request gets the
/// handler's answer, as in Azure Functions, whose retry policies do not apply to HTTP triggers.
const RETRY_ON_HTTP: &str = "an HTTP-triggered function is not retried: the caller gets the handler's answer, as in Azure Functions";

/// Why `circuitBreaker` does nothing on an HTTP-triggered function: it has no listener to pause.
const BREAKER_ON_HTTP: &str = "an HTTP-triggered function has no listener for a circuit breaker to pause; its callers get the handler's answers";

/// Why `maxConcurrency` is refused on an HTTP-triggered function: it has no listener whose
/// intake could wait for a slot, and a webhook caller is limited by `webhooks.requestsPerSecond`.
const CAP_ON_HTTP: &str = "applies to functions with a listener (queue, Service Bus and stream triggers); an HTTP-triggered function's callers are limited by the app's webhooks.requestsPerSecond";

/// The `function.json` keys Shoal stores without acting on them, and why.
pub const STORED_ONLY: &[(&str, &str)] = &[
    (
        "scriptFile",
        "Shoal does not load code; the app's handler.url serves every function",
    ),
    (
        "entryPoint",
        "Shoal does not load code; the handler is called at {handler.url}/{function}",
    ),
    (
        "configurationSource",
        "bindings always come from this document's `bindings`; there are no C# attributes to read",
    ),
    (
        "generatedBy",
        "a note left by the tool that generated function.json; nothing reads it",
    ),
];

#[derive(Debug, Clone, PartialEq)]
pub struct WrittenFunction {
    pub spec: FunctionSpec,
    /// The body as written minus read-only fields.
    pub stored: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Body {
    name: Option<Value>,
    #[allow(dead_code)]
    app: Option<Value>,
    #[allow(dead_code)]
    etag: Option<Value>,
    #[allow(dead_code)]
    created_at: Option<Value>,
    #[allow(dead_code)]
    updated_at: Option<Value>,
    #[allow(dead_code)]
    trigger_type: Option<Value>,
    bindings: Option<Value>,
    disabled: Option<Value>,
    excluded: Option<Value>,
    retry: Option<Value>,
    circuit_breaker: Option<Value>,
    dead_letter: Option<Value>,
    max_concurrency: Option<Value>,
    script_file: Option<Value>,
    entry_point: Option<Value>,
    configuration_source: Option<Value>,
    generated_by: Option<Value>,
}

impl FunctionSpec {
    pub fn parse(name: &str, body: &Value) -> Result<WrittenFunction, ValidationError> {
        let (body, mut problems) = named_body(name, body, |b: &Body| b.name.as_ref())?;
        let bindings = match &body.bindings {
            None | Some(Value::Null) => {
                problems.push("bindings", "is required and must hold exactly one trigger");
                Vec::new()
            }
            Some(value) => parse_bindings(value, "bindings").unwrap_or_else(|e| {
                problems.absorb(e);
                Vec::new()
            }),
        };
        let disabled = boolean(&mut problems, "disabled", &body.disabled);
        let excluded = boolean(&mut problems, "excluded", &body.excluded);
        let script_file = string(&mut problems, "scriptFile", &body.script_file);
        let entry_point = string(&mut problems, "entryPoint", &body.entry_point);
        let generated_by = string(&mut problems, "generatedBy", &body.generated_by);
        let configuration_source = string(
            &mut problems,
            "configurationSource",
            &body.configuration_source,
        );
        if let Some(source) = &configuration_source
            && !matches!(source.as_str(), "attributes" | "config")
        {
            problems.push(
                "configurationSource",
                "must be one of \"attributes\", \"config\"",
            );
        }
        let retry = match &body.retry {
            None | Some(Value::Null) => None,
            Some(value) => RetryPolicy::parse(value, "retry")
                .map_err(|e| problems.absorb(e))
                .ok(),
        };
        let circuit_breaker = match &body.circuit_breaker {
            None | Some(Value::Null) => None,
            Some(value) => CircuitBreaker::parse(value, "circuitBreaker")
                .map_err(|e| problems.absorb(e))
                .ok(),
        };
        let dead_letter = match &body.dead_letter {
            None | Some(Value::Null) => None,
            Some(value) => DeadLetter::parse(value, "deadLetter")
                .map_err(|e| problems.absorb(e))
                .ok(),
        };
        if dead_letter.is_some()
            && let Some(trigger) = bindings.iter().find(|b| b.is_trigger())
            && !trigger.kind().uses_dead_letter()
        {
            problems.push(
                "deadLetter",
                format!("applies to stream triggers (kafkaTrigger, eventHubTrigger); a {} has its own: {}", trigger.type_name(), own_dead_letter(trigger)),
            );
        }
        let max_concurrency = match &body.max_concurrency {
            None | Some(Value::Null) => None,
            Some(value) => parse_max_concurrency(value, "maxConcurrency")
                .map_err(|e| problems.absorb(e))
                .ok(),
        };
        if max_concurrency.is_some()
            && bindings
                .iter()
                .find(|b| b.is_trigger())
                .is_some_and(Binding::answers_its_caller)
        {
            problems.push("maxConcurrency", CAP_ON_HTTP);
        }
        problems.finish()?;

        let mut stored = serde_json::Map::new();
        for (key, value) in [
            ("bindings", &body.bindings),
            ("disabled", &body.disabled),
            ("excluded", &body.excluded),
            ("retry", &body.retry),
            ("circuitBreaker", &body.circuit_breaker),
            ("deadLetter", &body.dead_letter),
            ("maxConcurrency", &body.max_concurrency),
            ("scriptFile", &body.script_file),
            ("entryPoint", &body.entry_point),
            ("configurationSource", &body.configuration_source),
            ("generatedBy", &body.generated_by),
        ] {
            if let Some(v) = value
                && !v.is_null()
            {
                stored.insert(key.to_string(), v.clone());
            }
        }
        Ok(WrittenFunction {
            spec: FunctionSpec {
                bindings,
                disabled,
                excluded,
                retry,
                circuit_breaker,
                dead_letter,
                max_concurrency,
                script_file,
                entry_point,
                configuration_source,
                generated_by,
            },
            stored: Value::Object(stored),
        })
    }

    /// Whether Shoal runs the function: neither `disabled` nor `excluded`.
    pub fn runs(&self) -> bool {
        !self.disabled && !self.excluded
    }

    /// The stored-only keys this function has set, with why each has no effect.
    pub fn stored_only_keys(&self) -> Vec<(&'static str, &'static str)> {
        let set = [
            self.script_file.is_some(),
            self.entry_point.is_some(),
            self.configuration_source.is_some(),
            self.generated_by.is_some(),
        ];
        let mut keys: Vec<_> = STORED_ONLY
            .iter()
            .zip(set)
            .filter_map(|(key, set)| set.then_some(*key))
            .collect();
        let answers_its_caller = self.trigger().is_some_and(Binding::answers_its_caller);
        if self.retry.is_some() && answers_its_caller {
            keys.push(("retry", RETRY_ON_HTTP));
        }
        if self.circuit_breaker.is_some() && answers_its_caller {
            keys.push(("circuitBreaker", BREAKER_ON_HTTP));
        }
        keys
    }

    /// The function's circuit breaker settings, defaults filled in when none were written.
    pub fn breaker(&self) -> CircuitBreaker {
        self.circuit_breaker.clone().unwrap_or_default()
    }

    /// The function's trigger binding (validation guarantees exactly one).
    pub fn trigger(&self) -> Option<&Binding> {
        self.bindings.iter().find(|b| b.is_trigger())
    }
}

/// Where a non-stream trigger's failed messages go, for the error that refuses `deadLetter`.
fn own_dead_letter(trigger: &Binding) -> &'static str {
    trigger.kind().failed_messages()
}

fn boolean(problems: &mut Problems, path: &str, value: &Option<Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            problems.push(path, "expected a boolean");
            false
        }
    }
}

fn string(problems: &mut Problems, path: &str, value: &Option<Value>) -> Option<String> {
    match value {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            problems.push(path, "expected a string");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn queue_triggered_function_parses() {
        let body = json!({"bindings": [
            {"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "orders"},
            {"type": "queue", "direction": "out", "name": "out", "queueName": "orders-done"}
        ]});
        let f = FunctionSpec::parse("ProcessOrder", &body).unwrap();
        assert_eq!(
            f.spec.trigger().map(|t| t.type_name()),
            Some("queueTrigger")
        );
        assert!(!f.spec.disabled);
        assert_eq!(f.stored, body);
    }

    #[test]
    fn an_azure_functions_timer_function_json_is_accepted() {
        let body = json!({"bindings": [
            {"name": "myTimer", "type": "timerTrigger", "direction": "in", "schedule": "0 */5 * * * *"}
        ]});
        let f = FunctionSpec::parse("TimerTrigger1", &body).unwrap();
        assert_eq!(
            f.spec.trigger().map(|t| t.type_name()),
            Some("timerTrigger")
        );
        assert_eq!(f.stored, body);
        let with_dead_letter = json!({"bindings": body["bindings"], "deadLetter": {"topic": "dl"}});
        let err = FunctionSpec::parse("TimerTrigger1", &with_dead_letter).unwrap_err();
        assert!(
            err.errors[0].message.ends_with(
                "a timerTrigger has its own: its retry policy, then its next occurrence"
            ),
            "{err:?}"
        );
    }

    #[test]
    fn missing_bindings_and_bad_disabled_are_reported_together() {
        let err = FunctionSpec::parse("f", &json!({"disabled": "yes"})).unwrap_err();
        let paths: Vec<_> = err.errors.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, vec!["bindings", "disabled"]);
    }

    #[test]
    fn a_function_json_with_script_file_and_friends_is_stored_as_written() {
        let body = json!({
            "scriptFile": "../bin/Orders.dll",
            "entryPoint": "Orders.Process.Run",
            "configurationSource": "config",
            "generatedBy": "Microsoft.NET.Sdk.Functions.Generator-4.4.0",
            "excluded": false,
            "disabled": false,
            "bindings": [
                {"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "orders"}
            ]
        });
        let f = FunctionSpec::parse("ProcessOrder", &body).unwrap();
        assert_eq!(f.stored, body);
        assert_eq!(f.spec.script_file.as_deref(), Some("../bin/Orders.dll"));
        assert!(f.spec.runs());
        let keys: Vec<&str> = f.spec.stored_only_keys().iter().map(|(k, _)| *k).collect();
        assert_eq!(
            keys,
            [
                "scriptFile",
                "entryPoint",
                "configurationSource",
                "generatedBy"
            ]
        );
    }

    #[test]
    fn an_excluded_function_does_not_run() {
        let body = json!({"excluded": true, "bindings": [
            {"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "orders"}
        ]});
        let f = FunctionSpec::parse("f", &body).unwrap().spec;
        assert!(f.excluded && !f.disabled && !f.runs());
    }

    #[test]
    fn function_json_keys_are_checked_with_their_path() {
        let trigger = json!([{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "orders"}]);
        let cases = [
            (json!({"scriptFile": 1}), "scriptFile", "expected a string"),
            (json!({"excluded": "no"}), "excluded", "expected a boolean"),
            (
                json!({"configurationSource": "json"}),
                "configurationSource",
                "must be one of \"attributes\", \"config\"",
            ),
            (json!({"scriptfile": "x"}), "scriptfile", "unknown field"),
        ];
        for (mut body, path, message) in cases {
            body["bindings"] = trigger.clone();
            let err = FunctionSpec::parse("f", &body).unwrap_err();
            assert_eq!(err.errors.len(), 1, "{body}: {err}");
            assert_eq!(err.errors[0].path, path, "{body}");
            assert!(err.errors[0].message.starts_with(message), "{err}");
        }
    }

    #[test]
    fn dead_letter_is_for_stream_triggers_and_names_its_field() {
        let kafka = json!([{"type": "kafkaTrigger", "direction": "in", "name": "e",
            "brokerList": "b:9092", "topic": "orders"}]);
        let body = json!({"bindings": kafka, "deadLetter": {"topic": "orders-failed"}});
        let f = FunctionSpec::parse("f", &body).unwrap();
        assert_eq!(
            f.spec.dead_letter.map(|d| d.0),
            Some(crate::stream_trigger::DeadLetterTarget::Topic(
                "orders-failed".into()
            ))
        );
        assert_eq!(f.stored, body);

        let queue = json!([{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "orders"}]);
        let cases = [
            (
                json!({"bindings": queue, "deadLetter": {"topic": "x"}}),
                "deadLetter",
                "applies to stream triggers",
            ),
            (
                json!({"bindings": kafka, "deadLetter": {"topic": "bad topic"}}),
                "deadLetter.topic",
                "must be",
            ),
        ];
        for (body, path, message) in cases {
            let err = FunctionSpec::parse("f", &body).unwrap_err();
            assert_eq!(err.errors[0].path, path, "{err}");
            assert!(err.errors[0].message.starts_with(message), "{err}");
        }
    }

    #[test]
    fn max_concurrency_caps_a_listening_function_and_is_refused_on_http() {
        let queue = json!([{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "orders"}]);
        let body = json!({"bindings": queue, "maxConcurrency": 5});
        let f = FunctionSpec::parse("f", &body).unwrap();
        assert_eq!(f.spec.max_concurrency, Some(5));
        assert_eq!(f.stored, body);

        let http = json!([{"type": "httpTrigger", "direction": "in", "name": "req"}]);
        let cases = [
            (json!({"bindings": queue, "maxConcurrency": 0}), "from 1 to"),
            (
                json!({"bindings": queue, "maxConcurrency": "5"}),
                "from 1 to",
            ),
            (
                json!({"bindings": http, "maxConcurrency": 5}),
                "applies to functions with a listener",
            ),
        ];
        for (body, message) in cases {
            let err = FunctionSpec::parse("f", &body).unwrap_err();
            assert_eq!(err.errors[0].path, "maxConcurrency", "{err}");
            assert!(err.errors[0].message.contains(message), "{err}");
        }
    }
}
