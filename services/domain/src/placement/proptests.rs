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
        let p = place(&demands, &ws, &current, balance);
        assert_well_formed(&p, &demands);
        let loads = loads(&p);
        for w in &ws {
            prop_assert!(loads.get(w.name.as_str()).copied().unwrap_or(0) <= w.capacity);
        }
    }

    #[test]
    fn everything_is_placed_when_instances_fit((n, demands) in pool(1, |n| n as u32), balance in balance()) {
        let p = place(&demands, &ample(n), &[], balance);
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
        let before = place(&demands, &ws, &[], balance);
        let gone = &ws[gone.index(n)].name;
        let survivors: Vec<WorkerSlot> = ws.iter().filter(|w| &w.name != gone).cloned().collect();
        let after = place(&demands, &survivors, &before.assignments, balance);
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
        let before = place(&demands, &ws, &[], balance);
        let mut grown = ws.clone();
        grown.push(WorkerSlot { name: "new".to_owned(), capacity: 1000 });
        let after = place(&demands, &grown, &before.assignments, balance);
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
            let current = place(&demands, &ws[..n.div_ceil(2)], &[], DEFAULT_BALANCE).assignments;
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
            place(&demands, &ws, &current, balance),
            place(&sorted.0, &sorted.1, &sorted.2, balance)
        );
    }
}
