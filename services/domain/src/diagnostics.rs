//! Why an app's listeners would not start, decided from its functions and settings alone:
//! connections that do not resolve, `%Setting%` queue names that are not set, trigger types
//! accepted but not run yet. A connection that cannot be resolved is not a write error
//! (settings may arrive later); the API reports these checks instead. What the live listeners
//! report about the handler's responses is checked in [`listeners`].

use std::collections::BTreeMap;

use serde::Serialize;
use utoipa::ToSchema;

use crate::bindings::Binding;
use crate::connection::{ConnectionKind, resolve};
use crate::functions::FunctionSpec;
use crate::names::QueueName;
use crate::queue_trigger::trigger_queue_name;

pub mod sign_in;

use sign_in::ConnectionSignIn;

mod listeners;

pub use listeners::check_undeclared_outputs;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum CheckStatus {
    Ok,
    Error,
    /// Works, but not as the tenant most likely intends (does not make the app unhealthy).
    Warning,
    /// The binding type is accepted but Shoal runs no listener for it yet.
    Unsupported,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    pub function: String,
    pub binding: String,
    /// What was checked: `connection`, `queueName`, `trigger`, `identity` (how an
    /// identity-based connection signs in), `outputs`.
    pub subject: String,
    pub status: CheckStatus,
    pub detail: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostics {
    pub app: String,
    /// True when no check is in error.
    pub healthy: bool,
    pub checks: Vec<Check>,
    /// How each identity-based connection signs in (see [`sign_in`]).
    pub connections: Vec<ConnectionSignIn>,
}

/// The checks for one function (pure, so the rules are unit-tested without HTTP).
/// The queue a binding's `queueName` resolves to, by the rules the worker applies.
fn queue_name_check(
    binding: &Binding,
    name: &QueueName,
    settings: &BTreeMap<String, String>,
) -> Result<QueueName, String> {
    if binding.is_trigger() {
        trigger_queue_name(name, settings)
    } else {
        name.resolve(settings)
    }
}

pub fn check_function(
    function: &str,
    spec: &FunctionSpec,
    settings: &BTreeMap<String, String>,
) -> Vec<Check> {
    let mut checks = Vec::new();
    let check = |binding: &Binding, subject: &str, status: CheckStatus, detail: String| Check {
        function: function.to_string(),
        binding: binding.name().to_string(),
        subject: subject.to_string(),
        status,
        detail,
    };
    for binding in &spec.bindings {
        let (kind, queue_name) = match binding {
            Binding::QueueTrigger(b) => (Some(ConnectionKind::StorageQueue), Some(&b.queue_name)),
            Binding::Queue(b) => (Some(ConnectionKind::StorageQueue), Some(&b.queue_name)),
            Binding::ServiceBusTrigger(_) | Binding::ServiceBus(_) => {
                (Some(ConnectionKind::ServiceBus), None)
            }
            _ => (None, None),
        };
        if let Some(kind) = kind {
            let outcome = resolve(kind, binding.connection(), settings);
            checks.push(match outcome {
                Ok(spec) => check(binding, "connection", CheckStatus::Ok, spec.describe()),
                Err(err) => check(binding, "connection", CheckStatus::Error, err.to_string()),
            });
        }
        if let Some(name) = queue_name
            && let Some(setting) = name.setting_reference()
        {
            checks.push(match queue_name_check(binding, name, settings) {
                Ok(value) => check(
                    binding,
                    "queueName",
                    CheckStatus::Ok,
                    format!("%{setting}% resolves to {value}"),
                ),
                Err(message) => check(binding, "queueName", CheckStatus::Error, message),
            });
        }
        if binding.is_trigger()
            && matches!(
                binding,
                Binding::EventHubTrigger(_)
                    | Binding::KafkaTrigger(_)
                    | Binding::CosmosDbTrigger(_)
            )
        {
            checks.push(check(
                binding,
                "trigger",
                CheckStatus::Unsupported,
                format!(
                    "{} is accepted, but Shoal does not run its listener yet",
                    binding.type_name()
                ),
            ));
        }
    }
    checks
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn function(bindings: serde_json::Value) -> FunctionSpec {
        FunctionSpec::parse("f", &json!({ "bindings": bindings }))
            .unwrap()
            .spec
    }

    #[test]
    fn unresolved_connection_is_an_error_check() {
        let spec = function(
            json!([{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "orders", "connection": "Missing"}]),
        );
        let checks = check_function("f", &spec, &BTreeMap::new());
        assert_eq!(checks.len(), 1);
        assert_eq!(checks[0].status, CheckStatus::Error);
        assert_eq!(checks[0].subject, "connection");
    }

    #[test]
    fn development_storage_resolves() {
        let spec = function(
            json!([{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "orders"}]),
        );
        let settings = BTreeMap::from([(
            "AzureWebJobsStorage".to_string(),
            "UseDevelopmentStorage=true".to_string(),
        )]);
        let checks = check_function("f", &spec, &settings);
        assert_eq!(checks[0].status, CheckStatus::Ok, "{}", checks[0].detail);
    }

    #[test]
    fn queue_name_reference_must_be_set() {
        let spec = function(
            json!([{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "%OrdersQueue%"}]),
        );
        let settings = BTreeMap::from([(
            "AzureWebJobsStorage".to_string(),
            "UseDevelopmentStorage=true".to_string(),
        )]);
        let checks = check_function("f", &spec, &settings);
        let queue = checks.iter().find(|c| c.subject == "queueName").unwrap();
        assert_eq!(queue.status, CheckStatus::Error);
    }
}
