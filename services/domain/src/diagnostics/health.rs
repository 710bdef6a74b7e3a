//! An app's health as the apps list shows it: the worst of the checks the API can make without
//! reaching out to a storage account or identity provider (connections, `%Setting%` names,
//! circuit breakers, undeclared outputs, `hostConfig`) and of what its live listeners report
//! (a listener stopped or in error, a failed token request). The app's diagnostics make every
//! check, probes included; this is the summary a list of many apps can afford.

use serde::Serialize;
use utoipa::ToSchema;

use super::{Check, CheckStatus};
use crate::workers::ListenerReport;

/// Most reasons a summary lists (errors first); the counts cover all of them.
pub const MAX_REASONS: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum HealthState {
    /// No check in error or warning.
    Healthy,
    /// Works, but not as the tenant most likely intends (e.g. a function paused by hand).
    Warning,
    /// Something stops a listener: a connection that does not resolve, a breaker opened by
    /// failures, a listener that stopped or cannot get a token.
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HealthSummary {
    pub state: HealthState,
    pub errors: u32,
    pub warnings: u32,
    /// The first errors, then warnings, as `function: detail` (at most three); the app's
    /// diagnostics have them all.
    pub reasons: Vec<String>,
}

/// Checks for what the live listeners of an app report: a listener that stopped, is in error
/// or is stuck, and a failed token request. A function that already has an error from its
/// configuration (`configured`) is not reported twice: its listener stopped for that reason.
pub fn check_listeners(listeners: &[ListenerReport], configured: &[Check]) -> Vec<Check> {
    let has_error = |function: &str| {
        configured.iter().any(|c| {
            c.status == CheckStatus::Error
                && c.function
                    .as_deref()
                    .is_some_and(|f| f.eq_ignore_ascii_case(function))
        })
    };
    let mut checks: Vec<Check> = Vec::new();
    for listener in listeners {
        if has_error(&listener.function) {
            continue;
        }
        // `stuck`: a Service Bus session listener some of whose slots the broker stopped
        // answering (they retry on new connections; the rest go on).
        let problem = if ["stopped", "error", "stuck"]
            .iter()
            .any(|p| listener.status.starts_with(p))
        {
            Some(format!(
                "listener on {}: {}",
                listener.source, listener.status
            ))
        } else {
            listener
                .last_token_error
                .as_ref()
                .map(|error| format!("token request failed: {error}"))
        };
        let Some(detail) = problem else { continue };
        // Every instance reports its own listener: one check per function and problem.
        if checks.iter().any(|c| {
            c.detail == detail && c.function.as_deref() == Some(listener.function.as_str())
        }) {
            continue;
        }
        checks.push(Check {
            function: Some(listener.function.clone()),
            binding: None,
            key: None,
            subject: "listener".to_owned(),
            status: CheckStatus::Error,
            detail,
        });
    }
    checks
}

/// The summary of `checks`: errors and warnings counted (`ok` and `noEffect` do not affect
/// health), the worst of them the state. A trigger nothing runs (`unsupported`) counts as a
/// warning: its function is never invoked, which the tenant most likely does not intend.
pub fn summarize(checks: &[Check]) -> HealthSummary {
    let of = |status: CheckStatus| checks.iter().filter(move |c| c.status == status);
    let warning = || of(CheckStatus::Warning).chain(of(CheckStatus::Unsupported));
    let errors = of(CheckStatus::Error).count();
    let warnings = warning().count();
    let reasons = of(CheckStatus::Error)
        .chain(warning())
        .take(MAX_REASONS)
        .map(|c| match &c.function {
            Some(function) => format!("{function}: {}", c.detail),
            None => c.detail.clone(),
        })
        .collect();
    let state = if errors > 0 {
        HealthState::Error
    } else if warnings > 0 {
        HealthState::Warning
    } else {
        HealthState::Healthy
    };
    HealthSummary {
        state,
        errors: u32::try_from(errors).unwrap_or(u32::MAX),
        warnings: u32::try_from(warnings).unwrap_or(u32::MAX),
        reasons,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(function: Option<&str>, status: CheckStatus, detail: &str) -> Check {
        Check {
            function: function.map(str::to_owned),
            binding: None,
            key: None,
            subject: "connection".to_owned(),
            status,
            detail: detail.to_owned(),
        }
    }

    fn listener(function: &str, status: &str, token_error: Option<&str>) -> ListenerReport {
        serde_json::from_value(serde_json::json!({
            "tenant": "t", "app": "a", "instance": 0, "function": function,
            "trigger": "queueTrigger", "source": "orders", "status": status,
            "received": 0, "succeeded": 0, "failed": 0, "poisoned": 0, "inFlight": 0,
            "currentBackoffMs": 0, "lastTokenError": token_error,
            "undeclaredOutputs": 0, "undeclaredOutputNames": [],
        }))
        .unwrap()
    }

    #[test]
    fn the_worst_check_is_the_state_and_errors_lead_the_reasons() {
        use CheckStatus::*;
        let cases: [(Vec<Check>, HealthState, u32, u32); 5] = [
            (vec![], HealthState::Healthy, 0, 0),
            (vec![check(None, NoEffect, "x")], HealthState::Healthy, 0, 0),
            (
                vec![
                    check(None, NoEffect, "x"),
                    check(Some("f"), Unsupported, "y"),
                ],
                HealthState::Warning,
                0,
                1,
            ),
            (
                vec![
                    check(Some("f"), Ok, "fine"),
                    check(Some("f"), Warning, "paused"),
                ],
                HealthState::Warning,
                0,
                1,
            ),
            (
                vec![
                    check(Some("f"), Warning, "paused"),
                    check(Some("g"), Error, "no connection"),
                ],
                HealthState::Error,
                1,
                1,
            ),
        ];
        for (checks, state, errors, warnings) in cases {
            let summary = summarize(&checks);
            assert_eq!(
                (summary.state, summary.errors, summary.warnings),
                (state, errors, warnings),
                "{checks:?}"
            );
        }
        let summary = summarize(&[
            check(Some("f"), Warning, "paused"),
            check(Some("g"), Error, "no connection"),
        ]);
        assert_eq!(summary.reasons, ["g: no connection", "f: paused"]);
    }

    #[test]
    fn reasons_are_capped_but_counts_are_not() {
        let checks: Vec<Check> = (0..5)
            .map(|i| check(None, CheckStatus::Error, &format!("e{i}")))
            .collect();
        let summary = summarize(&checks);
        assert_eq!(summary.errors, 5);
        assert_eq!(summary.reasons, ["e0", "e1", "e2"]);
    }

    #[test]
    fn stopped_listeners_and_token_errors_are_errors_once_per_function() {
        let listeners = [
            listener(
                "ship",
                "stopped: connection OrdersStorage does not resolve",
                None,
            ),
            listener(
                "ship",
                "stopped: connection OrdersStorage does not resolve",
                None,
            ),
            listener("bill", "listening", Some("AADSTS700016: unknown client")),
            listener("fine", "listening", None),
            listener(
                "held",
                "stuck: 1 of 8 session slots got no answer from the broker (accept next \
                 session: no answer within 65s); they retry on new connections",
                None,
            ),
            listener(
                "paused",
                "paused: the function's circuit breaker is open",
                None,
            ),
        ];
        let checks = check_listeners(&listeners, &[]);
        let details: Vec<(&str, &str)> = checks
            .iter()
            .map(|c| (c.function.as_deref().unwrap(), c.detail.as_str()))
            .collect();
        assert_eq!(
            details,
            [
                (
                    "ship",
                    "listener on orders: stopped: connection OrdersStorage does not resolve"
                ),
                ("bill", "token request failed: AADSTS700016: unknown client"),
                (
                    "held",
                    "listener on orders: stuck: 1 of 8 session slots got no answer from the \
                     broker (accept next session: no answer within 65s); they retry on new \
                     connections"
                ),
            ]
        );
        assert!(checks.iter().all(|c| c.status == CheckStatus::Error));
    }

    #[test]
    fn a_listener_stopped_by_a_configuration_error_is_not_counted_twice() {
        let configured = [check(Some("SHIP"), CheckStatus::Error, "no connection")];
        let listeners = [listener("ship", "stopped: no connection", None)];
        assert!(check_listeners(&listeners, &configured).is_empty());
    }
}
