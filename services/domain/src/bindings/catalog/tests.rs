use serde_json::json;

use super::*;
use crate::bindings::{known_type_names, parse_binding};

fn schemas() -> Vec<BindingType> {
    binding_types()
}

/// Every object key anywhere in `value`.
fn keys(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            for (key, inner) in object {
                found.push(key.clone());
                keys(inner, found);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| keys(item, found)),
        _ => {}
    }
}

#[test]
fn every_known_type_is_listed_once_in_the_order_errors_list_them() {
    let listed: Vec<&str> = schemas().iter().map(|t| t.type_name).collect();
    assert_eq!(listed, known_type_names().collect::<Vec<_>>());
    let cosmos = schemas()
        .into_iter()
        .find(|t| t.type_name == "cosmosDBTrigger");
    assert_eq!(cosmos.map(|t| (t.direction, t.runs)), Some(("in", false)));
    let rabbit = schemas().into_iter().find(|t| t.type_name == "rabbitMQ");
    assert_eq!(rabbit.map(|t| (t.direction, t.runs)), Some(("out", true)));
}

#[test]
fn schemas_are_self_contained_objects_naming_their_properties() {
    for binding_type in schemas() {
        let schema = &binding_type.schema;
        let mut found = Vec::new();
        keys(schema, &mut found);
        assert!(
            !found
                .iter()
                .any(|k| k == "$ref" || k == "allOf" || k == "oneOf"),
            "{}: {schema}",
            binding_type.type_name
        );
        let properties = schema["properties"].as_object();
        let properties =
            properties.unwrap_or_else(|| panic!("{}: {schema}", binding_type.type_name));
        assert!(
            properties.contains_key("name"),
            "{}",
            binding_type.type_name
        );
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        assert!(
            required.contains(&"name"),
            "{}: {required:?}",
            binding_type.type_name
        );
    }
}

#[test]
fn the_forms_choices_are_the_ones_validation_accepts() {
    let queue = schemas()
        .into_iter()
        .find(|t| t.type_name == "queueTrigger")
        .unwrap();
    assert_eq!(
        queue.schema["properties"]["dataType"]["enum"],
        json!(["string", "binary", "stream"])
    );
    let required: Vec<&str> = queue.schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(required.contains(&"queueName") && !required.contains(&"connection"));
    let timer = schemas()
        .into_iter()
        .find(|t| t.type_name == "timerTrigger")
        .unwrap();
    assert_eq!(
        timer.schema["properties"]["runOnStartup"]["type"],
        json!("boolean")
    );
    assert_eq!(
        queue.schema["properties"]["connection"]["type"],
        json!("string")
    );
    let rabbit = schemas()
        .into_iter()
        .find(|t| t.type_name == "rabbitMQTrigger")
        .unwrap();
    assert!(
        rabbit.schema["properties"]["connectionStringSetting"]["description"]
            .as_str()
            .is_some_and(|d| d.contains("app setting")),
        "the field's help is its doc comment: {}",
        rabbit.schema
    );
}

/// Every property a schema lists is one validation knows (a wrong value is refused for its
/// value, never as an unknown field), and a property no schema lists is refused as unknown:
/// the schema and validation are one type.
#[test]
fn every_listed_property_is_known_to_validation_and_nothing_else_is() {
    for binding_type in schemas() {
        let t = binding_type.type_name;
        let properties = binding_type.schema["properties"]
            .as_object()
            .unwrap()
            .clone();
        for property in properties.keys().filter(|p| *p != "name") {
            let binding = json!({"type": t, "direction": binding_type.direction, "name": "b",
                property.as_str(): [[]]});
            let problems = match parse_binding(&binding, "b") {
                Ok(_) => Vec::new(),
                Err(e) => e.errors,
            };
            assert!(
                !problems.iter().any(|p| p.message.contains("unknown field")),
                "{t}.{property}: {problems:?}"
            );
        }
        // Required properties are given (their example, or some text) so that the only thing
        // wrong is the unknown one.
        let mut binding = json!({"type": t, "direction": binding_type.direction, "name": "b",
            "notAProperty": "x"});
        for required in binding_type.schema["required"].as_array().unwrap() {
            let required = required.as_str().unwrap();
            let example = properties[required]["examples"][0].clone();
            binding[required] = if example.is_null() {
                json!("x")
            } else {
                example
            };
        }
        binding["name"] = json!("b");
        let problems = parse_binding(&binding, "b").unwrap_err().errors;
        assert!(
            problems
                .iter()
                .any(|p| p.message == "unknown field \"notAProperty\""),
            "{t}: {problems:?}"
        );
    }
}
