//! What an import changes, as a diff against what the app has, without I/O.
//!
//! Both sides are compared in the form the API returns: `hostConfig` and every function are
//! read through the domain's parsers, so a key written out at its default, a default the API
//! filled in, or JSON key order is no change, and a second import of the same project finds
//! nothing to do. Settings are compared by raw value (the caller reads them through
//! `settings/list`); secret values are never printed.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use shoal_domain::functions::FunctionSpec;
use shoal_domain::host_config::HostConfig;
use shoal_domain::settings::{MASK, is_secret_setting};

use super::mapping::{Mapped, Note, Outcome};

/// The app as it is now: absent, or its `GET` document, raw settings and functions.
#[derive(Debug, Clone, Default)]
pub struct Current {
    pub app: Option<Value>,
    pub settings: BTreeMap<String, String>,
    pub functions: BTreeMap<String, Value>,
}

/// One difference, by dotted path; values as shown (secrets masked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    Added(String, String),
    Removed(String, String),
    Changed(String, String, String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Write {
    CreateApp(Value),
    /// A merge patch of the app.
    PatchApp(Value),
    CreateFunction(String, Value),
    ReplaceFunction(String, Value),
}

/// The writes to make and the diff they amount to, per resource (`app`, `settings`,
/// `function NAME`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    pub writes: Vec<Write>,
    pub diff: Vec<(String, Vec<Line>)>,
    /// What the import leaves alone or could not decide, listed with the mapping's notes.
    pub notes: Vec<Note>,
}

impl Plan {
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }
}

/// The plan for `mapped` over `current`. `handler_url` is required when the app is created;
/// `None` keeps the app's.
pub fn plan(mapped: &Mapped, current: &Current, handler_url: Option<&str>) -> Result<Plan, String> {
    let mut plan = Plan::default();
    let settings = settings_to_write(mapped, current, &mut plan);
    let desired_host = normalized_host(&mapped.host_config)?;
    match &current.app {
        None => {
            let Some(url) = handler_url else {
                return Err("the app does not exist yet: give --handler-url".to_owned());
            };
            let mut lines = vec![Line::Added("handler.url".into(), quoted(url))];
            diff_values(
                "hostConfig",
                &normalized_host(&json!({}))?,
                &desired_host,
                &mut lines,
            );
            plan.diff.push(("app (new)".into(), lines));
            plan.writes.push(Write::CreateApp(json!({
                "handler": {"url": url},
                "hostConfig": mapped.host_config,
                "appSettings": settings,
            })));
        }
        Some(app) => {
            let mut patch = Map::new();
            let mut lines = Vec::new();
            let url_now = app["handler"]["url"].as_str().unwrap_or_default();
            if let Some(url) = handler_url.filter(|url| *url != url_now) {
                lines.push(Line::Changed(
                    "handler.url".into(),
                    quoted(url_now),
                    quoted(url),
                ));
                patch.insert("handler".into(), json!({"url": url}));
            }
            let host_now = normalized_host(&app["hostConfig"])?;
            if host_now != desired_host {
                diff_values("hostConfig", &host_now, &desired_host, &mut lines);
                patch.insert(
                    "hostConfig".into(),
                    merge_diff(&host_now, &mapped.host_config),
                );
            }
            if !lines.is_empty() {
                plan.diff.push(("app".into(), lines));
            }
            if !settings.is_empty() {
                patch.insert("appSettings".into(), Value::Object(settings));
            }
            if !patch.is_empty() {
                plan.writes.push(Write::PatchApp(Value::Object(patch)));
            }
        }
    }
    for (name, body) in &mapped.functions {
        let desired = comparable(name, body)?;
        match current.functions.get(name) {
            None => {
                // A new function reads as its bindings; its defaults are no news.
                let lines = desired["bindings"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .enumerate()
                    .map(|(i, b)| Line::Added(format!("bindings[{i}]"), b.to_string()))
                    .collect();
                plan.diff.push((format!("function {name} (new)"), lines));
                plan.writes
                    .push(Write::CreateFunction(name.clone(), body.clone()));
            }
            Some(existing) => {
                let now = comparable(name, existing)?;
                if now != desired {
                    let mut lines = Vec::new();
                    diff_values("", &now, &desired, &mut lines);
                    plan.diff.push((format!("function {name}"), lines));
                    plan.writes
                        .push(Write::ReplaceFunction(name.clone(), body.clone()));
                }
            }
        }
    }
    for name in current.functions.keys() {
        if !mapped.functions.contains_key(name) {
            plan.notes.push(Note {
                outcome: Outcome::NotImported,
                at: format!("function {name}"),
                why: "on the app, not in the project: left as it is".into(),
            });
        }
    }
    Ok(plan)
}

/// The settings to merge into the app's, with their diff lines: new and changed values only.
/// A value that is the export's placeholder keeps the app's value.
fn settings_to_write(mapped: &Mapped, current: &Current, plan: &mut Plan) -> Map<String, Value> {
    let mut write = Map::new();
    let mut lines = Vec::new();
    for (name, value) in &mapped.settings {
        let now = current.settings.get(name);
        if value == MASK {
            if now.is_none() {
                plan.notes.push(Note {
                    outcome: Outcome::NotImported,
                    at: name.clone(),
                    why: format!(
                        "the value is the export's placeholder {MASK}; set it with `shoal app settings set --secret {name}`"
                    ),
                });
            }
            continue;
        }
        let shown = |v: &str| {
            if is_secret_setting(name, v) {
                format!("{MASK} (secret)")
            } else {
                quoted(v)
            }
        };
        match now {
            Some(now) if now == value => continue,
            Some(now) => lines.push(Line::Changed(name.clone(), shown(now), shown(value))),
            None => lines.push(Line::Added(name.clone(), shown(value))),
        }
        write.insert(name.clone(), Value::String(value.clone()));
    }
    for name in current.settings.keys() {
        if !mapped.settings.contains_key(name) {
            plan.notes.push(Note {
                outcome: Outcome::NotImported,
                at: format!("setting {name}"),
                why: "on the app, not in local.settings.json: left as it is".into(),
            });
        }
    }
    if !lines.is_empty() {
        plan.diff.push(("settings".into(), lines));
    }
    write
}

fn quoted(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

/// `hostConfig` as the API returns it (every default filled in).
pub fn normalized_host(written: &Value) -> Result<Value, String> {
    let written = if written.is_null() {
        &json!({})
    } else {
        written
    };
    let host = HostConfig::parse(written, "hostConfig").map_err(|e| e.to_string())?;
    serde_json::to_value(host).map_err(|e| e.to_string())
}

/// A function as the API returns it, minus what the API computes (name, etag, times, trigger
/// type), with the defaults filled in: what two documents are compared by.
pub fn comparable(name: &str, body: &Value) -> Result<Value, String> {
    let spec = FunctionSpec::parse(name, body)
        .map_err(|e| format!("function {name}: {e}"))?
        .spec;
    let mut doc = json!({
        "bindings": spec.bindings,
        "disabled": spec.disabled,
        "excluded": spec.excluded,
        "circuitBreaker": spec.breaker(),
    });
    let optional = [
        (
            "retry",
            serde_json::to_value(&spec.retry).unwrap_or(Value::Null),
        ),
        ("maxConcurrency", json!(spec.max_concurrency)),
        ("scriptFile", json!(spec.script_file)),
        ("entryPoint", json!(spec.entry_point)),
        ("configurationSource", json!(spec.configuration_source)),
        ("generatedBy", json!(spec.generated_by)),
        // The domain's dead-letter target has no JSON form of its own: compare as written.
        (
            "deadLetter",
            body.get("deadLetter").cloned().unwrap_or(Value::Null),
        ),
    ];
    for (key, value) in optional {
        if !value.is_null() {
            doc[key] = value;
        }
    }
    Ok(doc)
}

/// The merge patch that turns `now` (the API's normalized document) into `desired` (as
/// written): a key `desired` lacks is `null` — back to its default — and objects recurse, so
/// a key the app had and the project dropped does not linger.
pub fn merge_diff(now: &Value, desired: &Value) -> Value {
    let (Some(now), Some(desired)) = (now.as_object(), desired.as_object()) else {
        return desired.clone();
    };
    let mut patch = Map::new();
    for key in now.keys() {
        if !desired.contains_key(key) {
            patch.insert(key.clone(), Value::Null);
        }
    }
    for (key, value) in desired {
        match now.get(key) {
            Some(old) if old == value => {}
            Some(old) if old.is_object() && value.is_object() => {
                patch.insert(key.clone(), merge_diff(old, value));
            }
            _ => {
                patch.insert(key.clone(), value.clone());
            }
        }
    }
    Value::Object(patch)
}

/// Leaf-by-leaf differences under `path`; arrays of the same length compare by index.
pub fn diff_values(path: &str, old: &Value, new: &Value, out: &mut Vec<Line>) {
    let at = |child: &str| {
        if path.is_empty() {
            child.to_owned()
        } else {
            format!("{path}.{child}")
        }
    };
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, value) in a {
                match b.get(key) {
                    Some(other) => diff_values(&at(key), value, other, out),
                    None => out.push(Line::Removed(at(key), value.to_string())),
                }
            }
            for (key, value) in b {
                if !a.contains_key(key) {
                    out.push(Line::Added(at(key), value.to_string()));
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (index, (x, y)) in a.iter().zip(b).enumerate() {
                diff_values(&format!("{path}[{index}]"), x, y, out);
            }
        }
        _ if old == new => {}
        _ => out.push(Line::Changed(
            path.to_owned(),
            old.to_string(),
            new.to_string(),
        )),
    }
}
