//! Tests for the `timerTrigger` binding, kept apart from `tests.rs`, which the other types fill.

use super::*;
use crate::binding_kinds::timer::{TriggerBinding, timer_of};
use serde_json::json;

/// The timer binding read into its type (the binding table's `timerTrigger`).
fn timer_binding(binding: &Binding) -> TriggerBinding {
    timer_of(binding).expect("a timerTrigger").unwrap()
}

fn errors(value: Value) -> Vec<(String, String)> {
    parse_bindings(&value, "bindings")
        .unwrap_err()
        .errors
        .into_iter()
        .map(|e| (e.path, e.message))
        .collect()
}

#[test]
fn an_azure_functions_timer_function_json_is_accepted_as_written() {
    let function_json = json!({"bindings": [
        {"name": "myTimer", "type": "timerTrigger", "direction": "in", "schedule": "0 */5 * * * *"}
    ]});
    let bindings = parse_bindings(&function_json["bindings"], "bindings").unwrap();
    let trigger = &bindings[0];
    let timer = timer_binding(trigger);
    assert_eq!(
        (timer.name.as_str(), timer.schedule.as_str()),
        ("myTimer", "0 */5 * * * *")
    );
    assert_eq!((timer.run_on_startup, timer.use_monitor), (false, None));
    assert_eq!(
        (
            trigger.type_name(),
            trigger.direction(),
            trigger.connection()
        ),
        ("timerTrigger", Direction::In, None)
    );
    // Accepted, stored and run by the worker's timer listener.
    assert!(trigger.is_trigger() && trigger.has_runner());
    assert_eq!(
        serde_json::to_value(&bindings).unwrap(),
        function_json["bindings"]
    );
}

#[test]
fn timer_properties_roundtrip_with_outputs() {
    let written = json!([
        {"type": "timerTrigger", "direction": "in", "name": "nightly", "schedule": "%NightlySchedule%",
         "runOnStartup": true, "useMonitor": false},
        {"type": "queue", "direction": "out", "name": "$return", "queueName": "reports-{sys.UtcNow:yyyyMMdd}"}
    ]);
    let bindings = parse_bindings(&written, "bindings").unwrap();
    let timer = timer_binding(&bindings[0]);
    assert!(timer.run_on_startup);
    assert_eq!(timer.use_monitor, Some(false));
    assert_eq!(serde_json::to_value(&bindings).unwrap(), written);
    let stored: Vec<Binding> = serde_json::from_value(written).unwrap();
    assert_eq!(stored, bindings);
}

#[test]
fn timer_bindings_are_refused_with_the_field_path() {
    let cases = [
        (
            json!({"type": "timerTrigger", "direction": "in", "name": "t", "schedule": "0 61 * * * *"}),
            (
                "bindings[0].schedule",
                "is not a valid cron expression: the minute field \"61\": 61 is out of range (0-59)",
            ),
        ),
        (
            json!({"type": "timerTrigger", "direction": "in", "name": "t", "schedule": "0 0 0 * * * *"}),
            (
                "bindings[0].schedule",
                "is not a valid cron expression: expected 6 fields \"{second} {minute} {hour} {day} {month} {day-of-week}\" (or 5, without seconds), found 7",
            ),
        ),
        (
            json!({"type": "timerTrigger", "direction": "in", "name": "t", "schedule": "00:00:00"}),
            (
                "bindings[0].schedule",
                "is a TimeSpan under one second (00:00:00); the shortest schedule is 00:00:01",
            ),
        ),
        (
            json!({"type": "timerTrigger", "direction": "in", "name": "t", "schedule": "%Bad Name%"}),
            (
                "bindings[0].schedule",
                "%Bad Name% must name an app setting: may contain only letters, digits, '_', '.', '-' and ':'",
            ),
        ),
        (
            json!({"type": "timerTrigger", "direction": "in", "name": "t"}),
            ("bindings[0].schedule", "is required"),
        ),
        (
            json!({"type": "timerTrigger", "direction": "in", "name": "t", "schedule": "0 0 * * * *", "scheduleExpression": "x"}),
            (
                "bindings[0].scheduleExpression",
                "unknown field \"scheduleExpression\"",
            ),
        ),
        (
            json!({"type": "timerTrigger", "direction": "in", "name": "t", "schedule": "0 0 * * * *", "runOnStartup": "yes"}),
            ("bindings[0].runOnStartup", "expected a boolean"),
        ),
        (
            json!({"type": "timerTrigger", "direction": "out", "name": "t", "schedule": "0 0 * * * *"}),
            ("bindings[0].direction", "must be \"in\" for timerTrigger"),
        ),
        (
            json!({"type": "TimerTrigger", "direction": "in", "name": "t", "schedule": "0 0 * * * *"}),
            (
                "bindings[0].type",
                "unknown binding type \"TimerTrigger\", did you mean \"timerTrigger\"?",
            ),
        ),
    ];
    for (binding, (path, message)) in cases {
        let found = errors(json!([binding]));
        assert!(
            found
                .iter()
                .any(|(p, m)| p == path && m.starts_with(message)),
            "{binding}: {found:?}"
        );
    }
}

#[test]
fn a_timer_functions_output_names_use_its_binding_data_only() {
    let with_output = |queue_name: &str| {
        json!([
            {"type": "timerTrigger", "direction": "in", "name": "t", "schedule": "0 0 * * * *"},
            {"type": "queue", "direction": "out", "name": "out", "queueName": queue_name}
        ])
    };
    for accepted in [
        "reports-{DateTime:yyyyMMdd}",
        "reports-{rand-guid}",
        "{sys.MethodName}-{sys.UtcNow:yyyy}",
        "{TimerTrigger}",
    ] {
        let written = with_output(accepted);
        assert!(
            parse_bindings(&written, "bindings").is_ok(),
            "{accepted}: {:?}",
            errors(written)
        );
    }
    let refused = [
        (
            "out-{Id}",
            "{Id}: Id is binding data of queueTrigger, not of timerTrigger, which has {TimerTrigger}",
        ),
        (
            "out-{region}",
            "{region}: a timerTrigger has no message, so no JSON properties; it has {TimerTrigger}",
        ),
    ];
    for (queue_name, want) in refused {
        let found = errors(with_output(queue_name));
        assert_eq!(
            found,
            vec![("bindings[1].queueName".to_owned(), want.to_owned())],
            "{queue_name}"
        );
    }
}
