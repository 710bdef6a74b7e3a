use super::*;

fn check<T>(parse: fn(&str) -> Result<T, String>, valid: &[&str], invalid: &[&str]) {
    for name in valid {
        assert!(parse(name).is_ok(), "{name:?} should be valid");
    }
    for name in invalid {
        assert!(parse(name).is_err(), "{name:?} should be invalid");
    }
}

#[test]
fn tenant_names_are_lowercase_dns_labels() {
    let long_ok = "a".repeat(63);
    let too_long = "a".repeat(64);
    check(
        TenantName::parse,
        &["ab", "contoso", "team-42", "0a", "a--b", &long_ok],
        &[
            "", "a", "Contoso", "-ab", "ab-", "a_b", "a.b", "a b", "ä-b", "a;b", "a'b", &too_long,
        ],
    );
}

#[test]
fn app_names_follow_azure_function_app_rule() {
    let long_ok = "A".repeat(60);
    let too_long = "a".repeat(61);
    check(
        AppName::parse,
        &["ab", "Orders-App", "app1", &long_ok],
        &[
            "", "a", "-app", "app-", "my_app", "my.app", "my app", &too_long,
        ],
    );
}

#[test]
fn function_names_follow_azure_functions_rule() {
    let long_ok = format!("F{}", "x".repeat(127));
    let too_long = format!("F{}", "x".repeat(128));
    check(
        FunctionName::parse,
        &["f", "ProcessOrder", "process_order-2", &long_ok],
        &["", "1abc", "_abc", "-abc", "a.b", "a b", "a$b", &too_long],
    );
}

#[test]
fn queue_names_follow_azure_storage_rule_or_setting_reference() {
    let long_ok = "q".repeat(63);
    let too_long = "q".repeat(64);
    check(
        QueueName::parse,
        &[
            "abc",
            "orders",
            "orders-poison",
            "a1-b2",
            "123",
            &long_ok,
            "%OrdersQueue%",
            "%My.Queue:Name%",
            // Azure lower-cases names and resolves references anywhere.
            "Orders",
            "MyQueue",
            "orders-%Env%",
            "%Region%-%Env%",
            "%A%%B%",
        ],
        &[
            "",
            "ab",
            "-abc",
            "abc-",
            "a--b",
            "a_b",
            "a.b",
            &too_long,
            "%%",
            "%a b%",
            "%abc",
            "abc%",
            "a%b%c%",
            "out-{Id}",
            "{queueTrigger}",
            "orders_%Env%",
        ],
    );
}

#[test]
fn queue_names_say_why_they_are_refused() {
    let refused = |n: &str| QueueName::parse(n).unwrap_err().to_string();
    assert!(
        refused("out-{Id}").contains("a trigger's queue name cannot have binding expressions"),
        "{}",
        refused("out-{Id}")
    );
    assert!(
        refused("orders-%Env").contains("'%' at position 7 has no closing '%'"),
        "{}",
        refused("orders-%Env")
    );
    assert!(refused("a--b").contains("consecutive hyphens"));
}

#[test]
fn queue_name_references_resolve_from_settings() {
    let settings = std::collections::BTreeMap::from([
        ("OrdersQueue".to_owned(), "orders".to_owned()),
        ("Bad".to_owned(), "Not_Valid".to_owned()),
        ("Nested".to_owned(), "%OrdersQueue%".to_owned()),
        ("Env".to_owned(), "Prod".to_owned()),
        ("Region".to_owned(), "weu".to_owned()),
    ]);
    let resolve = |n: &str| QueueName::parse(n).unwrap().resolve(&settings);
    assert_eq!(resolve("plain").unwrap().as_str(), "plain");
    assert_eq!(resolve("%ordersqueue%").unwrap().as_str(), "orders");
    // Lower-cased, as Azure does, whether written or taken from a setting.
    assert_eq!(resolve("MyQueue").unwrap().as_str(), "myqueue");
    assert_eq!(resolve("orders-%Env%").unwrap().as_str(), "orders-prod");
    assert_eq!(resolve("%Region%-%Env%").unwrap().as_str(), "weu-prod");
    assert_eq!(
        resolve("%Nope%").unwrap_err(),
        "app setting Nope is not set"
    );
    assert_eq!(
        resolve("orders-%Nope%").unwrap_err(),
        "app setting Nope is not set"
    );
    assert!(
        resolve("%Bad%")
            .unwrap_err()
            .contains("not a valid queue name")
    );
    // A value is not resolved again.
    assert!(
        resolve("%Nested%")
            .unwrap_err()
            .contains("not a valid queue name")
    );
    let err = resolve("x-%Bad%").unwrap_err();
    assert!(
        err.contains("x-%Bad% with app settings Bad is not a valid queue name"),
        "{err}"
    );
    assert!(
        !err.contains("Not_Valid"),
        "a setting's value is not echoed: {err}"
    );
}

#[test]
fn queue_setting_reference_is_exposed() {
    let reference = QueueName::parse("%OrdersQueue%").unwrap();
    assert_eq!(reference.setting_reference(), Some("OrdersQueue"));
    assert!(reference.has_setting_references());
    assert_eq!(
        QueueName::parse("orders").unwrap().setting_reference(),
        None
    );
    let mixed = QueueName::parse("orders-%Env%").unwrap();
    assert_eq!(mixed.setting_reference(), None);
    assert!(mixed.has_setting_references());
    assert_eq!(
        QueueName::parse("%A%%B%").unwrap().setting_reference(),
        None
    );
}

#[test]
fn setting_names_allow_azure_separators() {
    let long_ok = "S".repeat(256);
    let too_long = "S".repeat(257);
    check(
        SettingName::parse,
        &[
            "A",
            "AzureWebJobsStorage",
            "My__queueServiceUri",
            "My:serviceUri",
            "a.b-c",
            &long_ok,
        ],
        &["", "a b", "a=b", "a/b", "ä", "a$", &too_long],
    );
}

#[test]
fn binding_names_are_identifiers_or_return() {
    check(
        BindingName::parse,
        &["myQueueItem", "_x", "req", "A1_b", "$return"],
        &["", "1a", "my-item", "a.b", "$Return", "$ret", "a b", "$"],
    );
    assert!(BindingName::parse("$return").unwrap().is_return());
}

#[test]
fn names_roundtrip_through_json_and_validate_on_the_way_in() {
    let name: TenantName = serde_json::from_str("\"contoso\"").unwrap();
    assert_eq!(name.as_str(), "contoso");
    assert_eq!(serde_json::to_string(&name).unwrap(), "\"contoso\"");
    assert_eq!(name.to_string(), "contoso");
    let err = serde_json::from_str::<TenantName>("\"Contoso\"").unwrap_err();
    assert!(err.to_string().contains("lowercase"), "{err}");
}

#[test]
fn error_messages_say_what_is_wrong() {
    assert_eq!(
        TenantName::parse("a").unwrap_err(),
        "must be 2 to 63 characters long"
    );
    assert_eq!(
        QueueName::parse("a--b").unwrap_err(),
        "must not contain consecutive hyphens"
    );
    assert_eq!(
        FunctionName::parse("1a").unwrap_err(),
        "must start with a letter"
    );
}
