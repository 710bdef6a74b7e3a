use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use proptest::prelude::*;
use serde_json::{Value, json};
use uuid::Uuid;

use super::*;

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2024-03-05T07:08:09Z")
        .unwrap()
        .with_timezone(&Utc)
}

fn fixed_guid() -> Uuid {
    Uuid::parse_str("0f8fad5b-d9cb-469f-a165-70867728950e").unwrap()
}

/// A queue-triggered request as the worker sends it (`queue_payload`).
fn queue_request(body: &str) -> Value {
    json!({
        "Data": {"order": body},
        "Metadata": {
            "QueueTrigger": body,
            "DequeueCount": 2,
            "ExpirationTime": "2024-03-12T07:08:09+00:00",
            "Id": "5B3C6E1A-0000-4000-8000-000000000001",
            "InsertionTime": "2024-03-05T07:08:09+00:00",
            "NextVisibleTime": "2024-03-05T07:18:09+00:00",
            "PopReceipt": "AgAAAA",
            "sys": {"MethodName": "ship", "UtcNow": "2024-03-05T07:08:09.5Z", "RandGuid": "6a2f41a3-c54c-fce8-32d2-0324e1c32e22"}
        }
    })
}

fn resolve(written: &str, request: &Value) -> Result<String, String> {
    let template = Template::parse(written)?;
    let bound = template.bind_settings(&BTreeMap::new())?;
    let data = BindingData::from_request(request, "order", now()).with_guids(fixed_guid);
    bound.resolve(&data)
}

#[test]
fn templates_parse_into_text_settings_and_expressions() {
    let t = Template::parse("out-%Env%-{Id}-{DateTime:yyyy-MM}-{{x}}").unwrap();
    assert_eq!(t.settings().collect::<Vec<_>>(), ["Env"]);
    let expressions: Vec<String> = t.expressions().map(ToString::to_string).collect();
    assert_eq!(expressions, ["{Id}", "{DateTime:yyyy-MM}"]);
    assert_eq!(t.literals().collect::<Vec<_>>(), ["out-", "-", "-", "-{x}"]);
    let dotted = Template::parse("{ApplicationProperties.region}").unwrap();
    let e = dotted.expressions().next().unwrap();
    assert_eq!(e.path(), ["ApplicationProperties", "region"]);
    assert!(!Template::parse("orders").unwrap().has_expressions());
}

#[test]
fn malformed_templates_say_what_is_wrong_and_where() {
    let cases = [
        ("out-{Id", "the '{' at position 5 has no closing '}'"),
        ("out-}", "the '}' at position 5 has no opening '{'"),
        ("out-{}", "{} names nothing"),
        ("{a{b}", "the '{' at position 1 has no closing '}'"),
        ("{1abc}", "must start with a letter or '_'"),
        ("{my-id}", "'-' is not allowed in the first part"),
        ("{a..b}", "a dotted name has an empty part"),
        ("{a b}", "' ' is not allowed"),
        ("{rand-guid:X}", "use N, D, B or P"),
        ("{DateTime:q}", "standard format"),
        ("x-%Env", "the '%' at position 3 has no closing '%'"),
        ("%a b%", "app setting reference %a b%"),
    ];
    for (written, want) in cases {
        let err = Template::parse(written).unwrap_err();
        assert!(err.contains(want), "{written}: {err}");
    }
}

#[test]
fn expressions_resolve_from_the_queue_trigger_s_binding_data() {
    let request = queue_request(
        r#"{"region": "EU", "order": {"id": 42, "rush": true}, "tags": ["a"], "none": null}"#,
    );
    let cases: [(&str, Result<&str, &str>); 17] = [
        ("out-{Id}", Ok("out-5B3C6E1A-0000-4000-8000-000000000001")),
        ("out-{id}", Ok("out-5B3C6E1A-0000-4000-8000-000000000001")),
        ("n-{DequeueCount}", Ok("n-2")),
        ("{region}-orders", Ok("EU-orders")),
        ("{order.id}", Ok("42")),
        ("{ORDER.Rush}", Ok("True")),
        ("{InsertionTime}", Ok("2024-03-05T07-08-09Z")),
        ("{InsertionTime:yyyyMMdd}", Ok("20240305")),
        ("{DateTime}", Ok("2024-03-05T07-08-09Z")),
        ("{datetime:yyyy-MM-dd}", Ok("2024-03-05")),
        ("{rand-guid}", Ok("0f8fad5b-d9cb-469f-a165-70867728950e")),
        ("{rand-guid:N}", Ok("0f8fad5bd9cb469fa16570867728950e")),
        ("{sys.MethodName}", Ok("ship")),
        ("{sys.randguid:N}", Ok("6a2f41a3c54cfce832d20324e1c32e22")),
        ("{sys.UtcNow:HHmmss}", Ok("070809")),
        (
            "{tags}",
            Err("{tags}: the trigger's binding data has no tags"),
        ),
        ("{order}", Err("{order}: is an object")),
    ];
    for (written, want) in cases {
        match (resolve(written, &request), want) {
            (Ok(got), Ok(want)) => assert_eq!(got, want, "{written}"),
            (Err(got), Err(want)) => assert!(got.contains(want), "{written}: {got}"),
            (got, want) => panic!("{written}: got {got:?}, want {want:?}"),
        }
    }
    assert!(
        resolve("{none}", &request)
            .unwrap_err()
            .contains("has no none")
    );
    assert!(
        resolve("{order.missing}", &request)
            .unwrap_err()
            .contains("order has no property missing")
    );
    assert!(
        resolve("{region:yyyy}", &request)
            .unwrap_err()
            .contains("format applies only")
    );
}

#[test]
fn a_json_body_s_properties_override_the_trigger_s_data_but_not_sys() {
    let request = queue_request(r#"{"Id": "from-body", "sys": "nope", "DateTime": "then"}"#);
    assert_eq!(resolve("{Id}", &request).unwrap(), "from-body");
    assert_eq!(resolve("{sys.MethodName}", &request).unwrap(), "ship");
    assert_eq!(resolve("{DateTime}", &request).unwrap(), "then");
}

#[test]
fn a_body_that_is_not_a_json_object_has_no_properties() {
    for body in ["plain text", "[1, 2]", "{not json}", "42"] {
        let err = resolve("{region}", &queue_request(body)).unwrap_err();
        assert!(err.contains("has no region"), "{body}: {err}");
    }
    assert_eq!(
        resolve("{QueueTrigger}", &queue_request("Plain")).unwrap(),
        "Plain"
    );
}

#[test]
fn settings_resolve_once_and_their_values_are_text() {
    let settings = BTreeMap::from([
        ("Env".to_owned(), "Prod".to_owned()),
        ("Braces".to_owned(), "{Id}".to_owned()),
    ]);
    let bound = Template::parse("orders-%env%")
        .unwrap()
        .bind_settings(&settings)
        .unwrap();
    assert_eq!(bound.literal(), Some("orders-Prod"));
    let bound = Template::parse("x-%Braces%-{DequeueCount}")
        .unwrap()
        .bind_settings(&settings)
        .unwrap();
    assert_eq!(bound.literal(), None);
    let request = queue_request("m");
    let data = BindingData::from_request(&request, "order", now());
    assert_eq!(bound.resolve(&data).unwrap(), "x-{Id}-2");
    assert_eq!(
        Template::parse("x-%Nope%-{Id}")
            .unwrap()
            .bind_settings(&settings)
            .unwrap_err(),
        "app setting Nope is not set"
    );
}

#[test]
fn output_names_check_their_literal_text() {
    let queue = |c: char| c.is_ascii_alphanumeric() || c == '-';
    assert!(
        output_name("orders", queue, "a queue name")
            .unwrap()
            .is_none()
    );
    assert!(
        output_name("out-{Id}", queue, "a queue name")
            .unwrap()
            .is_some()
    );
    let err = output_name("out_{Id}", queue, "a queue name").unwrap_err();
    assert!(err.contains("'_' cannot be part of a queue name"), "{err}");
    assert!(err.contains("letters, digits and '-'"), "{err}");
    assert!(has_expressions("a-{b}") && !has_expressions("a-{{b}}") && !has_expressions("a-{"));
}

proptest! {
    /// Text without braces or percent signs is one literal, whatever it holds.
    #[test]
    fn plain_text_is_its_own_name(text in "[^{}%]{0,40}") {
        let bound = Template::parse(&text).unwrap().bind_settings(&BTreeMap::new()).unwrap();
        prop_assert_eq!(bound.literal(), Some(text.as_str()));
    }

    /// Doubled braces are literal braces, never expressions.
    #[test]
    fn doubled_braces_are_text(a in "[a-z]{0,8}", b in "[a-z]{0,8}") {
        let written = format!("{a}{{{{{b}}}}}");
        let t = Template::parse(&written).unwrap();
        prop_assert!(!t.has_expressions());
        let bound = t.bind_settings(&BTreeMap::new()).unwrap();
        let want = format!("{a}{{{b}}}");
        prop_assert_eq!(bound.literal(), Some(want.as_str()));
    }

    /// A JSON property's text is put where its expression stands, under any case.
    #[test]
    fn a_property_resolves_to_its_value(
        name in "[a-z][a-zA-Z0-9_]{0,12}",
        value in "[a-z0-9-]{1,20}",
        prefix in "[a-z]{0,5}",
    ) {
        prop_assume!(!["sys", "datetime"].contains(&name.to_ascii_lowercase().as_str()));
        let body = json!({ name.to_uppercase(): value }).to_string();
        let request = json!({"Data": {"order": body}, "Metadata": {}});
        let template = Template::parse(&format!("{prefix}{{{name}}}")).unwrap();
        let bound = template.bind_settings(&BTreeMap::new()).unwrap();
        let data = BindingData::from_request(&request, "order", now());
        prop_assert_eq!(bound.resolve(&data).unwrap(), format!("{prefix}{value}"));
    }

    /// Parsing never panics, whatever is written.
    #[test]
    fn parsing_anything_never_panics(written in "\\PC{0,40}") {
        let _ = Template::parse(&written);
    }
}
