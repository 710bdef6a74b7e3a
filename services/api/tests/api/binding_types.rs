//! `GET /v1/bindingTypes`: the schema a client builds bindings from is the one validation
//! reads, so a binding made from it field by field is accepted.

use reqwest::{Method, StatusCode};
use serde_json::{Map, Value, json};
use shoal_api::identity::Role;

use crate::helpers::{Fetch, TestApp};

/// A binding of `item`'s type from its schema alone: every required property, each from its
/// example or `given`.
fn from_schema(item: &Value, given: &[(&str, Value)]) -> Value {
    let mut binding = Map::new();
    binding.insert("type".into(), item["type"].clone());
    binding.insert("direction".into(), item["direction"].clone());
    for required in item["schema"]["required"].as_array().unwrap() {
        let required = required.as_str().unwrap();
        let value = given
            .iter()
            .find(|(name, _)| *name == required)
            .map(|(_, value)| value.clone())
            .or_else(|| {
                let example = &item["schema"]["properties"][required]["examples"][0];
                (!example.is_null()).then(|| example.clone())
            })
            .unwrap_or_else(|| panic!("no value for {required} of {}", item["type"]));
        binding.insert(required.into(), value);
    }
    Value::Object(binding)
}

#[tokio::test]
async fn any_signed_in_caller_reads_every_type_with_its_schema() {
    let app = TestApp::spawn().await;
    let anonymous = app
        .request(Method::GET, "/v1/bindingTypes", None)
        .fetch()
        .await;
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);

    app.put_tenant("contoso").await;
    let reader = app.token_for("contoso", Role::Reader);
    let list = app
        .request(Method::GET, "/v1/bindingTypes", Some(&reader))
        .fetch_json()
        .await;
    let types: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["type"].as_str().unwrap())
        .collect();
    for expected in [
        "queueTrigger",
        "serviceBusTrigger",
        "timerTrigger",
        "rabbitMQTrigger",
        "rabbitMQ",
    ] {
        assert!(types.contains(&expected), "{expected} in {types:?}");
    }
    let rabbit = &list["items"][types.iter().position(|t| *t == "rabbitMQTrigger").unwrap()];
    assert_eq!(rabbit["direction"], "in");
    assert_eq!(
        rabbit["schema"]["properties"]["connectionStringSetting"]["type"],
        "string"
    );
}

#[tokio::test]
async fn functions_built_from_the_schemas_alone_are_accepted() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    let list = app
        .get("/v1/bindingTypes")
        .await
        .json::<Value>()
        .await
        .unwrap();
    let item = |t: &str| {
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["type"] == t)
            .unwrap()
            .clone()
    };
    // What a form asks for beyond the schema's examples: the name, and values that the
    // schema's patterns accept.
    let cases = [
        ("queueTrigger", vec![("name", json!("order"))]),
        (
            "timerTrigger",
            vec![
                ("name", json!("tick")),
                ("schedule", json!("0 */5 * * * *")),
            ],
        ),
        (
            "rabbitMQTrigger",
            vec![("name", json!("msg")), ("queueName", json!("orders"))],
        ),
    ];
    for (type_name, given) in cases {
        let trigger = from_schema(&item(type_name), &given);
        let function = json!({"bindings": [trigger]});
        let response = app
            .admin(
                Method::PUT,
                &format!(
                    "/v1/tenants/contoso/apps/orders/functions/{}",
                    type_name.to_lowercase()
                ),
            )
            .json(&function)
            .fetch()
            .await;
        let status = response.status();
        let body: Value = response.json().await.unwrap();
        assert!(status.is_success(), "{type_name}: {status} {body}");
    }
}
