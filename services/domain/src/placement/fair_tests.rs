//! Fair shares between tenants when capacity is short: the issue's two-worker case, weights,
//! minimum instances, stability and what a starved app is told.

use std::collections::BTreeMap;

use super::tests::{assert_well_formed, workers};
use super::*;

fn demand(app: &str, instances: u32, minimum: u32) -> AppDemand {
    AppDemand {
        app: app.to_owned(),
        instances,
        minimum,
    }
}

fn weight(tenant: &str, weight: Option<u32>) -> TenantWeight {
    TenantWeight {
        tenant: tenant.to_owned(),
        weight,
    }
}

/// Placed instances per tenant.
fn per_tenant(p: &Placement) -> BTreeMap<&str, u64> {
    p.tenants
        .iter()
        .map(|t| (t.tenant.as_str(), t.placed))
        .collect()
}

/// Tenant b: ten apps of two instances; then tenant a's one-instance app arrives.
fn issue_case() -> (Vec<AppDemand>, Vec<WorkerSlot>) {
    let b: Vec<AppDemand> = (0..10)
        .map(|i| demand(&format!("b/app-{i}"), 2, 0))
        .collect();
    (b, workers(&["w1", "w2"], 5))
}

#[test]
fn a_newcomer_gets_its_share_from_the_tenant_above_it() {
    let (b, ws) = issue_case();
    let before = place(&b, &[], &ws, &[], DEFAULT_BALANCE);
    assert_eq!(per_tenant(&before)["b"], 10);

    let mut both = b.clone();
    both.push(demand("a/late", 1, 0));
    let after = place(&both, &[], &ws, &before.assignments, DEFAULT_BALANCE);

    assert_well_formed(&after, &both);
    assert_eq!(per_tenant(&after), BTreeMap::from([("a", 1), ("b", 9)]));
    // Exactly one of b's instances gave way; the rest stayed where they were.
    let kept = before
        .assignments
        .iter()
        .filter(|x| after.assignments.contains(x))
        .count();
    assert_eq!(kept, 9);
    let shed = &after.unplaced[0].0;
    assert_eq!(
        after.waiting(shed).as_deref(),
        Some(
            "waiting for capacity: tenant share used (tenant b holds 9 of its share of 9 of 10 slots; its apps want 20)"
        )
    );
    assert_eq!(after.waiting("a/late"), None);

    // Nothing changes: nothing moves.
    let again = place(&both, &[], &ws, &after.assignments, DEFAULT_BALANCE);
    assert_eq!(again, after);

    // a scales to zero: b takes the slot back and nothing else moves.
    let back = place(&b, &[], &ws, &after.assignments, DEFAULT_BALANCE);
    assert_eq!(per_tenant(&back)["b"], 10);
    assert!(
        after
            .assignments
            .iter()
            .filter(|x| x.app.starts_with("b/"))
            .all(|x| back.assignments.contains(x))
    );
}

#[test]
fn equal_shares_for_tenants_that_all_want_more() {
    let ws = workers(&["w1", "w2", "w3"], 3);
    let demands: Vec<AppDemand> = ["a", "b", "c"]
        .iter()
        .flat_map(|t| (0..5).map(move |i| demand(&format!("{t}/app-{i}"), 3, 0)))
        .collect();
    let p = place(&demands, &[], &ws, &[], DEFAULT_BALANCE);
    assert_eq!(
        per_tenant(&p),
        BTreeMap::from([("a", 3), ("b", 3), ("c", 3)])
    );
    // Within a tenant its apps take turns: three apps with one instance each.
    let a_apps = p
        .assignments
        .iter()
        .filter(|x| x.app.starts_with("a/"))
        .map(|x| (x.app.as_str(), x.index))
        .collect::<Vec<_>>();
    assert_eq!(a_apps, [("a/app-0", 0), ("a/app-1", 0), ("a/app-2", 0)]);
}

#[test]
fn shares_follow_the_tenants_instance_limits() {
    let ws = workers(&["w1", "w2", "w3", "w4"], 2);
    let demands: Vec<AppDemand> = (0..8)
        .flat_map(|i| {
            [
                demand(&format!("big/app-{i}"), 4, 0),
                demand(&format!("small/app-{i}"), 4, 0),
            ]
        })
        .collect();
    let weights = [weight("big", Some(30)), weight("small", Some(10))];
    let p = place(&demands, &weights, &ws, &[], DEFAULT_BALANCE);
    assert_eq!(per_tenant(&p), BTreeMap::from([("big", 6), ("small", 2)]));
    // A tenant without a limit weighs as much as the largest limit.
    let weights = [weight("big", None), weight("small", Some(10))];
    let p = place(&demands, &weights, &ws, &[], DEFAULT_BALANCE);
    assert_eq!(per_tenant(&p), BTreeMap::from([("big", 4), ("small", 4)]));
}

#[test]
fn minimum_instances_come_first_within_the_tenants_share() {
    let ws = workers(&["w1", "w2"], 2);
    // t's share is 2 of 4 slots. `busy` keeps the instance it runs; of the rest, `core`'s
    // minimum comes before the scale-out instances of `busy` and `extra`.
    let current = [Assignment {
        app: "t/busy".into(),
        index: 0,
        worker: "w1".into(),
    }];
    let demands = [
        demand("t/busy", 2, 0),
        demand("t/core", 1, 1),
        demand("t/extra", 1, 0),
        demand("u/x", 2, 0),
        demand("u/y", 2, 0),
    ];
    let p = place(&demands, &[], &ws, &current, DEFAULT_BALANCE);
    assert_well_formed(&p, &demands);
    let t: Vec<(&str, u32)> = p
        .assignments
        .iter()
        .filter(|x| x.app.starts_with("t/"))
        .map(|x| (x.app.as_str(), x.index))
        .collect();
    assert_eq!(t, [("t/busy", 0), ("t/core", 0)]);
    assert!(p.assignments.contains(&current[0]));
    assert_eq!(per_tenant(&p)["u"], 2);

    // Minimums do not buy a tenant more than its share.
    let demands = [
        demand("t/core", 2, 2),
        demand("t/more", 2, 2),
        demand("u/x", 2, 0),
    ];
    let p = place(&demands, &[], &ws, &[], DEFAULT_BALANCE);
    assert_eq!(per_tenant(&p), BTreeMap::from([("t", 2), ("u", 2)]));
}

#[test]
fn a_tenant_whose_next_instance_finds_no_worker_gives_the_turn_to_its_next_app() {
    // Four slots on w1 and one on w2. t's share is 3 of 5; its app `wide` wants two instances
    // and can have only one (w2 is taken by u), so `narrow` takes t's second slot, and the
    // third, which t cannot use, goes to u.
    let ws = vec![
        WorkerSlot {
            name: "w1".into(),
            capacity: 4,
        },
        WorkerSlot {
            name: "w2".into(),
            capacity: 1,
        },
    ];
    let current = [Assignment {
        app: "u/a".into(),
        index: 0,
        worker: "w2".into(),
    }];
    let demands = [
        demand("t/narrow", 1, 0),
        demand("t/wide", 2, 2),
        demand("u/a", 1, 0),
        demand("u/b", 1, 0),
        demand("u/c", 1, 0),
        demand("u/d", 1, 0),
    ];
    let p = place(&demands, &[], &ws, &current, DEFAULT_BALANCE);
    assert_well_formed(&p, &demands);
    assert_eq!(per_tenant(&p), BTreeMap::from([("t", 2), ("u", 3)]));
    assert!(p.assignments.iter().any(|x| x.app == "t/narrow"));
}

#[test]
fn a_starved_app_is_told_why() {
    let ws = workers(&["w1", "w2"], 1);
    let p = place(&[demand("t/a", 3, 0)], &[], &ws, &[], DEFAULT_BALANCE);
    assert_eq!(
        p.waiting("t/a").as_deref(),
        Some("waiting for workers: one instance per worker, 2 workers can run one")
    );
    let p = place(
        &[
            demand("t/a", 1, 0),
            demand("t/b", 1, 0),
            demand("t/c", 1, 0),
        ],
        &[],
        &ws,
        &[],
        DEFAULT_BALANCE,
    );
    let starved = &p.unplaced[0].0;
    assert_eq!(
        p.waiting(starved).as_deref(),
        Some(
            "waiting for capacity: tenant share used (tenant t holds 2 of its share of 2 of 2 slots; its apps want 3)"
        )
    );
    assert_eq!(p.waiting("t/unknown"), None);
}
