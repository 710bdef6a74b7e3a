//! An Azure Functions project mapped onto Shoal's resources, without I/O: `host.json` becomes
//! the app's `hostConfig`, `local.settings.json` its settings, each `function.json` a
//! function. What does not map is a [`Note`] saying why, never dropped in silence; a document
//! the API would refuse is reported with its file and field path before anything is written.
//!
//! The rules are the domain's, not a second copy: which binding types exist and which triggers
//! run (`shoal_domain::bindings`), which host.json keys and function.json keys Shoal only stores
//! (`host_config::stored`, `FunctionSpec::stored_only_keys`), how `%Setting%` references are
//! read (`binding_expressions::Template`).

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use shoal_domain::binding_expressions::Template;
use shoal_domain::bindings::{known_type_names, triggers_with_runner};
use shoal_domain::functions::FunctionSpec;
use shoal_domain::host_config::HostConfig;
use shoal_domain::host_config::stored::no_effect_keys;
use shoal_domain::names::FunctionName;
use shoal_domain::validation::{ValidationError, join_path};

use super::files::{FUNCTION_JSON, HOST_JSON, LOCAL_SETTINGS_JSON, Project};

/// What the import does with one part of the project that is not a plain mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// Left out of what is written.
    NotImported,
    /// Written, but nothing in Shoal acts on it.
    NoEffect,
    /// Written, refers to something the project does not define.
    Unresolved,
    /// Written as an app setting; read by Azure's runtime, not Shoal's.
    Kept,
}

impl Outcome {
    pub fn label(self) -> &'static str {
        match self {
            Outcome::NotImported => "not imported",
            Outcome::NoEffect => "stored, no effect",
            Outcome::Unresolved => "unresolved",
            Outcome::Kept => "kept as a setting",
        }
    }
}

/// One part of the project that does not map one to one, where it is and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Note {
    pub outcome: Outcome,
    /// `file path` (`orders/function.json bindings[1]`).
    pub at: String,
    pub why: String,
}

/// The project as Shoal's resources.
#[derive(Debug, Clone, PartialEq)]
pub struct Mapped {
    /// `host.json` as written (the API stores it and fills in the defaults).
    pub host_config: Value,
    pub settings: BTreeMap<String, String>,
    /// Each function's `function.json` without the bindings that do not map.
    pub functions: BTreeMap<String, Value>,
    pub notes: Vec<Note>,
}

/// Settings in `local.settings.json` that Azure's Functions runtime reads and Shoal does not.
/// They are kept as app settings all the same — nothing is dropped, an export writes them
/// back, and a handler deployed elsewhere may read its configuration from the same names.
const AZURE_RUNTIME_SETTINGS: &[(&str, &str)] = &[
    (
        "FUNCTIONS_WORKER_RUNTIME",
        "chooses the Functions host's language worker; Shoal calls the handler at handler.url",
    ),
    (
        "FUNCTIONS_EXTENSION_VERSION",
        "pins the Functions host version; Shoal is not that host",
    ),
    (
        "AzureWebJobsScriptRoot",
        "where the Functions host finds the project files; Shoal loads no files",
    ),
    (
        "AzureWebJobsFeatureFlags",
        "feature switches of the Functions host",
    ),
    (
        "AzureWebJobsSecretStorageType",
        "where the Functions host keeps function keys; Shoal's webhooks use tokens and RBAC",
    ),
    (
        "AzureWebJobsDashboard",
        "the WebJobs dashboard's storage; Shoal's invocation telemetry is in its own API",
    ),
    (
        "FUNCTIONS_WORKER_PROCESS_COUNT",
        "how many language worker processes the host starts; Shoal starts none",
    ),
];

/// Maps the project, or every problem that stops it, each as `file: path: message`.
pub fn map(project: &Project) -> Result<Mapped, Vec<String>> {
    let mut problems = Vec::new();
    let mut notes = Vec::new();
    match HostConfig::parse(&project.host, "") {
        Ok(_) => {
            for key in no_effect_keys(&project.host) {
                notes.push(note(
                    Outcome::NoEffect,
                    format!("{HOST_JSON} {}", key.path),
                    key.why,
                ));
            }
        }
        Err(e) => problems.extend(located(HOST_JSON, e)),
    }
    let settings = match &project.local_settings {
        Some(document) => read_settings(document, &mut notes, &mut problems),
        None => {
            notes.push(note(
                Outcome::NotImported,
                LOCAL_SETTINGS_JSON,
                "not in the folder: no settings are imported (the app keeps the ones it has)",
            ));
            BTreeMap::new()
        }
    };
    let mut functions = BTreeMap::new();
    for (name, document) in &project.functions {
        let file = format!("{name}/{FUNCTION_JSON}");
        if let Err(message) = FunctionName::parse(name) {
            problems.push(format!(
                "{file}: the folder name is not a function name: {message}"
            ));
            continue;
        }
        let Some(body) = strip_unmapped(&file, document, &mut notes) else {
            continue;
        };
        match FunctionSpec::parse(name, &body) {
            Ok(written) => {
                for (key, why) in written.spec.stored_only_keys() {
                    notes.push(note(Outcome::NoEffect, format!("{file} {key}"), why));
                }
                unresolved_references(&file, &body, &settings, &mut notes);
                functions.insert(name.clone(), body);
            }
            Err(e) => problems.extend(located(&file, e)),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    notes.sort();
    Ok(Mapped {
        host_config: project.host.clone(),
        settings,
        functions,
        notes,
    })
}

fn note(outcome: Outcome, at: impl Into<String>, why: impl Into<String>) -> Note {
    Note {
        outcome,
        at: at.into(),
        why: why.into(),
    }
}

fn located(file: &str, error: ValidationError) -> Vec<String> {
    error
        .errors
        .into_iter()
        .map(|e| {
            let at = if e.path.is_empty() {
                "(document)"
            } else {
                &e.path
            };
            format!("{file}: {at}: {}", e.message)
        })
        .collect()
}

/// `Values` and `ConnectionStrings` as one settings map. A connection string is found by name
/// as a setting is: the WebJobs SDK's `GetWebJobsConnectionString` reads `AzureWebJobs<name>`,
/// then `<name>`, each from the settings and from `ConnectionStrings`
/// (Azure/azure-webjobs-sdk, src/Microsoft.Azure.WebJobs.Host/Extensions/IConfigurationExtensions.cs).
fn read_settings(
    document: &Value,
    notes: &mut Vec<Note>,
    problems: &mut Vec<String>,
) -> BTreeMap<String, String> {
    let mut settings = BTreeMap::new();
    let Some(object) = document.as_object() else {
        problems.push(format!("{LOCAL_SETTINGS_JSON}: expected an object"));
        return settings;
    };
    // `Values` first, so a name in both keeps its `Values` entry (one map, one value a name).
    for section in ["Values", "ConnectionStrings"] {
        if let Some(value) = object.get(section) {
            read_section(section, value, &mut settings, notes, problems);
        }
    }
    for (key, value) in object {
        match key.as_str() {
            "IsEncrypted" if value == &Value::Bool(true) => problems.push(format!(
                "{LOCAL_SETTINGS_JSON}: IsEncrypted: its values are encrypted with a key of the \
                 machine that wrote them; run `func settings decrypt` there first"
            )),
            "IsEncrypted" | "Values" | "ConnectionStrings" => {}
            "Host" => notes.push(note(
                Outcome::NotImported,
                format!("{LOCAL_SETTINGS_JSON} Host"),
                "settings of `func start` (local port, CORS); Shoal's webhook ingress has its own route and limits",
            )),
            other => notes.push(note(
                Outcome::NotImported,
                format!("{LOCAL_SETTINGS_JSON} {other}"),
                "not a section Azure Functions reads from local.settings.json (IsEncrypted, Values, ConnectionStrings, Host)",
            )),
        }
    }
    for (name, why) in AZURE_RUNTIME_SETTINGS {
        if settings.contains_key(*name) {
            notes.push(note(Outcome::Kept, *name, *why));
        }
    }
    settings
}

fn read_section(
    section: &str,
    value: &Value,
    settings: &mut BTreeMap<String, String>,
    notes: &mut Vec<Note>,
    problems: &mut Vec<String>,
) {
    let Some(entries) = value.as_object() else {
        problems.push(format!(
            "{LOCAL_SETTINGS_JSON}: {section}: expected an object"
        ));
        return;
    };
    for (name, value) in entries {
        let at = format!("{LOCAL_SETTINGS_JSON} {section}.{name}");
        let text = match value {
            Value::String(s) => s.clone(),
            // The Functions host reads settings as strings; a number or boolean is its text.
            Value::Number(_) | Value::Bool(_) => value.to_string(),
            _ => {
                problems.push(format!(
                    "{LOCAL_SETTINGS_JSON}: {section}.{name}: expected a string"
                ));
                continue;
            }
        };
        if settings.contains_key(name) {
            notes.push(note(
                Outcome::NotImported,
                at,
                format!("Values.{name} is imported under the same name"),
            ));
            continue;
        }
        settings.insert(name.clone(), text);
    }
}

/// The function's document without the bindings Shoal has no type for, each noted; `None`
/// (and a note) when its trigger is one of them, since a function is its trigger.
fn strip_unmapped(file: &str, document: &Value, notes: &mut Vec<Note>) -> Option<Value> {
    let Some(bindings) = document.get("bindings").and_then(Value::as_array) else {
        return Some(document.clone());
    };
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    for (index, binding) in bindings.iter().enumerate() {
        let type_name = binding.get("type").and_then(Value::as_str).unwrap_or("");
        if type_name.is_empty() || known_type_names().any(|known| known == type_name) {
            if is_stored_trigger(type_name) {
                notes.push(note(
                    Outcome::NoEffect,
                    format!("{file} bindings[{index}]"),
                    format!("{type_name}: stored, but nothing in Shoal runs it yet; the function gets no instances"),
                ));
            }
            kept.push(binding.clone());
        } else {
            dropped.push((index, type_name));
        }
    }
    let runs = triggers_with_runner().collect::<Vec<_>>().join(", ");
    let dropped_trigger = dropped.iter().find(|(_, t)| t.ends_with("Trigger"));
    if let Some((index, type_name)) = dropped_trigger {
        notes.push(note(
            Outcome::NotImported,
            file,
            format!(
                "its trigger (bindings[{index}]) is {type_name}, a type Shoal does not run (it runs {runs}); none of its bindings are imported"
            ),
        ));
        return None;
    }
    for (index, type_name) in dropped {
        notes.push(note(
            Outcome::NotImported,
            format!("{file} bindings[{index}]"),
            format!(
                "{type_name}: Shoal has no {type_name} binding; the function is imported without it"
            ),
        ));
    }
    let mut body = document.clone();
    body["bindings"] = Value::Array(kept);
    Some(body)
}

fn is_stored_trigger(type_name: &str) -> bool {
    type_name.ends_with("Trigger") && !triggers_with_runner().any(|t| t == type_name)
}

/// A note for every `%Setting%` a binding refers to that the project's settings do not define.
fn unresolved_references(
    file: &str,
    body: &Value,
    settings: &BTreeMap<String, String>,
    notes: &mut Vec<Note>,
) {
    let bindings = body["bindings"].as_array().into_iter().flatten();
    for (index, binding) in bindings.enumerate() {
        let properties = binding.as_object().map(Map::iter).into_iter().flatten();
        for (property, value) in properties {
            let Some(Ok(template)) = value.as_str().map(Template::parse) else {
                continue;
            };
            for setting in template.settings() {
                if !settings.contains_key(setting) {
                    notes.push(note(
                        Outcome::Unresolved,
                        format!("{file} {}", join_path(&format!("bindings[{index}]"), property)),
                        format!(
                            "%{setting}% is not defined in {LOCAL_SETTINGS_JSON}; until the app has it, `shoal diagnostics` reports the binding"
                        ),
                    ));
                }
            }
        }
    }
}
