//! Properties of `evaluate` and `Scope` over arbitrary roles, scopes and assignments.

use proptest::prelude::*;

use super::*;

/// Two tenants, two apps, two functions: small enough that random scopes often nest, collide
/// and share prefixes (`con`/`contoso`).
fn scope() -> impl Strategy<Value = Scope> {
    let tenant = prop_oneof![Just("contoso"), Just("con"), Just("fabrikam")];
    let app = prop_oneof![Just("orders"), Just("ord"), Just("billing")];
    let function = prop_oneof![Just("process"), Just("refund")];
    (0usize..4, tenant, app, function).prop_map(|(depth, t, a, f)| {
        let text = match depth {
            0 => "/".to_owned(),
            1 => format!("/tenants/{t}"),
            2 => format!("/tenants/{t}/apps/{a}"),
            _ => format!("/tenants/{t}/apps/{a}/functions/{f}"),
        };
        Scope::parse(&text).unwrap_or_else(|e| panic!("{text}: {e}"))
    })
}

/// Scope segments, right and wrong, for the parser.
fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("tenants".to_owned()),
        Just("apps".to_owned()),
        Just("functions".to_owned()),
        Just("Tenants".to_owned()),
        Just(String::new()),
        "[a-zA-Z0-9 _.-]{1,6}",
    ]
}

fn patterns() -> impl Strategy<Value = Vec<String>> {
    let pattern = prop_oneof![
        Just("*".to_owned()),
        Just("*/read".to_owned()),
        Just("*/action".to_owned()),
        Just("Shoal/apps/*".to_owned()),
        Just("shoal/APPS/functions/*".to_owned()),
        Just("Shoal/roleAssignments/*".to_owned()),
        Just("Shoal/*/delete".to_owned()),
        proptest::sample::select(actions::ALL).prop_map(str::to_owned),
    ];
    proptest::collection::vec(pattern, 0..3)
}

fn role() -> impl Strategy<Value = RoleDefinition> {
    let custom = (patterns(), patterns(), patterns(), patterns()).prop_map(|(a, na, d, nd)| {
        RoleDefinition {
            id: uuid::Uuid::nil(),
            name: "Custom".to_owned(),
            permissions: Permissions {
                actions: a,
                not_actions: na,
                data_actions: d,
                not_data_actions: nd,
            },
            assignable_scopes: vec![Scope::root()],
            built_in: false,
        }
    });
    prop_oneof![proptest::sample::select(built_in_roles()), custom]
}

fn assignments() -> impl Strategy<Value = Vec<(RoleDefinition, Scope)>> {
    proptest::collection::vec((role(), scope()), 0..5)
}

fn operation() -> impl Strategy<Value = (bool, &'static str)> {
    (any::<bool>(), proptest::sample::select(actions::ALL))
}

fn as_operation((data, op): (bool, &str)) -> Operation<'_> {
    if data {
        Operation::DataAction(op)
    } else {
        Operation::Action(op)
    }
}

fn grants(assignments: &[(RoleDefinition, Scope)]) -> Vec<Grant<'_>> {
    assignments
        .iter()
        .map(|(role, scope)| Grant { role, scope })
        .collect()
}

/// Hidden < Denied < Allowed: how much the caller learns.
fn rank(decision: &Decision) -> u8 {
    match decision {
        Decision::Hidden => 0,
        Decision::Denied => 1,
        Decision::Allowed { .. } => 2,
    }
}

proptest! {
    #[test]
    fn adding_a_grant_never_takes_access_away(
        existing in assignments(),
        extra in (role(), scope()),
        position in any::<prop::sample::Index>(),
        op in operation(),
        at in scope(),
    ) {
        let before = evaluate(&grants(&existing), as_operation(op), &at);
        let mut more = existing.clone();
        more.insert(position.index(more.len() + 1), extra);
        let after = evaluate(&grants(&more), as_operation(op), &at);
        prop_assert!(rank(&after) >= rank(&before), "{before:?} became {after:?}");
    }

    #[test]
    fn a_grant_never_applies_where_it_does_not_cover(
        existing in assignments(),
        extra in (role(), scope()),
        op in operation(),
        at in scope(),
    ) {
        prop_assume!(!extra.1.covers(&at));
        let alone = evaluate(&grants(std::slice::from_ref(&extra)), as_operation(op), &at);
        prop_assert!(!alone.is_allowed(), "{alone:?}");

        let before = evaluate(&grants(&existing), as_operation(op), &at);
        let mut more = existing.clone();
        more.push(extra);
        let after = evaluate(&grants(&more), as_operation(op), &at);
        prop_assert_eq!(before.is_allowed(), after.is_allowed());
    }

    #[test]
    fn allowed_names_a_covering_assignment_of_the_caller(
        existing in assignments(),
        op in operation(),
        at in scope(),
    ) {
        if let Decision::Allowed { role, scope } = evaluate(&grants(&existing), as_operation(op), &at) {
            prop_assert!(scope.covers(&at));
            prop_assert!(existing.iter().any(|(r, s)| r.name == role && *s == scope));
        }
    }

    #[test]
    fn covers_is_a_partial_order(a in scope(), b in scope(), c in scope()) {
        prop_assert!(a.covers(&a));
        if a.covers(&b) && b.covers(&a) {
            prop_assert_eq!(&a, &b);
        }
        if a.covers(&b) && b.covers(&c) {
            prop_assert!(a.covers(&c));
        }
        prop_assert!(Scope::root().covers(&a));
        prop_assert_eq!(Scope::parse(a.as_str()).ok(), Some(a.clone()));
    }

    #[test]
    fn parse_never_panics_and_round_trips(
        leading in any::<bool>(),
        segments in proptest::collection::vec(segment(), 0..8),
        trailing in any::<bool>(),
    ) {
        let text = format!(
            "{}{}{}",
            if leading { "/" } else { "" },
            segments.join("/"),
            if trailing { "/" } else { "" },
        );
        if let Ok(scope) = Scope::parse(&text) {
            prop_assert_eq!(scope.as_str(), text.as_str());
            let shown = format!("{scope}");
            prop_assert_eq!(Scope::parse(&shown).ok(), Some(scope));
        }
    }

    #[test]
    fn every_operation_matches_itself_and_star(op in "[ -~]{0,40}") {
        prop_assert!(matches(&op, &op));
        prop_assert!(matches("*", &op));
        prop_assert!(matches(&op.to_ascii_uppercase(), &op.to_ascii_lowercase()));
    }
}
