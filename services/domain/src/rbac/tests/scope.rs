//! Scope parsing, its one spelling per scope, and which scopes cover which.

use super::super::*;
use super::scope;
use crate::names::{AppName, FunctionName, TenantName};

#[test]
fn constructors_and_parse_agree() {
    let t = TenantName::parse("contoso").unwrap();
    let a = AppName::parse("Orders-App").unwrap();
    let f = FunctionName::parse("Process_1").unwrap();
    let cases = [
        (Scope::root(), "/"),
        (Scope::tenant(&t), "/tenants/contoso"),
        (Scope::app(&t, &a), "/tenants/contoso/apps/Orders-App"),
        (
            Scope::function(&t, &a, &f),
            "/tenants/contoso/apps/Orders-App/functions/Process_1",
        ),
    ];
    for (built, text) in cases {
        assert_eq!(Scope::parse(text).unwrap(), built, "{text}");
        assert_eq!(built.as_str(), text);
        assert_eq!(built.to_string(), text);
    }
    let function = Scope::function(&t, &a, &f);
    assert_eq!(function.tenant_name(), Some(&t));
    assert_eq!(function.app_name(), Some(&a));
    assert_eq!(function.function_name(), Some(&f));
    assert_eq!(Scope::root().tenant_name(), None);
    assert_eq!(Scope::tenant(&t).app_name(), None);
    assert!(Scope::root().is_root() && !Scope::tenant(&t).is_root());
}

#[test]
fn invalid_scopes_say_what_is_wrong() {
    let cases = [
        ("", "must not be empty"),
        ("tenants/contoso", "must start with \"/\""),
        (" /", "must start with \"/\""),
        ("/tenants/contoso/", "must not end with \"/\""),
        ("//", "must not end with \"/\""),
        ("//tenants/contoso", "empty segment"),
        ("/tenants//apps/orders", "empty segment"),
        (
            "/Tenants/contoso",
            "keyword \"Tenants\" must be written \"tenants\"",
        ),
        ("/tenants/contoso/APPS/orders", "must be written \"apps\""),
        (
            "/tenants/contoso/apps/orders/Functions/f",
            "must be written \"functions\"",
        ),
        (
            "/tenant/contoso",
            "unknown scope segment \"tenant\", expected \"tenants\"",
        ),
        (
            "/tenants/contoso/functions/f",
            "unknown scope segment \"functions\", expected \"apps\"",
        ),
        ("/tenants/contoso/widgets/w", "expected \"apps\""),
        ("/tenants", "\"tenants\" must be followed by a tenant name"),
        (
            "/tenants/contoso/apps",
            "\"apps\" must be followed by an app name",
        ),
        (
            "/tenants/contoso/apps/orders/functions",
            "must be followed by a function name",
        ),
        (
            "/tenants/Contoso",
            "tenant name \"Contoso\": may contain only lowercase letters",
        ),
        ("/tenants/ contoso", "tenant name \" contoso\""),
        (
            "/tenants/contoso/apps/-orders",
            "app name \"-orders\": must not start or end",
        ),
        (
            "/tenants/contoso/apps/orders/functions/1f",
            "function name \"1f\": must start with a letter",
        ),
        (
            "/tenants/contoso/apps/orders/functions/f/x",
            "nothing may follow",
        ),
        (
            "/tenants/contoso/apps/orders/functions/f/versions/1",
            "nothing may follow",
        ),
        ("/tenants/contoso\n/apps/x", "tenant name \"contoso\\n\""),
    ];
    for (text, want) in cases {
        let err = Scope::parse(text).expect_err(text);
        assert!(err.to_string().contains(want), "{text:?}: {err}");
        assert_eq!(err.message(), err.to_string());
    }
}

#[test]
fn long_input_is_cut_short_in_messages() {
    let text = format!("/{}", "x".repeat(10_000));
    let err = Scope::parse(&text).unwrap_err();
    assert!(err.to_string().len() < 200, "{err}");
}

#[test]
fn covers_is_by_segment_downwards_only() {
    let cases = [
        ("/", "/", true),
        ("/", "/tenants/contoso/apps/orders/functions/process", true),
        ("/tenants/contoso", "/tenants/contoso", true),
        ("/tenants/contoso", "/tenants/contoso/apps/orders", true),
        (
            "/tenants/contoso",
            "/tenants/contoso/apps/orders/functions/process",
            true,
        ),
        (
            "/tenants/contoso/apps/orders",
            "/tenants/contoso/apps/orders/functions/process",
            true,
        ),
        // The prefix trap: a string prefix is not an ancestor.
        ("/tenants/con", "/tenants/contoso", false),
        ("/tenants/con", "/tenants/contoso/apps/orders", false),
        (
            "/tenants/contoso/apps/ord",
            "/tenants/contoso/apps/orders",
            false,
        ),
        (
            "/tenants/contoso/apps/orders/functions/p",
            "/tenants/contoso/apps/orders/functions/process",
            false,
        ),
        // Never upwards or sideways.
        ("/tenants/contoso", "/", false),
        ("/tenants/contoso/apps/orders", "/tenants/contoso", false),
        (
            "/tenants/contoso/apps/orders/functions/process",
            "/tenants/contoso/apps/orders",
            false,
        ),
        (
            "/tenants/contoso/apps/orders",
            "/tenants/contoso/apps/billing",
            false,
        ),
        ("/tenants/contoso", "/tenants/fabrikam", false),
        (
            "/tenants/contoso/apps/orders",
            "/tenants/fabrikam/apps/orders",
            false,
        ),
        // App names compare exactly, like the apps table's primary key.
        (
            "/tenants/contoso/apps/Orders",
            "/tenants/contoso/apps/orders",
            false,
        ),
    ];
    for (outer, inner, want) in cases {
        assert_eq!(
            scope(outer).covers(&scope(inner)),
            want,
            "{outer} covers {inner}"
        );
    }
}

#[test]
fn parent_walks_up_to_the_root() {
    let mut at = Some(scope("/tenants/contoso/apps/orders/functions/process"));
    let mut seen = Vec::new();
    while let Some(current) = at {
        seen.push(current.to_string());
        at = current.parent();
    }
    assert_eq!(
        seen,
        [
            "/tenants/contoso/apps/orders/functions/process",
            "/tenants/contoso/apps/orders",
            "/tenants/contoso",
            "/",
        ]
    );
}

#[test]
fn scopes_are_json_strings_validated_on_the_way_in() {
    let app = scope("/tenants/contoso/apps/orders");
    assert_eq!(
        serde_json::to_string(&app).unwrap(),
        "\"/tenants/contoso/apps/orders\""
    );
    let back: Scope = serde_json::from_str("\"/tenants/contoso/apps/orders\"").unwrap();
    assert_eq!(back, app);
    let err = serde_json::from_str::<Scope>("\"/tenants/contoso/\"").unwrap_err();
    assert!(err.to_string().contains("must not end with"), "{err}");
    assert!("/tenants/x y".parse::<Scope>().is_err());
}

#[test]
fn schema_is_a_string() {
    use utoipa::PartialSchema;
    let schema = serde_json::to_value(Scope::schema()).unwrap();
    assert_eq!(schema["type"], "string", "{schema}");
}
