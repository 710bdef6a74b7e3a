//! An app written back as an Azure Functions project, without I/O: the API's documents with
//! what it computes left out and its filled-in defaults pruned, so the files read like a
//! project a person wrote, and importing them again changes nothing.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use shoal_domain::circuit_breaker::CircuitBreaker;

use super::files::Project;
use super::plan::normalized_host;

/// Fields of the API's function document that it computes; `function.json` has none of them.
const COMPUTED: &[&str] = &[
    "name",
    "app",
    "triggerType",
    "etag",
    "createdAt",
    "updatedAt",
];

/// The project for an app: its `hostConfig`, its functions (the API's documents) and its
/// settings (raw values, or the mask where the caller may not read them).
pub fn project(
    host_config: &Value,
    functions: &[Value],
    settings: &BTreeMap<String, String>,
) -> Result<Project, String> {
    let host = minimal_host(host_config)?;
    let functions = functions
        .iter()
        .map(|f| {
            (
                f["name"].as_str().unwrap_or_default().to_owned(),
                function_json(f),
            )
        })
        .collect();
    // `IsEncrypted: false` as `func init` writes it: the values are in the clear.
    let local_settings = json!({"IsEncrypted": false, "Values": settings});
    Ok(Project {
        host,
        functions,
        local_settings: Some(local_settings),
    })
}

/// The function's document as `function.json`: without computed fields and without
/// `disabled`/`excluded` when false and `circuitBreaker` when it is the default.
pub fn function_json(function: &Value) -> Value {
    let mut doc = function.as_object().cloned().unwrap_or_default();
    for key in COMPUTED {
        doc.remove(*key);
    }
    for flag in ["disabled", "excluded"] {
        if doc.get(flag) == Some(&Value::Bool(false)) {
            doc.remove(flag);
        }
    }
    let default_breaker = serde_json::to_value(CircuitBreaker::default()).ok();
    if doc.get("circuitBreaker") == default_breaker.as_ref() {
        doc.remove("circuitBreaker");
    }
    Value::Object(doc)
}

/// `hostConfig` without the keys whose removal changes nothing once the defaults are filled
/// in again. Each leaf is tried on its own and kept when removing it would change the result
/// (a default that depends on another key, such as `newBatchThreshold` on `batchSize`).
pub fn minimal_host(host_config: &Value) -> Result<Value, String> {
    let target = normalized_host(host_config)?;
    let mut doc = target.clone();
    for path in leaf_paths(&target, Vec::new()) {
        let mut trial = doc.clone();
        remove(&mut trial, &path);
        if normalized_host(&trial).ok().as_ref() == Some(&target) {
            doc = trial;
        }
    }
    Ok(doc)
}

fn leaf_paths(value: &Value, at: Vec<String>) -> Vec<Vec<String>> {
    match value.as_object() {
        Some(object) if !object.is_empty() => object
            .iter()
            .flat_map(|(key, child)| {
                let mut path = at.clone();
                path.push(key.clone());
                leaf_paths(child, path)
            })
            .collect(),
        _ => vec![at],
    }
}

/// Removes the key at `path`, and the objects it leaves empty.
fn remove(value: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let Some(object) = parents
        .iter()
        .try_fold(value as &mut Value, |v, key| v.get_mut(key))
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    object.remove(last);
    if object.is_empty() && !parents.is_empty() {
        remove(value, parents);
    }
}

/// Settings from the API's map.
pub fn settings_of(map: &Value) -> BTreeMap<String, String> {
    map.as_object()
        .map(Map::iter)
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
        .collect()
}
