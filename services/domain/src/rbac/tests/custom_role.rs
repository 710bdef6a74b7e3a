//! Parsing a tenant's custom role: what is accepted, and every error with its path.

use serde_json::{Value, json};

use super::super::actions::*;
use super::super::*;
use super::scope;
use crate::names::TenantName;

fn contoso() -> TenantName {
    TenantName::parse("contoso").unwrap()
}

fn errors(body: Value) -> Vec<(String, String)> {
    parse_custom_role(&body, &contoso())
        .expect_err("should be refused")
        .errors
        .into_iter()
        .map(|e| (e.path, e.message))
        .collect()
}

/// A valid body with one field replaced.
fn with(field: &str, value: Value) -> Value {
    let mut body = json!({
        "name": "App Operator",
        "permissions": {"actions": ["Shoal/apps/*"]},
        "assignableScopes": ["/tenants/contoso"],
    });
    body[field] = value;
    body
}

#[test]
fn a_full_body_is_parsed() {
    let body = json!({
        "name": "App Operator",
        "description": "Runs the orders apps.\nNo deletes.",
        "permissions": {
            "actions": ["Shoal/apps/*", "*/read"],
            "notActions": ["Shoal/apps/delete"],
            "dataActions": ["Shoal/apps/functions/*"],
            "notDataActions": [],
        },
        "assignableScopes": ["/tenants/contoso/apps/orders", "/tenants/contoso/apps/orders-eu"],
    });
    let role = parse_custom_role(&body, &contoso()).unwrap();
    assert_eq!(
        role,
        CustomRole {
            name: "App Operator".to_owned(),
            description: "Runs the orders apps.\nNo deletes.".to_owned(),
            permissions: Permissions {
                actions: vec!["Shoal/apps/*".to_owned(), "*/read".to_owned()],
                not_actions: vec!["Shoal/apps/delete".to_owned()],
                data_actions: vec!["Shoal/apps/functions/*".to_owned()],
                not_data_actions: vec![],
            },
            assignable_scopes: vec![
                scope("/tenants/contoso/apps/orders"),
                scope("/tenants/contoso/apps/orders-eu"),
            ],
        }
    );
}

#[test]
fn read_only_fields_are_ignored_and_description_defaults_to_empty() {
    let mut body = with("id", json!("0b0e6c84-4b8f-4f3c-9a39-4a8c4a3b2f10"));
    body["builtIn"] = json!(false);
    body["tenant"] = json!("contoso");
    body["createdAt"] = json!("2024-01-01T00:00:00Z");
    body["updatedAt"] = Value::Null;
    body["description"] = Value::Null;
    let role = parse_custom_role(&body, &contoso()).unwrap();
    assert_eq!(role.description, "");
    assert_eq!(role.name, "App Operator");
}

#[test]
fn wildcard_forms_are_accepted() {
    let body = with(
        "permissions",
        json!({
            "actions": ["*", "*/read", "shoal/APPS/*", "Shoal/apps/functions/*", "Shoal/*/delete"],
            "notActions": ["Shoal/roleAssignments/*"],
            "dataActions": ["*", "*/action", "Shoal/apps/functions/*", "Shoal/apps/functions/invoke/action"],
            "notDataActions": ["Shoal/*"],
        }),
    );
    assert!(parse_custom_role(&body, &contoso()).is_ok());
}

#[test]
fn every_catalog_operation_is_accepted_in_its_own_list() {
    let controls: Vec<&str> = control_actions().collect();
    let body = with(
        "permissions",
        json!({"actions": controls, "notActions": controls, "dataActions": DATA, "notDataActions": DATA}),
    );
    let role = parse_custom_role(&body, &contoso()).unwrap();
    assert_eq!(role.permissions.actions.len(), controls.len());
}

#[test]
fn errors_carry_their_field_path() {
    let cases: Vec<(Value, &str, &str)> = vec![
        (json!([]), "", "the body must be a JSON object"),
        (with("foo", json!(1)), "foo", "unknown field \"foo\""),
        (with("name", Value::Null), "name", "is required"),
        (with("name", json!(5)), "name", "expected a string"),
        (with("name", json!("  ")), "name", "must not be empty"),
        (
            with("name", json!(" Ops")),
            "name",
            "must not start or end with whitespace",
        ),
        (
            with("name", json!("a".repeat(129))),
            "name",
            "at most 128 characters",
        ),
        (
            with("name", json!("Ops\u{7}")),
            "name",
            "control characters",
        ),
        (
            with("name", json!("owner")),
            "name",
            "is the name of a built-in role",
        ),
        (
            with("description", json!(["x"])),
            "description",
            "expected a string",
        ),
        (
            with("description", json!("d".repeat(1025))),
            "description",
            "at most 1024",
        ),
        (
            with("description", json!("a\u{0}b")),
            "description",
            "control characters",
        ),
        (
            with("permissions", Value::Null),
            "permissions",
            "is required",
        ),
        (
            with("permissions", json!("*")),
            "permissions",
            "expected an object",
        ),
        (
            with("permissions", json!({"Actions": ["*"]})),
            "permissions.Actions",
            "unknown field \"Actions\"",
        ),
        (
            with("permissions", json!({"actions": "*"})),
            "permissions.actions",
            "expected an array",
        ),
        (
            with("permissions", json!({"actions": [1]})),
            "permissions.actions[0]",
            "expected a string",
        ),
        (
            with(
                "permissions",
                json!({"actions": ["Shoal/apps/read", "*/read", "apps/read"]}),
            ),
            "permissions.actions[2]",
            "must start with \"Shoal/\"",
        ),
        (
            with("permissions", json!({"actions": [""]})),
            "permissions.actions[0]",
            "must not be empty",
        ),
        (
            with("permissions", json!({"actions": ["Shoal/apps read"]})),
            "permissions.actions[0]",
            "whitespace",
        ),
        (
            with("permissions", json!({"actions": ["Shoal/apps/read\t"]})),
            "permissions.actions[0]",
            "whitespace",
        ),
        (
            with("permissions", json!({"actions": ["Shoal/äpps/read"]})),
            "permissions.actions[0]",
            "ASCII",
        ),
        (
            with("permissions", json!({"actions": ["Shoal/apps//read"]})),
            "permissions.actions[0]",
            "empty segment",
        ),
        (
            with("permissions", json!({"actions": ["Shoal/"]})),
            "permissions.actions[0]",
            "empty segment",
        ),
        (
            with("permissions", json!({"actions": ["**"]})),
            "permissions.actions[0]",
            "must start with",
        ),
        (
            with(
                "permissions",
                json!({"actions": [format!("Shoal/{}", "a".repeat(300))]}),
            ),
            "permissions.actions[0]",
            "at most 256",
        ),
        (
            with("permissions", json!({"actions": [FUNCTIONS_INVOKE]})),
            "permissions.actions[0]",
            "is a data action; list it in dataActions",
        ),
        (
            with(
                "permissions",
                json!({"actions": ["*"], "notActions": ["Shoal/apps/functions/invoke/*"]}),
            ),
            "permissions.notActions[0]",
            "is a data action",
        ),
        (
            with("permissions", json!({"dataActions": [APPS_READ]})),
            "permissions.dataActions[0]",
            "is not a data action",
        ),
        (
            with("permissions", json!({"dataActions": ["*/read"]})),
            "permissions.dataActions[0]",
            "is not a data action",
        ),
        (
            with(
                "permissions",
                json!({"dataActions": ["*"], "notDataActions": ["Shoal/apps/delete"]}),
            ),
            "permissions.notDataActions[0]",
            "is not a data action",
        ),
        (
            with("permissions", json!({})),
            "permissions",
            "list at least one operation in actions or dataActions",
        ),
        (
            with(
                "permissions",
                json!({"notActions": ["*"], "notDataActions": ["*"]}),
            ),
            "permissions",
            "must grant something",
        ),
        (
            with("assignableScopes", Value::Null),
            "assignableScopes",
            "is required",
        ),
        (
            with("assignableScopes", json!("/tenants/contoso")),
            "assignableScopes",
            "expected an array",
        ),
        (
            with("assignableScopes", json!([])),
            "assignableScopes",
            "must list at least one scope",
        ),
        (
            with("assignableScopes", json!([5])),
            "assignableScopes[0]",
            "expected a string",
        ),
        (
            with("assignableScopes", json!(["/"])),
            "assignableScopes[0]",
            "cannot be assignable at \"/\"",
        ),
        (
            with(
                "assignableScopes",
                json!(["/tenants/contoso", "/tenants/fabrikam"]),
            ),
            "assignableScopes[1]",
            "must lie within this tenant",
        ),
        (
            with("assignableScopes", json!(["/tenants/contoso/"])),
            "assignableScopes[0]",
            "must not end with \"/\"",
        ),
        (
            with("assignableScopes", json!(["/tenants/contoso/apps/Or ders"])),
            "assignableScopes[0]",
            "app name",
        ),
    ];
    for (body, path, message) in cases {
        let found = errors(body.clone());
        assert!(
            found.iter().any(|(p, m)| p == path && m.contains(message)),
            "{body}: wanted {path}: {message}, got {found:?}"
        );
        assert_eq!(found.len(), 1, "{body}: {found:?}");
    }
}

#[test]
fn every_problem_is_reported_at_once() {
    let body = json!({
        "name": "",
        "permissions": {"actions": ["bad", "Shoal/apps/read", "also bad"], "dataActions": [APPS_READ]},
        "assignableScopes": ["/", "/tenants/fabrikam"],
    });
    let paths: Vec<String> = errors(body).into_iter().map(|(p, _)| p).collect();
    assert_eq!(
        paths,
        [
            "name",
            "permissions.actions[0]",
            "permissions.actions[2]",
            "permissions.dataActions[0]",
            "assignableScopes[0]",
            "assignableScopes[1]",
        ]
    );
}

#[test]
fn a_parsed_role_evaluates_as_written() {
    let body = json!({
        "name": "Orders Operator",
        "permissions": {"actions": ["Shoal/apps/*"], "notActions": ["Shoal/apps/delete"], "dataActions": ["Shoal/apps/functions/*"]},
        "assignableScopes": ["/tenants/contoso/apps/orders"],
    });
    let role = parse_custom_role(&body, &contoso())
        .unwrap()
        .into_definition(uuid::Uuid::nil());
    assert!(!role.built_in);
    let at = scope("/tenants/contoso/apps/orders");
    assert!(role.assignable_at(&scope("/tenants/contoso/apps/orders/functions/process")));
    assert!(!role.assignable_at(&scope("/tenants/contoso")));
    let grants = [Grant {
        role: &role,
        scope: &at,
    }];
    let decide = |op| evaluate(&grants, op, &at);
    assert!(decide(Operation::Action(APPS_WRITE)).is_allowed());
    assert!(decide(Operation::DataAction(FUNCTIONS_INVOKE)).is_allowed());
    assert_eq!(decide(Operation::Action(APPS_DELETE)), Decision::Denied);
}
