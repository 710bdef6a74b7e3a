//! Which of an app's functions scale, from the app's and functions' specifications as stored.

use serde_json::{Value, json};
use shoal_domain::apps::AppSpec;
use shoal_domain::functions::FunctionSpec;

use super::*;

/// An app's functions by name, as written.
pub(crate) type Functions = Vec<(&'static str, Value)>;

pub(crate) fn queue() -> Value {
    json!({"bindings": [
        {"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "orders"}
    ]})
}

pub(crate) fn cosmos() -> Value {
    json!({"bindings": [
        {"type": "cosmosDBTrigger", "direction": "in", "name": "docs", "databaseName": "db",
         "containerName": "items", "connection": "Cosmos"}
    ]})
}

pub(crate) fn http() -> Value {
    json!({"bindings": [{"type": "httpTrigger", "direction": "in", "name": "req"}]})
}

/// A `rabbitMQTrigger` on the broker the setting `Rabbit` names.
pub(crate) fn rabbit() -> Value {
    json!({"bindings": [
        {"type": "rabbitMQTrigger", "direction": "in", "name": "order", "queueName": "orders",
         "connectionStringSetting": "Rabbit"}
    ]})
}

/// The app `t/a` (limit 10) with `functions`, parsed as the catalog parses stored ones.
pub(crate) fn app(functions: &[(&str, Value)]) -> ScalableApp {
    app_with_host(Value::Null, functions)
}

/// [`app`] with `host_config` as its `hostConfig` (none when null).
pub(crate) fn app_with_host(host_config: Value, functions: &[(&str, Value)]) -> ScalableApp {
    let mut body = json!({"handler": {"url": "http://127.0.0.1:7071"},
                          "appSettings": {"AzureWebJobsStorage": "UseDevelopmentStorage=true",
                                          "Rabbit": "amqp://shoal:secret@127.0.0.1:5672/%2f"},
                          "scale": {"limit": 10}});
    if !host_config.is_null() {
        body["hostConfig"] = host_config;
    }
    let spec = AppSpec::parse("a", &body).expect("test app is valid").spec;
    let functions: Vec<(&str, FunctionSpec)> = functions
        .iter()
        .map(|(name, body)| {
            let spec = FunctionSpec::parse(name, body).expect("test function is valid");
            (*name, spec.spec)
        })
        .collect();
    let key = AppKey {
        tenant: "t".into(),
        app: "a".into(),
    };
    scalable_app(&key, &spec, functions.iter().map(|(n, f)| (*n, f)))
}

#[test]
fn a_function_nothing_runs_does_not_scale() {
    let names =
        |app: ScalableApp| -> Vec<String> { app.functions.into_iter().map(|f| f.name).collect() };
    let cases: [(&str, Functions, Vec<&str>); 4] = [
        ("queue", vec![("q", queue())], vec!["q"]),
        ("cosmos alone", vec![("c", cosmos())], vec![]),
        (
            "queue and cosmos",
            vec![("q", queue()), ("c", cosmos())],
            vec!["q"],
        ),
        ("http", vec![("h", http())], vec![]),
    ];
    for (name, functions, want) in cases {
        assert_eq!(names(app(&functions)), want, "{name}");
    }
}

#[test]
fn a_timer_keeps_its_running_app_at_one_instance_and_asks_for_no_more() {
    let timer = json!({"bindings": [
        {"type": "timerTrigger", "direction": "in", "name": "t", "schedule": "0 */5 * * * *"}
    ]});
    let with_timer = app(&[("t", timer.clone())]);
    assert_eq!(with_timer.minimum, 1);
    assert!(with_timer.functions.is_empty(), "nothing to scale on");
    assert_eq!(app(&[("q", queue())]).minimum, 0);
    let disabled = json!({"disabled": true, "bindings": timer["bindings"].clone()});
    assert_eq!(
        app(&[("t", disabled)]).minimum,
        0,
        "a disabled timer runs nothing"
    );
}
