//! JSON documents held in string attributes (`host_config`, a function's `config_json`).
//!
//! Shoal reads such a document back as written *plus* the defaults of the sections it acts on
//! (docs/api.md). Storing the read verbatim would show a diff on every plan, so the provider
//! keeps the user's own text in state for as long as the server's document still contains
//! everything it says ([`is_subset`]); a change made outside Terraform to any key the user
//! wrote breaks that, and the server's document then replaces the text, which Terraform
//! shows as drift.

use serde_json::{Map, Value};
use shoal_domain::host_config::HostConfig;

/// Parses the text of a document attribute, which must be one JSON object.
pub fn parse_object(text: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!(
            "must be a JSON object (as jsonencode({{...}}) gives), not {}",
            kind(&other)
        )),
        Err(e) => Err(format!("is not valid JSON: {e}")),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Whether everything `written` says is also said by `read`: objects may gain keys (defaults),
/// arrays keep their length and order, scalars are equal (numbers by value, so `1` and `1.0`
/// agree), and a `null` the user wrote matches a key the server leaves out.
pub fn is_subset(written: &Value, read: &Value) -> bool {
    match (written, read) {
        (Value::Object(w), Value::Object(r)) => w.iter().all(|(key, wv)| match r.get(key) {
            Some(rv) => is_subset(wv, rv),
            None => wv.is_null(),
        }),
        (Value::Array(w), Value::Array(r)) => {
            w.len() == r.len() && w.iter().zip(r).all(|(wv, rv)| is_subset(wv, rv))
        }
        (Value::Number(w), Value::Number(r)) => match (w.as_f64(), r.as_f64()) {
            (Some(w), Some(r)) => w == r,
            _ => w == r,
        },
        (w, r) => w == r,
    }
}

/// The text to keep in state for a document the server read back as `read`: the prior text
/// while the server still says all of it, otherwise the server's document (compact JSON, keys
/// in the server's order).
pub fn reconcile(prior: Option<&str>, read: &Value) -> String {
    if let Some(prior) = prior
        && let Ok(written) = serde_json::from_str::<Value>(prior)
        && is_subset(&written, read)
    {
        return prior.to_owned();
    }
    read.to_string()
}

/// Whether two `host_config` texts mean the same configuration to the API: each as the API
/// reads it (`shoal_domain::host_config::HostConfig::parse`, the server's defaults filled in)
/// gives the same document. Text that does not parse is never the same as anything.
pub fn same_host_config(a: &str, b: &str) -> bool {
    let effective = |text: &str| {
        let written = serde_json::from_str::<Value>(text).ok()?;
        let config = HostConfig::parse(&written, "hostConfig").ok()?;
        serde_json::to_value(config).ok()
    };
    match (effective(a), effective(b)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn host_configs_are_the_same_when_the_api_reads_them_alike() {
        let full = serde_json::to_value(
            HostConfig::parse(&json!({"extensions": {"queues": {"batchSize": 16}}}), "h").unwrap(),
        )
        .unwrap()
        .to_string();
        let cases = [
            (
                r#"{"extensions":{"queues":{"batchSize":16}}}"#,
                full.as_str(),
                true,
            ),
            ("{}", full.as_str(), true),
            (
                r#"{"extensions":{"queues":{"batchSize":8}}}"#,
                full.as_str(),
                false,
            ),
            (r#"{"functionTimeout":"00:07:00"}"#, "{}", false),
            ("not json", "not json", false),
            (r#"{"unknownSection":1}"#, r#"{"unknownSection":1}"#, false),
        ];
        for (a, b, same) in cases {
            assert_eq!(same_host_config(a, b), same, "{a} ~ {b}");
        }
    }

    #[test]
    fn subset_cases() {
        let cases = [
            (json!({}), json!({"a": 1}), true),
            (json!({"a": 1}), json!({"a": 1, "b": 2}), true),
            (json!({"a": 1.0}), json!({"a": 1}), true),
            (json!({"a": 2}), json!({"a": 1}), false),
            (json!({"a": {"b": 1}}), json!({"a": {"b": 1, "c": 3}}), true),
            (json!({"a": {"b": 1}}), json!({"a": {"c": 3}}), false),
            (json!({"a": null}), json!({}), true),
            (json!({"a": null}), json!({"a": null}), true),
            (json!({"a": null}), json!({"a": 1}), false),
            (json!({"a": [1, 2]}), json!({"a": [1, 2]}), true),
            (json!({"a": [1, 2]}), json!({"a": [2, 1]}), false),
            (json!({"a": [1]}), json!({"a": [1, 2]}), false),
            (
                json!({"a": [{"x": 1}]}),
                json!({"a": [{"x": 1, "y": 2}]}),
                true,
            ),
            (json!({"a": "1"}), json!({"a": 1}), false),
            (json!({"a": true}), json!({"a": true}), true),
            (json!({"a": 1}), json!([1]), false),
        ];
        for (written, read, expected) in cases {
            assert_eq!(
                is_subset(&written, &read),
                expected,
                "{written} within {read}"
            );
        }
    }

    #[test]
    fn reconcile_keeps_the_users_text_until_the_server_disagrees() {
        let read = json!({"version": "2.0", "extensions": {"queues": {"batchSize": 8, "maxDequeueCount": 5}}});
        let mine = r#"{ "extensions": { "queues": { "batchSize": 8 } } }"#;
        assert_eq!(reconcile(Some(mine), &read), mine);
        let changed = json!({"extensions": {"queues": {"batchSize": 4, "maxDequeueCount": 5}}});
        assert_eq!(reconcile(Some(mine), &changed), changed.to_string());
        assert_eq!(reconcile(None, &read), read.to_string());
        assert_eq!(reconcile(Some("not json"), &read), read.to_string());
    }

    #[test]
    fn only_objects_parse() {
        assert!(parse_object(r#"{"a": 1}"#).is_ok());
        assert!(parse_object("[1]").unwrap_err().contains("an array"));
        assert!(parse_object("{").unwrap_err().contains("not valid JSON"));
    }
}
