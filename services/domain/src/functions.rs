//! The function resource: its `function.json` bindings (exactly one trigger), `disabled` and
//! an optional `retry` policy.

use serde::Deserialize;
use serde_json::Value;

use crate::bindings::{Binding, parse_bindings};
use crate::host_config::RetryPolicy;
use crate::validation::{Problems, ValidationError, from_json};

#[derive(Debug, Clone, PartialEq)]
pub struct FunctionSpec {
    pub bindings: Vec<Binding>,
    pub disabled: bool,
    pub retry: Option<RetryPolicy>,
}

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
    retry: Option<Value>,
}

impl FunctionSpec {
    pub fn parse(name: &str, body: &Value) -> Result<WrittenFunction, ValidationError> {
        if !body.is_object() {
            return Err(ValidationError::single(
                "",
                "the body must be a JSON object",
            ));
        }
        let body: Body = from_json(body.clone(), "")?;
        let mut problems = Problems::new();
        if let Some(written) = &body.name
            && written.as_str() != Some(name)
        {
            problems.push(
                "name",
                format!("must match the name in the path ({name}) or be omitted"),
            );
        }
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
        let disabled = match &body.disabled {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                problems.push("disabled", "expected a boolean");
                false
            }
        };
        let retry = match &body.retry {
            None | Some(Value::Null) => None,
            Some(value) => RetryPolicy::parse(value, "retry")
                .map_err(|e| problems.absorb(e))
                .ok(),
        };
        problems.finish()?;

        let mut stored = serde_json::Map::new();
        for (key, value) in [
            ("bindings", &body.bindings),
            ("disabled", &body.disabled),
            ("retry", &body.retry),
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
                retry,
            },
            stored: Value::Object(stored),
        })
    }

    /// The function's trigger binding (validation guarantees exactly one).
    pub fn trigger(&self) -> Option<&Binding> {
        self.bindings.iter().find(|b| b.is_trigger())
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
    fn missing_bindings_and_bad_disabled_are_reported_together() {
        let err = FunctionSpec::parse("f", &json!({"disabled": "yes"})).unwrap_err();
        let paths: Vec<_> = err.errors.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, vec!["bindings", "disabled"]);
    }
}
