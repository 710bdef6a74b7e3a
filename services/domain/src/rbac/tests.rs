//! Tables of access decisions: every built-in role against the operations that tell them
//! apart at each level, then inheritance, unions, notActions, data actions and 404-vs-403.
//! Scopes, patterns and the custom-role parser have their own submodules.

use super::actions::*;
use super::*;

mod custom_role;
mod pattern;
mod scope;

const TENANT: &str = "/tenants/contoso";
const APP: &str = "/tenants/contoso/apps/orders";
const FUNCTION: &str = "/tenants/contoso/apps/orders/functions/process";
const SIBLING_APP: &str = "/tenants/contoso/apps/billing";
const SIBLING_FUNCTION: &str = "/tenants/contoso/apps/orders/functions/refund";
const OTHER_TENANT_APP: &str = "/tenants/fabrikam/apps/orders";

pub(super) fn scope(text: &str) -> Scope {
    Scope::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn strings(ops: &[&str]) -> Vec<String> {
    ops.iter().map(|op| (*op).to_owned()).collect()
}

fn custom(name: &str, permissions: Permissions) -> RoleDefinition {
    RoleDefinition {
        id: uuid::Uuid::from_u128(name.len() as u128),
        name: name.to_owned(),
        permissions,
        assignable_scopes: vec![scope(TENANT)],
        built_in: false,
    }
}

/// The built-in roles plus custom roles that exercise one rule each.
fn roles() -> Vec<RoleDefinition> {
    let mut roles = built_in_roles();
    let actions = |grant: &[&str], deny: &[&str]| Permissions {
        actions: strings(grant),
        not_actions: strings(deny),
        ..Permissions::default()
    };
    let data = |grant: &[&str], deny: &[&str]| Permissions {
        data_actions: strings(grant),
        not_data_actions: strings(deny),
        ..Permissions::default()
    };
    roles.extend([
        custom(
            "App Manager",
            actions(&["Shoal/apps/*"], &["Shoal/apps/delete"]),
        ),
        custom("App Deleter", actions(&["Shoal/apps/delete"], &[])),
        custom("Function Data", data(&["Shoal/apps/functions/*"], &[])),
        custom("Everything But Data", actions(&["*"], &[])),
        custom("Shouting Reader", actions(&["SHOAL/APPS/READ"], &[])),
        custom("Invoke Excluded", data(&["*"], &[FUNCTIONS_INVOKE])),
    ]);
    roles
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    Allow,
    Deny,
    Hide,
}

fn kind(decision: &Decision) -> Want {
    match decision {
        Decision::Allowed { .. } => Want::Allow,
        Decision::Denied => Want::Deny,
        Decision::Hidden => Want::Hide,
    }
}

/// Evaluates with assignments written as (role name, scope text).
fn decide(assignments: &[(&str, &str)], operation: Operation<'_>, at: &str) -> Decision {
    let roles = roles();
    let owned: Vec<(&RoleDefinition, Scope)> = assignments
        .iter()
        .map(|(name, at)| {
            let role = roles
                .iter()
                .find(|r| r.name == *name)
                .unwrap_or_else(|| panic!("no role {name}"));
            (role, scope(at))
        })
        .collect();
    let grants: Vec<Grant<'_>> = owned
        .iter()
        .map(|(role, scope)| Grant { role, scope })
        .collect();
    evaluate(&grants, operation, &scope(at))
}

#[test]
fn built_in_roles_at_tenant_app_and_function_scope() {
    use Operation::{Action, DataAction};
    use Want::*;
    let operations = [
        Action(APPS_READ),
        Action(APPS_WRITE),
        Action(APPS_DELETE),
        Action(APP_SETTINGS_LIST),
        Action(APP_SIGNING_SECRET_READ),
        Action(ROLE_ASSIGNMENTS_WRITE),
        DataAction(FUNCTIONS_INVOKE),
        Action(FUNCTIONS_SEND),
    ];
    let table = [
        (
            "Owner",
            [Allow, Allow, Allow, Allow, Allow, Allow, Allow, Allow],
        ),
        (
            "Contributor",
            [Allow, Allow, Allow, Allow, Deny, Deny, Deny, Allow],
        ),
        ("Reader", [Allow, Deny, Deny, Deny, Deny, Deny, Deny, Deny]),
        (
            "Function Invoker",
            [Deny, Deny, Deny, Deny, Deny, Deny, Allow, Deny],
        ),
    ];
    // (assigned at, evaluated at): each level on itself, and a tenant grant inherited below.
    let placements = [
        (TENANT, TENANT),
        (APP, APP),
        (FUNCTION, FUNCTION),
        (TENANT, APP),
        (TENANT, FUNCTION),
        (APP, FUNCTION),
    ];
    for (role, wants) in table {
        for (operation, want) in operations.iter().zip(wants) {
            for (granted, at) in placements {
                let decision = decide(&[(role, granted)], *operation, at);
                assert_eq!(
                    kind(&decision),
                    want,
                    "{role} at {granted}, {operation:?} at {at}"
                );
                if want == Allow {
                    assert_eq!(
                        decision,
                        Decision::Allowed {
                            role: role.to_owned(),
                            scope: scope(granted)
                        }
                    );
                }
            }
        }
    }
}

#[test]
fn decisions() {
    use Operation::{Action, DataAction};
    use Want::*;
    type Row = (
        &'static str,
        &'static [(&'static str, &'static str)],
        Operation<'static>,
        &'static str,
        Want,
    );
    #[rustfmt::skip]
    let table: &[Row] = &[
        // Inheritance goes down only.
        ("tenant grant reaches an app", &[("Reader", TENANT)], Action(APPS_READ), APP, Allow),
        ("tenant grant reaches a function", &[("Reader", TENANT)], Action(FUNCTIONS_READ), FUNCTION, Allow),
        ("app grant does not reach its tenant", &[("Owner", APP)], Action(TENANTS_READ), TENANT, Deny),
        ("function grant does not reach its app", &[("Owner", FUNCTION)], Action(APPS_READ), APP, Deny),
        ("app grant does not reach a sibling app", &[("Owner", APP)], Action(APPS_READ), SIBLING_APP, Deny),
        ("function grant does not reach a sibling", &[("Function Invoker", FUNCTION)], DataAction(FUNCTIONS_INVOKE), SIBLING_FUNCTION, Deny),
        ("sibling app grant makes a refusal 403", &[("Reader", SIBLING_APP)], Action(APPS_DELETE), APP, Deny),
        ("function grant makes a tenant refusal 403", &[("Reader", FUNCTION)], Action(TENANTS_DELETE), TENANT, Deny),
        ("other tenant's grant hides this one", &[("Owner", TENANT)], Action(APPS_READ), OTHER_TENANT_APP, Hide),
        ("other tenant's grant hides its function", &[("Owner", "/tenants/fabrikam/apps/orders/functions/process")], DataAction(FUNCTIONS_INVOKE), FUNCTION, Hide),
        // Union of assignments.
        ("union: reader at tenant + invoker at app, invoke", &[("Reader", TENANT), ("Function Invoker", APP)], DataAction(FUNCTIONS_INVOKE), FUNCTION, Allow),
        ("union: reader at tenant + invoker at app, read", &[("Reader", TENANT), ("Function Invoker", APP)], Action(FUNCTIONS_READ), FUNCTION, Allow),
        ("union: reader + invoker still cannot write", &[("Reader", TENANT), ("Function Invoker", APP)], Action(APPS_WRITE), APP, Deny),
        ("union: invoker on one function, reader on another app", &[("Function Invoker", FUNCTION), ("Reader", SIBLING_APP)], DataAction(FUNCTIONS_INVOKE), FUNCTION, Allow),
        // notActions subtract within their own role only.
        ("custom notActions removes delete", &[("App Manager", APP)], Action(APPS_DELETE), APP, Deny),
        ("custom role grants the rest of apps/*", &[("App Manager", APP)], Action(APPS_WRITE), APP, Allow),
        ("apps/* reaches functions beneath", &[("App Manager", APP)], Action(FUNCTIONS_DELETE), FUNCTION, Allow),
        ("reader alongside does not restore delete", &[("App Manager", APP), ("Reader", APP)], Action(APPS_DELETE), APP, Deny),
        ("second role grants what notActions removed", &[("App Manager", APP), ("App Deleter", APP)], Action(APPS_DELETE), APP, Allow),
        ("order of roles does not matter", &[("App Deleter", APP), ("App Manager", APP)], Action(APPS_DELETE), APP, Allow),
        ("grant at a wider scope restores it too", &[("App Manager", APP), ("App Deleter", TENANT)], Action(APPS_DELETE), APP, Allow),
        ("contributor's notActions do not cut an owner", &[("Contributor", TENANT), ("Owner", APP)], Action(APP_SIGNING_SECRET_READ), APP, Allow),
        ("contributor cannot regenerate the signing secret", &[("Contributor", TENANT)], Action(APP_SIGNING_SECRET_REGENERATE), APP, Deny),
        ("contributor cannot read the identity endpoint", &[("Contributor", TENANT)], Action(APP_IDENTITY_ENDPOINT_LIST), APP, Deny),
        ("contributor cannot rotate signing keys", &[("Contributor", "/")], Action(SIGNING_KEYS_ROTATE), "/", Deny),
        ("contributor cannot define roles", &[("Contributor", TENANT)], Action(ROLE_DEFINITIONS_WRITE), TENANT, Deny),
        ("contributor reads role assignments", &[("Contributor", TENANT)], Action(ROLE_ASSIGNMENTS_READ), TENANT, Allow),
        ("contributor resets service principal secrets", &[("Contributor", TENANT)], Action(SERVICE_PRINCIPAL_SECRETS_ACTION), TENANT, Allow),
        ("reader cannot reset secrets", &[("Reader", TENANT)], Action(SERVICE_PRINCIPAL_SECRETS_ACTION), TENANT, Deny),
        ("reader reads the audit log", &[("Reader", TENANT)], Action(AUDIT_LOG_READ), TENANT, Allow),
        // Data actions come from dataActions only.
        ("dataActions wildcard allows invoke", &[("Function Data", APP)], DataAction(FUNCTIONS_INVOKE), FUNCTION, Allow),
        ("dataActions grant no control action", &[("Function Data", APP)], Action(FUNCTIONS_READ), FUNCTION, Deny),
        ("actions * grants no data action", &[("Everything But Data", TENANT)], DataAction(FUNCTIONS_INVOKE), FUNCTION, Deny),
        ("actions * still grants every action", &[("Everything But Data", TENANT)], Action(ROLE_ASSIGNMENTS_DELETE), TENANT, Allow),
        ("notDataActions subtract from dataActions", &[("Invoke Excluded", TENANT)], DataAction(FUNCTIONS_INVOKE), FUNCTION, Deny),
        ("control-plane roles never invoke", &[("Contributor", "/"), ("Reader", "/")], DataAction(FUNCTIONS_INVOKE), FUNCTION, Deny),
        // Case-insensitive.
        ("upper-case pattern matches", &[("Shouting Reader", APP)], Action(APPS_READ), APP, Allow),
        ("operation case does not matter", &[("Reader", APP)], Action("SHOAL/Apps/READ"), APP, Allow),
        ("data operation case does not matter", &[("Function Invoker", APP)], DataAction("shoal/apps/functions/INVOKE/action"), FUNCTION, Allow),
        // The root.
        ("root grant reaches every tenant", &[("Reader", "/")], Action(APPS_READ), OTHER_TENANT_APP, Allow),
        ("root grant makes any refusal 403", &[("Function Invoker", "/")], Action(APPS_READ), OTHER_TENANT_APP, Deny),
        ("root operation needs a root grant", &[("Owner", TENANT)], Action(WORKERS_READ), "/", Deny),
        ("root operation with a root grant", &[("Reader", "/")], Action(WORKERS_READ), "/", Allow),
        // Nothing at all.
        ("no grants hides a tenant", &[], Action(TENANTS_READ), TENANT, Hide),
        ("no grants hides an app", &[], Action(APPS_READ), APP, Hide),
        ("no grants hides a function", &[], DataAction(FUNCTIONS_INVOKE), FUNCTION, Hide),
        ("no grants at the root", &[], Action(WORKERS_READ), "/", Hide),
    ];
    for (name, assignments, operation, at, want) in table {
        let decision = decide(assignments, *operation, at);
        assert_eq!(kind(&decision), *want, "{name}: {decision:?}");
    }
}

#[test]
fn allowed_names_the_first_allowing_assignment() {
    let both = [("Reader", APP), ("Owner", TENANT)];
    assert_eq!(
        decide(&both, Operation::Action(APPS_READ), FUNCTION),
        Decision::Allowed {
            role: "Reader".to_owned(),
            scope: scope(APP)
        }
    );
    assert_eq!(
        decide(&both, Operation::Action(APPS_WRITE), FUNCTION),
        Decision::Allowed {
            role: "Owner".to_owned(),
            scope: scope(TENANT)
        }
    );
}

#[test]
fn each_grant_says_alone_what_it_allows_and_evaluate_is_their_union() {
    let roles = roles();
    let role = |name: &str| roles.iter().find(|r| r.name == name).unwrap();
    let (tenant, app, function) = (scope(TENANT), scope(APP), scope(FUNCTION));
    let reader_app = Grant {
        role: role("Reader"),
        scope: &app,
    };
    let manager_tenant = Grant {
        role: role("App Manager"),
        scope: &tenant,
    };
    let data_function = Grant {
        role: role("Function Data"),
        scope: &function,
    };
    // A scope above the target covers it; one below does not.
    assert!(reader_app.allows(Operation::Action(APPS_READ), &function));
    assert!(!reader_app.allows(Operation::Action(APPS_READ), &tenant));
    assert!(!reader_app.allows(Operation::Action(APPS_WRITE), &app));
    // notActions trim the role's own actions.
    assert!(manager_tenant.allows(Operation::Action(APPS_WRITE), &app));
    assert!(!manager_tenant.allows(Operation::Action(APPS_DELETE), &app));
    // Data actions only through dataActions.
    assert!(data_function.allows(Operation::DataAction(FUNCTIONS_INVOKE), &function));
    assert!(!data_function.allows(Operation::Action(FUNCTIONS_INVOKE), &function));
    let grants = [reader_app, manager_tenant, data_function];
    for at in [&tenant, &app, &function] {
        for op in ALL {
            for operation in [Operation::Action(op), Operation::DataAction(op)] {
                assert_eq!(
                    evaluate(&grants, operation, at).is_allowed(),
                    grants.iter().any(|g| g.allows(operation, at)),
                    "{operation:?} at {at}"
                );
            }
        }
    }
}

#[test]
fn built_in_roles_have_the_stored_ids_and_names() {
    let roles = built_in_roles();
    let ids: Vec<(String, String)> = roles
        .iter()
        .map(|r| (r.name.clone(), r.id.to_string()))
        .collect();
    let want = [
        ("Owner", "8e3af657-a8ff-443c-a75c-2fe8c4bcb635"),
        ("Contributor", "b24988ac-6180-42a0-ab88-20f7382dd24c"),
        ("Reader", "acdd72a7-3385-48ef-bd42-f606fba81ae7"),
        ("Function Invoker", "6d2a8f1c-2b0e-4f55-9f7e-3c1d6b1e9a01"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(n, id)| ((*n).to_owned(), (*id).to_owned()))
        .collect();
    assert_eq!(ids, want);
    for role in &roles {
        assert!(role.built_in);
        assert_eq!(role.assignable_scopes, vec![Scope::root()]);
        assert!(role.assignable_at(&scope(FUNCTION)), "{}", role.name);
        assert!(is_built_in_name(&role.name.to_uppercase()));
    }
    assert!(!is_built_in_name("Owners"));
}

#[test]
fn assignable_at_follows_the_assignable_scopes() {
    let role = RoleDefinition {
        assignable_scopes: vec![scope(APP), scope("/tenants/contoso/apps/billing")],
        ..custom("App Manager", Permissions::default())
    };
    let cases = [
        (APP, true),
        (FUNCTION, true),
        (SIBLING_APP, true),
        ("/tenants/contoso/apps/billing/functions/charge", true),
        (TENANT, false),
        ("/", false),
        ("/tenants/contoso/apps/orders-eu", false),
        ("/tenants/contoso/apps/ord", false),
        (OTHER_TENANT_APP, false),
    ];
    for (at, want) in cases {
        assert_eq!(role.assignable_at(&scope(at)), want, "{at}");
    }
    let nowhere = RoleDefinition {
        assignable_scopes: vec![],
        ..role
    };
    assert!(!nowhere.assignable_at(&scope(APP)));
}

#[test]
fn catalog_is_unique_and_data_actions_are_part_of_it() {
    let mut seen = std::collections::BTreeSet::new();
    for op in ALL {
        assert!(op.starts_with("Shoal/"), "{op}");
        assert!(seen.insert(op.to_ascii_lowercase()), "duplicate {op}");
    }
    for op in DATA {
        assert!(ALL.contains(op), "{op}");
    }
    assert!(is_data_action("SHOAL/apps/functions/invoke/ACTION"));
    assert!(!is_data_action(APPS_READ));
    assert_eq!(control_actions().count(), ALL.len() - DATA.len());
}

#[test]
fn reader_sees_no_secret_material() {
    let secrets = [
        APP_SETTINGS_LIST,
        APP_SIGNING_SECRET_READ,
        APP_IDENTITY_ENDPOINT_LIST,
        SERVICE_PRINCIPAL_SECRETS_ACTION,
    ];
    for op in secrets {
        let decision = decide(&[("Reader", "/")], Operation::Action(op), APP);
        assert_eq!(decision, Decision::Denied, "{op}");
    }
}
