//! Why an app's listeners would not start, decided from its functions and settings alone:
//! connections that do not resolve, `%Setting%` queue names that are not set, trigger types
//! accepted but not run yet. A connection that cannot be resolved is not a write error
//! (settings may arrive later); the API reports these checks instead. What the live listeners
//! report about the handler's responses is checked in [`listeners`], and how identity-based
//! connections sign in in [`sign_in`].
//!
//! It also lists every `host.json` and `function.json` key the app has written that Shoal
//! stores but does not act on (status `noEffect`), and what became of each legacy key, so a
//! pasted document never has a setting that silently does nothing.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::binding_kinds::Finding;
use crate::bindings::Binding;
use crate::connection::resolve;
use crate::functions::FunctionSpec;
use crate::host_config::HostConfig;
use crate::host_config::stored::{full_path, legacy_keys, no_effect_keys};

pub mod sign_in;

use sign_in::ConnectionSignIn;

mod breaker;
mod broker;
pub mod health;
mod listeners;
mod service_bus;

pub use breaker::check_breaker;
pub use broker::{QueueProbe, check_broker_queues};
pub use listeners::check_undeclared_outputs;
pub use service_bus::{EntityProbe, check_service_bus_entity};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum CheckStatus {
    Ok,
    Error,
    /// Works, but not as the tenant most likely intends (does not make the app unhealthy).
    Warning,
    /// The binding type is accepted but Shoal runs no listener for it yet.
    Unsupported,
    /// The key is stored and returned as written, but has no effect in Shoal.
    NoEffect,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    /// The function checked; absent for app-wide checks (`hostConfig`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// The binding checked, if the check is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binding: Option<String>,
    /// The path of the document key checked, e.g. `hostConfig.logging.logLevel.default` or
    /// `scriptFile`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// What was checked: `connection`, `queueName`, `schedule`, `trigger`, `identity` (how an
    /// identity-based connection signs in), `outputs`, `hostConfig`, `function`.
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

/// The checks of one function's configuration, as of now (a timer says when it runs next).
pub fn check_function(
    function: &str,
    spec: &FunctionSpec,
    settings: &BTreeMap<String, String>,
    host: &HostConfig,
) -> Vec<Check> {
    check_function_at(function, spec, settings, host, Utc::now())
}

/// [`check_function`] as of `now`.
pub fn check_function_at(
    function: &str,
    spec: &FunctionSpec,
    settings: &BTreeMap<String, String>,
    host: &HostConfig,
    now: DateTime<Utc>,
) -> Vec<Check> {
    let mut checks = Vec::new();
    let check = |binding: &Binding, subject: &str, status: CheckStatus, detail: String| Check {
        function: Some(function.to_string()),
        binding: Some(binding.name().to_string()),
        key: None,
        subject: subject.to_string(),
        status,
        detail,
    };
    for binding in &spec.bindings {
        let kind = binding.kind().azure_connection();
        if let Some(kind) = kind {
            let outcome = resolve(kind, binding.connection(), settings);
            checks.push(match outcome {
                Ok(spec) => check(binding, "connection", CheckStatus::Ok, spec.describe()),
                Err(err) => check(binding, "connection", CheckStatus::Error, err.to_string()),
            });
        }
        // Its kind says what it checks itself (a queue name, where failures go, a stream's
        // brokers and topic, a schedule's next occurrences).
        let section = host.extensions.section_of(binding.kind());
        let findings = binding
            .kind()
            .diagnose(binding, settings, section.as_deref(), now);
        for (subject, finding) in findings {
            checks.push(match finding {
                Finding::Ok(detail) => check(binding, subject, CheckStatus::Ok, detail),
                Finding::Warning(detail) => check(binding, subject, CheckStatus::Warning, detail),
                Finding::Error(problem) => check(binding, subject, CheckStatus::Error, problem),
            });
        }
        if binding.is_trigger() && !binding.has_runner() {
            checks.push(check(
                binding,
                "trigger",
                CheckStatus::Unsupported,
                format!(
                    "{} is accepted, but nothing in Shoal runs it yet: the function is never \
                     invoked and gets no instances",
                    binding.type_name()
                ),
            ));
        }
    }
    for (key, why) in spec.stored_only_keys() {
        checks.push(Check {
            function: Some(function.to_string()),
            binding: None,
            key: Some(key.to_string()),
            subject: "function".to_string(),
            status: CheckStatus::NoEffect,
            detail: format!("{key} is stored as written but has no effect: {why}"),
        });
    }
    if spec.excluded {
        checks.push(Check {
            function: Some(function.to_string()),
            binding: None,
            key: Some("excluded".to_string()),
            subject: "function".to_string(),
            status: CheckStatus::Ok,
            detail:
                "excluded: no listener runs and its webhook answers 404, as for a disabled function"
                    .to_string(),
        });
    }
    checks
}

/// The checks for the app's written `hostConfig` (already validated): one `noEffect` check
/// per key Shoal stores without acting on it, and one per legacy key saying which of today's
/// keys it set, or that it was overridden.
pub fn check_host_config(written: &Value) -> Vec<Check> {
    let check = |path: &str, status: CheckStatus, detail: String| Check {
        function: None,
        binding: None,
        key: Some(full_path(path)),
        subject: "hostConfig".to_string(),
        status,
        detail,
    };
    let mut checks: Vec<Check> = no_effect_keys(written)
        .into_iter()
        .map(|key| {
            let detail = format!(
                "{} is stored as written but has no effect: {}",
                full_path(&key.path),
                key.why
            );
            check(&key.path, CheckStatus::NoEffect, detail)
        })
        .collect();
    for key in legacy_keys(written) {
        let (status, detail) = if key.applied {
            (
                CheckStatus::Ok,
                format!(
                    "{} is the older extension's name of {}; its value is used",
                    full_path(&key.path),
                    full_path(key.replacement)
                ),
            )
        } else {
            (
                CheckStatus::NoEffect,
                format!(
                    "{} is overridden: {} (or an older key for it that Azure reads first) is written too and wins, as in Azure",
                    full_path(&key.path),
                    full_path(key.replacement)
                ),
            )
        };
        checks.push(check(&key.path, status, detail));
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
        let checks = check_function("f", &spec, &BTreeMap::new(), &HostConfig::default());
        let errors: Vec<_> = checks
            .iter()
            .filter(|c| c.status == CheckStatus::Error)
            .collect();
        assert_eq!(errors.len(), 1, "{checks:?}");
        assert_eq!(errors[0].subject, "connection");
    }

    #[test]
    fn a_queue_trigger_says_where_its_failed_messages_go() {
        let poison_check = |queue: &str| {
            let spec = function(
                json!([{"type": "queueTrigger", "direction": "in", "name": "m",
                "queueName": queue, "connection": ""}]),
            );
            let settings = BTreeMap::from([(
                "AzureWebJobsStorage".into(),
                "UseDevelopmentStorage=true".into(),
            )]);
            let checks = check_function("f", &spec, &settings, &HostConfig::default());
            let poison = checks.into_iter().find(|c| c.subject == "poisonQueue");
            let poison = poison.expect("a poisonQueue check");
            (poison.status, poison.detail)
        };
        assert_eq!(
            poison_check("orders"),
            (
                CheckStatus::Ok,
                "messages that fail 5 attempts go to orders-poison".into()
            )
        );
        // A poison queue drained by a function: none of its own, and that is expected.
        let (status, detail) = poison_check("orders-poison");
        assert_eq!(status, CheckStatus::Ok);
        assert!(
            detail.starts_with("no poison queue: queue orders-poison is itself a poison queue"),
            "{detail}"
        );
        // A name too long for one: a warning, since its failures are retried for ever.
        let (status, detail) = poison_check(&"q".repeat(60));
        assert_eq!(status, CheckStatus::Warning);
        assert!(
            detail.contains("would be longer than 63 characters"),
            "{detail}"
        );
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
        let checks = check_function("f", &spec, &settings, &HostConfig::default());
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
        let checks = check_function("f", &spec, &settings, &HostConfig::default());
        let queue = checks.iter().find(|c| c.subject == "queueName").unwrap();
        assert_eq!(queue.status, CheckStatus::Error);
    }

    #[test]
    fn a_timer_says_what_it_runs_on_or_why_it_cannot() {
        let schedule_check = |binding: serde_json::Value, settings: &[(&str, &str)]| {
            let spec = function(json!([binding]));
            let settings = settings
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            let checks = check_function("f", &spec, &settings, &HostConfig::default());
            let unsupported = checks
                .iter()
                .any(|c| c.subject == "trigger" && c.status == CheckStatus::Unsupported);
            assert!(!unsupported, "a timer is run: {checks:?}");
            let check = checks.into_iter().find(|c| c.subject == "schedule");
            let check = check.expect("a schedule check");
            (check.status, check.detail)
        };
        let timer = |schedule: &str| json!({"type": "timerTrigger", "direction": "in", "name": "t", "schedule": schedule});
        assert_eq!(
            schedule_check(
                timer("%Nightly%"),
                &[("Nightly", "0 30 2 * * *"), ("WEBSITE_TIME_ZONE", "Europe/London")]
            ),
            (
                CheckStatus::Ok,
                "runs on Cron: '0 30 2 * * *' in Europe/London; an occurrence missed while down runs once when back".into()
            )
        );
        let (status, detail) = schedule_check(timer("%Nightly%"), &[]);
        assert_eq!(
            (status, detail.as_str()),
            (CheckStatus::Error, "app setting Nightly is not set")
        );
        let (status, detail) = schedule_check(
            timer("0 30 2 * * *"),
            &[("WEBSITE_TIME_ZONE", "Eastern Standard Time")],
        );
        assert_eq!(status, CheckStatus::Error);
        assert!(detail.contains("write \"America/New_York\""), "{detail}");
        let every_second = json!({"type": "timerTrigger", "direction": "in", "name": "t",
            "schedule": "* * * * * *", "useMonitor": true});
        let (status, detail) = schedule_check(every_second, &[]);
        assert_eq!(status, CheckStatus::Warning);
        assert!(detail.contains("is not monitored"), "{detail}");
    }

    #[test]
    fn a_timer_lists_its_next_occurrences_in_the_apps_time_zone() {
        let spec = function(json!([
            {"type": "timerTrigger", "direction": "in", "name": "t", "schedule": "0 30 9 * * 1-5", "dataType": "binary"}
        ]));
        let settings =
            BTreeMap::from([("WEBSITE_TIME_ZONE".to_owned(), "Europe/Berlin".to_owned())]);
        // Friday 2026-03-27 12:00 UTC; Berlin moves to summer time on Sunday the 29th.
        let now = "2026-03-27T12:00:00Z".parse().unwrap();
        let checks = check_function_at("f", &spec, &settings, &HostConfig::default(), now);
        let found = |subject: &str| {
            let check = checks.iter().find(|c| c.subject == subject);
            let check = check.unwrap_or_else(|| panic!("no {subject} check in {checks:?}"));
            (check.status, check.detail.as_str())
        };
        assert_eq!(
            found("occurrences"),
            (
                CheckStatus::Ok,
                "next: 2026-03-30 09:30:00 +02:00, 2026-03-31 09:30:00 +02:00, 2026-04-01 09:30:00 +02:00"
            )
        );
        // A dataType is accepted as Azure accepts it, and said to do nothing.
        assert_eq!(
            found("dataType"),
            (
                CheckStatus::Warning,
                "dataType binary has no effect: a timer's value is always its schedule status"
            )
        );
        // A schedule that does not resolve lists no occurrences; its schedule check says why.
        let unresolved = function(json!([
            {"type": "timerTrigger", "direction": "in", "name": "t", "schedule": "%Nightly%"}
        ]));
        let checks = check_function_at("f", &unresolved, &settings, &HostConfig::default(), now);
        assert!(
            checks.iter().all(|c| c.subject != "occurrences"),
            "{checks:?}"
        );
    }

    #[test]
    fn host_config_keys_without_effect_are_listed_by_path() {
        let written = json!({
            "version": "2.0",
            "logging": {"logLevel": {"default": "Warning"}},
            "customHandler": {"description": {"defaultExecutablePath": "app"}, "enableForwardingHttpRequest": true},
            "extensions": {"queues": {"batchSize": 8}, "serviceBus": {
                "messageHandlerOptions": {"maxConcurrentCalls": 4},
                "batchOptions": {"maxMessageCount": 5}, "maxMessageBatchSize": 6
            }}
        });
        let checks = check_host_config(&written);
        let got: Vec<(&str, CheckStatus)> = checks
            .iter()
            .map(|c| (c.key.as_deref().unwrap(), c.status))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "hostConfig.customHandler.description.defaultExecutablePath",
                    CheckStatus::NoEffect
                ),
                ("hostConfig.logging.logLevel.default", CheckStatus::NoEffect),
                ("hostConfig.version", CheckStatus::NoEffect),
                (
                    "hostConfig.extensions.serviceBus.messageHandlerOptions.maxConcurrentCalls",
                    CheckStatus::Ok
                ),
                (
                    "hostConfig.extensions.serviceBus.batchOptions.maxMessageCount",
                    CheckStatus::NoEffect
                ),
            ]
        );
        assert!(
            checks
                .iter()
                .all(|c| c.subject == "hostConfig" && c.function.is_none())
        );
        assert!(
            checks[0].detail.contains("handler.url"),
            "{}",
            checks[0].detail
        );
        assert!(check_host_config(&json!({})).is_empty());
    }

    #[test]
    fn function_json_keys_without_effect_are_listed() {
        let spec = FunctionSpec::parse(
            "f",
            &json!({"scriptFile": "run.py", "bindings": [
                {"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "orders",
                 "connection": "Missing"}
            ]}),
        )
        .unwrap()
        .spec;
        let checks = check_function("f", &spec, &BTreeMap::new(), &HostConfig::default());
        let script = checks
            .iter()
            .find(|c| c.key.as_deref() == Some("scriptFile"))
            .unwrap();
        assert_eq!(script.status, CheckStatus::NoEffect);
        assert_eq!(script.function.as_deref(), Some("f"));
        assert!(script.binding.is_none());
    }

    #[test]
    fn retry_is_listed_without_effect_on_an_http_trigger_only() {
        let retry =
            json!({"strategy": "fixedDelay", "maxRetryCount": 2, "delayInterval": "00:00:01"});
        let no_effect = |trigger: Value| {
            let spec = FunctionSpec::parse("f", &json!({"bindings": [trigger], "retry": retry}))
                .unwrap()
                .spec;
            check_function("f", &spec, &BTreeMap::new(), &HostConfig::default())
                .into_iter()
                .any(|c| c.key.as_deref() == Some("retry") && c.status == CheckStatus::NoEffect)
        };
        assert!(no_effect(
            json!({"type": "httpTrigger", "direction": "in", "name": "req", "authLevel": "anonymous"})
        ));
        assert!(!no_effect(
            json!({"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "orders"})
        ));
    }

    #[test]
    fn a_stream_binding_says_what_it_reads_or_writes_or_what_is_missing() {
        let spec = FunctionSpec::parse(
            "f",
            &json!({"bindings": [
                {"type": "kafkaTrigger", "direction": "in", "name": "e",
                 "brokerList": "%Brokers%", "topic": "orders"},
                {"type": "kafka", "direction": "out", "name": "o",
                 "brokerList": "%Missing%", "topic": "shipped"}
            ]}),
        )
        .unwrap()
        .spec;
        let settings = BTreeMap::from([("Brokers".to_owned(), "b:9092".to_owned())]);
        let checks = check_function("f", &spec, &settings, &HostConfig::default());
        let stream: Vec<(&str, CheckStatus, &str)> = checks
            .iter()
            .filter(|c| c.subject == "stream")
            .map(|c| (c.binding.as_deref().unwrap(), c.status, c.detail.as_str()))
            .collect();
        assert_eq!(
            stream,
            [
                (
                    "e",
                    CheckStatus::Ok,
                    "reads orders on b:9092 (consumer group $Default)"
                ),
                (
                    "o",
                    CheckStatus::Error,
                    "brokerList: app setting Missing is not set"
                ),
            ]
        );
        assert!(!checks.iter().any(|c| c.status == CheckStatus::Unsupported));
    }

    #[test]
    fn a_trigger_nothing_runs_says_its_function_gets_no_instances() {
        let trigger_checks = |binding: Value| {
            let spec = function(json!([binding]));
            check_function("f", &spec, &BTreeMap::new(), &HostConfig::default())
                .into_iter()
                .filter(|c| c.subject == "trigger")
                .map(|c| (c.status, c.detail))
                .collect::<Vec<_>>()
        };
        let cosmos = json!({"type": "cosmosDBTrigger", "direction": "in", "name": "d",
                            "databaseName": "db", "containerName": "c", "connection": "Cosmos"});
        assert_eq!(
            trigger_checks(cosmos),
            [(
                CheckStatus::Unsupported,
                "cosmosDBTrigger is accepted, but nothing in Shoal runs it yet: the function is \
                 never invoked and gets no instances"
                    .to_owned()
            )]
        );
        let queue =
            json!({"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "orders"});
        assert_eq!(trigger_checks(queue), []);
    }
}
