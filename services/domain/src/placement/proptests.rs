//! Properties of `place` over arbitrary pools, demands and previous placements.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use super::tests::{assert_well_formed, demand, loads, workers};
use super::*;

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("w{i}")).collect()
}

/// Up to 8 workers and 20 apps, each app asking for at most `max_instances(workers)`.
fn pool(
    min_workers: usize,
    max_instances: fn(usize) -> u32,
) -> impl Strategy<Value = (usize, Vec<AppDemand>)> {
    (min_workers..=8).prop_flat_map(move |n| {
        let apps = proptest::collection::vec(0..=max_instances(n), 0..20);
        (Just(n), apps).prop_map(|(n, counts)| {
            let demands = counts
                .iter()
                .enumerate()
                .map(|(i, c)| demand(&format!("t/app-{i}"), *c))
                .collect();
            (n, demands)
        })
    })
}

fn ample(n: usize) -> Vec<WorkerSlot> {
    let names = names(n);
    workers(&names.iter().map(String::as_str).collect::<Vec<_>>(), 1000)
}

fn balance() -> impl Strategy<Value = f64> {
    prop_oneof![Just(DEFAULT_BALANCE), Just(1.0), Just(1.5), Just(3.0)]
}

fn by_instance(p: &Placement) -> BTreeMap<(&str, u32), &str> {
    p.assignments
        .iter()
        .map(|a| ((a.app.as_str(), a.index), a.worker.as_str()))
        .collect()
}

fn total(demands: &[AppDemand], workers: usize) -> u64 {
    demands
        .iter()
        .map(|d| u64::from(d.instances).min(workers as u64))
        .sum()
}

proptest! {
    #[test]
    fn one_instance_per_worker_and_capacity_respected(
        (n, demands) in pool(0, |n| n as u32 + 2),
        capacities in proptest::collection::vec(0u32..6, 8),
        previous in proptest::collection::vec((0usize..20, 0u32..10, 0usize..9), 0..40),
        balance in balance(),
    ) {
        let ws: Vec<WorkerSlot> = names(n)
            .into_iter()
            .zip(capacities)
            .map(|(name, capacity)| WorkerSlot { name, capacity })
            .collect();
        // Arbitrary, even invalid, previous assignments.
        let current: Vec<Assignment> = previous
            .into_iter()
            .map(|(a, index, w)| Assignment {
                app: format!("t/app-{a}"),
                index,
                worker: format!("w{w}"),
            })
            .collect();
        let p = place(&demands, &[], &ws, &current, balance);
        assert_well_formed(&p, &demands);
        let loads = loads(&p);
        for w in &ws {
            prop_assert!(loads.get(w.name.as_str()).copied().unwrap_or(0) <= w.capacity);
        }
    }

    #[test]
    fn everything_is_placed_when_instances_fit((n, demands) in pool(1, |n| n as u32), balance in balance()) {
        let p = place(&demands, &[], &ample(n), &[], balance);
        prop_assert!(p.unplaced.is_empty(), "{:?}", p.unplaced);
        // Placement is greedy: with no slack (balance 1) an app placed late can find room only
        // on workers it already occupies, and then the bound gives way rather than the app.
        if balance >= DEFAULT_BALANCE {
            let bound = load_bound(total(&demands, n), n, balance);
            prop_assert!(loads(&p).values().all(|l| *l <= bound));
        }
    }

    #[test]
    fn removing_a_worker_moves_only_its_instances(
        (n, demands) in pool(2, |n| n as u32 - 1),
        gone in any::<proptest::sample::Index>(),
        balance in balance(),
    ) {
        let ws = ample(n);
        let before = place(&demands, &[], &ws, &[], balance);
        let gone = &ws[gone.index(n)].name;
        let survivors: Vec<WorkerSlot> = ws.iter().filter(|w| &w.name != gone).cloned().collect();
        let after = place(&demands, &[], &survivors, &before.assignments, balance);
        prop_assert!(after.unplaced.is_empty());
        let after = by_instance(&after);
        for (instance, worker) in by_instance(&before) {
            if worker != gone {
                prop_assert_eq!(after[&instance], worker, "{:?} moved", instance);
            }
        }
    }

    /// Adding worker N lowers the bound to B. Then: an old worker w loses at most
    /// `max(0, load(w) − B)` instances, and no instance leaves a worker within B; every worker
    /// ends within B; and an instance moves between two old workers only when N already hosts
    /// that app or N ends at least as loaded as the receiving worker was before. (An empty old
    /// worker looks exactly like a new one to `place`, so a stronger promise cannot be kept.)
    #[test]
    fn adding_a_worker_moves_only_what_the_lower_bound_forces(
        (n, demands) in pool(1, |n| n as u32),
        balance in balance(),
    ) {
        let ws = ample(n);
        let before = place(&demands, &[], &ws, &[], balance);
        let mut grown = ws.clone();
        grown.push(WorkerSlot { name: "new".to_owned(), capacity: 1000 });
        let after = place(&demands, &[], &grown, &before.assignments, balance);
        prop_assert!(after.unplaced.is_empty());

        let bound = load_bound(total(&demands, n + 1), n + 1, balance);
        let (loads_before, loads_after) = (loads(&before), loads(&after));
        prop_assert!(loads_after.values().all(|l| *l <= bound), "{loads_after:?} > {bound}");
        let new_load = loads_after.get("new").copied().unwrap_or(0);
        let new_hosts: BTreeSet<&str> = after
            .assignments
            .iter()
            .filter(|a| a.worker == "new")
            .map(|a| a.app.as_str())
            .collect();
        let after_map = by_instance(&after);
        let mut left: BTreeMap<&str, u32> = BTreeMap::new();
        for ((app, index), from) in by_instance(&before) {
            let to = after_map[&(app, index)];
            if to == from {
                continue;
            }
            *left.entry(from).or_insert(0) += 1;
            if to != "new" {
                prop_assert!(
                    new_hosts.contains(app) || new_load >= loads_before.get(to).copied().unwrap_or(0),
                    "{app}/{index} moved {from} -> {to} though the new worker could take it"
                );
            }
        }
        for (worker, count) in left {
            prop_assert!(count <= loads_before[worker].saturating_sub(bound), "{worker} lost {count}");
        }
    }

    #[test]
    fn input_order_does_not_matter(
        (demands, ws, current) in pool(1, |n| n as u32 + 1).prop_flat_map(|(n, demands)| {
            let ws = ample(n);
            let current = place(&demands, &[], &ws[..n.div_ceil(2)], &[], DEFAULT_BALANCE).assignments;
            (
                Just(demands).prop_shuffle(),
                Just(ws).prop_shuffle(),
                Just(current).prop_shuffle(),
            )
        }),
        balance in balance(),
    ) {
        let mut sorted = (demands.clone(), ws.clone(), current.clone());
        sorted.0.sort_by(|a, b| a.app.cmp(&b.app));
        sorted.1.sort_by(|a, b| a.name.cmp(&b.name));
        sorted.2.sort();
        prop_assert_eq!(
            place(&demands, &[], &ws, &current, balance),
            place(&sorted.0, &[], &sorted.1, &sorted.2, balance)
        );
    }

    /// Apps of one instance can always use a free slot. For a tenant A with an unplaced app
    /// and any tenant B: `placed(B) / weight(B) ≤ (placed(A) + 1) / weight(A)` — no tenant is
    /// above its share while another waits below it — and no slot is left empty.
    #[test]
    fn no_tenant_above_its_share_while_another_waits_below_it(
        (ws, demands, weights, current) in shared_pool(|_| 1),
        balance in balance(),
    ) {
        let p = place(&demands, &weights, &ws, &current, balance);
        assert_well_formed(&p, &demands);
        let placed: BTreeMap<&str, (u64, u32)> =
            p.tenants.iter().map(|t| (t.tenant.as_str(), (t.placed, t.weight))).collect();
        if !p.unplaced.is_empty() {
            prop_assert_eq!(p.assignments.len() as u64, p.slots, "a slot left empty");
        }
        for (app, _) in &p.unplaced {
            let tenant = app.split_once('/').map_or(app.as_str(), |(t, _)| t);
            let (held_a, weight_a) = placed[tenant];
            for (other, (held_b, weight_b)) in &placed {
                prop_assert!(
                    u128::from(*held_b) * u128::from(weight_a)
                        <= u128::from(held_a + 1) * u128::from(*weight_b),
                    "{other} holds {held_b} (weight {weight_b}) while {app} waits with {tenant} at {held_a} (weight {weight_a}): {:?}",
                    p.tenants
                );
            }
        }
    }

    /// The same with apps of several instances, where an instance cannot go to a worker that
    /// already runs its app: a tenant may stay below its share only when every worker with
    /// room already hosts its waiting app.
    #[test]
    fn below_its_share_only_when_no_worker_can_take_the_app(
        (ws, demands, weights, current) in shared_pool(|n| n as u32 + 1),
        balance in balance(),
    ) {
        let p = place(&demands, &weights, &ws, &current, balance);
        assert_well_formed(&p, &demands);
        let loads = loads(&p);
        let with_room: Vec<&str> = ws
            .iter()
            .filter(|w| loads.get(w.name.as_str()).copied().unwrap_or(0) < w.capacity)
            .map(|w| w.name.as_str())
            .collect();
        let placed: BTreeMap<&str, (u64, u32)> =
            p.tenants.iter().map(|t| (t.tenant.as_str(), (t.placed, t.weight))).collect();
        for (app, index) in &p.unplaced {
            if *index >= p.usable_workers {
                continue;
            }
            let hosts: BTreeSet<&str> = p
                .assignments
                .iter()
                .filter(|x| &x.app == app)
                .map(|x| x.worker.as_str())
                .collect();
            if with_room.iter().all(|w| hosts.contains(w)) {
                continue;
            }
            let tenant = app.split_once('/').map_or(app.as_str(), |(t, _)| t);
            let (held_a, weight_a) = placed[tenant];
            for (other, (held_b, weight_b)) in &placed {
                prop_assert!(
                    u128::from(*held_b) * u128::from(weight_a)
                        <= u128::from(held_a + 1) * u128::from(*weight_b),
                    "{other} holds {held_b} (weight {weight_b}) while {app} waits with {tenant} at {held_a} (weight {weight_a}): {:?}",
                    p.tenants
                );
            }
        }
    }

    /// The next tick with nothing changed keeps every assignment, with capacity short or
    /// not. (The balance is unbounded here: a worker that went above the load bound because
    /// nothing else had room may shed to a worker that has room a tick later, as before fair
    /// shares.)
    #[test]
    fn nothing_moves_when_nothing_changes(
        (ws, demands, weights, _) in shared_pool(|n| n as u32 + 1),
    ) {
        let cold = place(&demands, &weights, &ws, &[], f64::INFINITY);
        let again = place(&demands, &weights, &ws, &cold.assignments, f64::INFINITY);
        prop_assert_eq!(again, cold);
    }

    #[test]
    fn shares_do_not_depend_on_input_order(
        (ws, demands, weights, current) in shared_pool(|n| n as u32 + 1),
    ) {
        let mut reversed = (demands.clone(), weights.clone(), ws.clone(), current.clone());
        reversed.0.reverse();
        reversed.1.reverse();
        reversed.2.reverse();
        reversed.3.reverse();
        prop_assert_eq!(
            place(&demands, &weights, &ws, &current, DEFAULT_BALANCE),
            place(&reversed.0, &reversed.1, &reversed.2, &reversed.3, DEFAULT_BALANCE)
        );
    }
}

/// Up to 6 workers of small capacity and 4 tenants with up to 20 apps between them, each
/// wanting up to `max_instances(workers)` instances with a minimum, arbitrary weights (some unlimited) and
/// an arbitrary previous placement: capacity is often short.
fn shared_pool(
    max_instances: fn(usize) -> u32,
) -> impl Strategy<
    Value = (
        Vec<WorkerSlot>,
        Vec<AppDemand>,
        Vec<TenantWeight>,
        Vec<Assignment>,
    ),
> {
    (1usize..=6, 1usize..=4).prop_flat_map(move |(n, tenants)| {
        let ws = proptest::collection::vec(0u32..5, n).prop_map(|capacities| {
            names(capacities.len())
                .into_iter()
                .zip(capacities)
                .map(|(name, capacity)| WorkerSlot { name, capacity })
                .collect::<Vec<_>>()
        });
        let apps = proptest::collection::vec(
            (0..tenants, 0..=max_instances(n), 0..=max_instances(n)),
            0..20,
        );
        let weights = proptest::collection::vec(proptest::option::of(0u32..5), tenants);
        let previous = proptest::collection::vec((0usize..20, 0u32..7, 0usize..n), 0..30);
        (ws, apps, weights, previous).prop_map(|(ws, apps, weights, previous)| {
            let demands: Vec<AppDemand> = apps
                .iter()
                .enumerate()
                .map(|(i, (t, instances, minimum))| AppDemand {
                    app: format!("t{t}/app-{i}"),
                    instances: *instances,
                    minimum: (*minimum).min(*instances),
                })
                .collect();
            let weights = weights
                .into_iter()
                .enumerate()
                .map(|(t, weight)| TenantWeight {
                    tenant: format!("t{t}"),
                    weight,
                })
                .collect();
            let current = previous
                .into_iter()
                .filter(|(a, _, _)| *a < apps.len())
                .map(|(a, index, w)| Assignment {
                    app: format!("t{}/app-{a}", apps[a].0),
                    index,
                    worker: format!("w{w}"),
                })
                .collect();
            (ws, demands, weights, current)
        })
    })
}
