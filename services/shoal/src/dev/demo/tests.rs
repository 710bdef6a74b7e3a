use serde_json::{Value, json};
use shoal_domain::functions::FunctionSpec;

use super::*;

fn services(service_bus: bool) -> LocalServices {
    LocalServices {
        storage_connection: "UseDevelopmentStorage=true".into(),
        queue_endpoint: "http://127.0.0.1:10001/devstoreaccount1".into(),
        queue_sas: "sv=2023-01-03&sig=abc".into(),
        service_bus_connection: service_bus
            .then(|| "Endpoint=sb://127.0.0.1:5672;UseDevelopmentEmulator=true".into()),
    }
}

const API: ApiAccess = ApiAccess {
    base: "http://127.0.0.1:8080",
    invoker_token: "invoker-token",
};

fn names(kinds: impl Iterator<Item = &'static dyn DemoKind>) -> Vec<&'static str> {
    kinds.map(|k| k.function()).collect()
}

/// The function names are the handler's routes, so each kind has its own.
#[test]
fn the_demo_has_greet_welcome_and_orders_once_each() {
    assert_eq!(names(KINDS.iter().copied()), ["greet", "welcome", "orders"]);
}

#[test]
fn every_function_json_is_one_the_api_accepts() {
    for kind in KINDS {
        let written = FunctionSpec::parse(kind.function(), &kind.function_json());
        assert!(written.is_ok(), "{}: {written:?}", kind.function());
    }
}

/// A binding's `connection` names an app setting; the kind that writes the binding sets it.
#[test]
fn every_connection_a_binding_names_is_an_app_setting_of_its_kind() {
    let services = services(true);
    for kind in KINDS {
        let settings = merged_settings([*kind].into_iter(), &services).unwrap();
        let json = kind.function_json();
        for binding in json["bindings"].as_array().unwrap() {
            if let Some(connection) = binding["connection"].as_str() {
                assert!(
                    settings.contains_key(connection),
                    "{}: {connection} in {settings:?}",
                    kind.function()
                );
            }
        }
    }
}

#[test]
fn with_every_service_running_the_app_gets_storage_and_service_bus_settings() {
    let services = services(true);
    let settings = merged_settings(running(&services), &services).unwrap();
    assert_eq!(
        Value::Object(settings),
        json!({
            "AzureWebJobsStorage": "UseDevelopmentStorage=true",
            "ServiceBus": "Endpoint=sb://127.0.0.1:5672;UseDevelopmentEmulator=true",
        })
    );
}

#[test]
fn without_the_service_bus_stand_in_orders_is_left_out() {
    let services = services(false);
    assert_eq!(names(running(&services)), ["greet", "welcome"]);
    let settings = merged_settings(running(&services), &services).unwrap();
    assert!(!settings.contains_key("ServiceBus"), "{settings:?}");
    let banner = instructions(&services, &API);
    assert!(!banner.contains("Service Bus"), "{banner}");
    assert!(banner.contains("function greet"), "{banner}");
}

/// The integration tests run the commands that follow these lines as printed.
#[test]
fn the_banner_prints_each_kinds_commands_after_the_lines_the_tests_look_for() {
    let banner = instructions(&services(true), &API);
    for line in [
        "Enqueue a message (base64, as Azure Functions expects):",
        "e.g. Python:",
        "and read the receipts:",
        "  export SHOAL_INVOKE_TOKEN=invoker-token",
        "  connection string Endpoint=sb://127.0.0.1:5672;UseDevelopmentEmulator=true",
    ] {
        assert!(
            banner.lines().any(|l| l.ends_with(line)),
            "`{line}` in {banner}"
        );
    }
    assert!(
        banner.contains(
            "'http://127.0.0.1:10001/devstoreaccount1/demo-in/messages?sv=2023-01-03&sig=abc'"
        ),
        "{banner}"
    );
    // Kinds are set apart by one blank line, and the banner goes on after the last.
    assert!(!banner.contains("\n\n\n"), "{banner}");
    assert!(banner.ends_with("'\n"), "{banner}");
}

#[test]
fn the_handler_routes_each_function_to_its_kind() {
    for kind in KINDS {
        assert_eq!(
            kind_of(kind.function()).map(|k| k.function()),
            Some(kind.function())
        );
    }
    assert!(kind_of("added-by-hand").is_none());
}

#[test]
fn greet_answers_a_queue_message_with_a_greeting_on_its_output() {
    let answer = kind_of("greet").unwrap().answer(&json!({
        "Data": {"msg": "world"},
        "Metadata": {"DequeueCount": 2},
    }));
    assert_eq!(
        answer,
        json!({
            "Outputs": {"result": {"greeting": "Hello, world!", "function": "greet", "attempt": 2}},
            "Logs": ["greeted \"world\" (attempt 2)"],
        })
    );
}

#[test]
fn orders_answers_a_message_with_a_receipt_reading_its_json_body() {
    let answer = kind_of("orders").unwrap().answer(&json!({
        "Data": {"order": "{\"item\": \"tea\"}"},
        "Metadata": {"MessageId": "m-1", "DeliveryCount": 1},
    }));
    assert_eq!(
        answer,
        json!({
            "Outputs": {"receipt": {
                "Body": {"received": {"item": "tea"}, "function": "orders"},
                "CorrelationId": "m-1",
                "ApplicationProperties": {"deliveryCount": 1},
            }},
            "Logs": ["received order \"m-1\" (delivery 1)"],
        })
    );
}

#[test]
fn orders_keeps_a_body_that_is_not_json_as_written() {
    let answer = kind_of("orders").unwrap().answer(&json!({
        "Data": {"order": "tea, please"},
        "Metadata": {},
    }));
    assert_eq!(
        answer["Outputs"]["receipt"]["Body"]["received"],
        "tea, please"
    );
}

#[test]
fn welcome_answers_its_caller_through_the_res_output() {
    let answer = kind_of("welcome").unwrap().answer(&json!({
        "Data": {"req": {"Query": {"name": "world"}}},
    }));
    assert_eq!(answer["Outputs"]["res"]["statusCode"], 200);
    assert_eq!(
        answer["Outputs"]["res"]["body"],
        json!({"greeting": "Welcome, world!", "function": "welcome"})
    );
    let anonymous = kind_of("welcome")
        .unwrap()
        .answer(&json!({"Data": {"req": {}}}));
    assert_eq!(
        anonymous["Outputs"]["res"]["body"]["greeting"],
        "Welcome, stranger!"
    );
}

/// A kind that wants `AzureWebJobsStorage` to be some other account.
struct OtherStorage;

impl DemoKind for OtherStorage {
    fn function(&self) -> &'static str {
        "elsewhere"
    }
    fn function_json(&self) -> Value {
        json!({"bindings": []})
    }
    fn app_settings(&self, _services: &LocalServices) -> Vec<(&'static str, String)> {
        vec![("AzureWebJobsStorage", "AccountName=other".into())]
    }
    fn answer(&self, _request: &Value) -> Value {
        Value::Null
    }
    fn hints(&self, _services: &LocalServices, _api: &ApiAccess) -> String {
        String::new()
    }
}

#[test]
fn kinds_that_want_different_values_for_one_setting_are_refused() {
    let services = services(true);
    let kinds: [&dyn DemoKind; 2] = [&storage_queue::Greet, &OtherStorage];
    let err = merged_settings(kinds.into_iter(), &services).unwrap_err();
    assert!(err.to_string().contains("AzureWebJobsStorage"), "{err}");
    // Agreeing on it is fine.
    let kinds: [&dyn DemoKind; 2] = [&storage_queue::Greet, &storage_queue::Greet];
    assert!(merged_settings(kinds.into_iter(), &services).is_ok());
}
