//! Placement examples: the rules one by one, and a pool of the size the bench measures.

use std::collections::{BTreeMap, BTreeSet};

use super::*;

pub(super) fn workers(names: &[&str], capacity: u32) -> Vec<WorkerSlot> {
    names
        .iter()
        .map(|n| WorkerSlot {
            name: (*n).to_owned(),
            capacity,
        })
        .collect()
}

pub(super) fn demand(app: &str, instances: u32) -> AppDemand {
    AppDemand {
        app: app.to_owned(),
        instances,
        minimum: 0,
    }
}

fn on(app: &str, index: u32, worker: &str) -> Assignment {
    Assignment {
        app: app.to_owned(),
        index,
        worker: worker.to_owned(),
    }
}

pub(super) fn loads(p: &Placement) -> BTreeMap<&str, u32> {
    let mut loads = BTreeMap::new();
    for a in &p.assignments {
        *loads.entry(a.worker.as_str()).or_insert(0) += 1;
    }
    loads
}

/// One instance per app per worker, sorted output, every index either placed or unplaced.
pub(super) fn assert_well_formed(p: &Placement, demands: &[AppDemand]) {
    let pairs: BTreeSet<(&str, &str)> = p
        .assignments
        .iter()
        .map(|a| (a.app.as_str(), a.worker.as_str()))
        .collect();
    assert_eq!(pairs.len(), p.assignments.len(), "an app twice on a worker");
    assert!(p.assignments.is_sorted_by_key(|a| (a.app.clone(), a.index)));
    assert!(p.unplaced.is_sorted());
    let wanted: u64 = demands.iter().map(|d| u64::from(d.instances)).sum();
    assert_eq!((p.assignments.len() + p.unplaced.len()) as u64, wanted);
}

#[test]
fn load_bound_is_the_ceiling_of_balance_times_average() {
    let cases = [
        (0, 4, 1.25, 0),
        (8, 4, 1.25, 3),
        (12, 4, 1.0, 3),
        (13, 4, 1.0, 4),
        (12, 4, 0.5, 3),
        (12, 4, f64::NAN, 3),
        (12, 4, f64::INFINITY, u32::MAX),
        (12, 0, 1.25, 0),
    ];
    for (total, n, balance, want) in cases {
        assert_eq!(load_bound(total, n, balance), want, "{total} {n} {balance}");
    }
}

#[test]
fn places_each_instance_on_a_different_worker() {
    let ws = workers(&["w1", "w2", "w3"], 10);
    let demands = [demand("t/a", 3), demand("t/b", 1), demand("t/c", 0)];
    let p = place(&demands, &[], &ws, &[], DEFAULT_BALANCE);
    assert_well_formed(&p, &demands);
    assert!(p.unplaced.is_empty());
    let a_workers: BTreeSet<&str> = p.assignments[..3]
        .iter()
        .map(|a| a.worker.as_str())
        .collect();
    assert_eq!(a_workers.len(), 3);
}

#[test]
fn instances_beyond_the_number_of_workers_are_unplaced() {
    let ws = workers(&["w1", "w2", "w3"], 10);
    let p = place(&[demand("t/a", 5)], &[], &ws, &[], DEFAULT_BALANCE);
    assert_eq!(p.assignments.len(), 3);
    assert_eq!(
        p.unplaced,
        vec![("t/a".to_owned(), 3), ("t/a".to_owned(), 4)]
    );
    let none = place(&[demand("t/a", 2)], &[], &[], &[], DEFAULT_BALANCE);
    assert_eq!(none.unplaced.len(), 2);
}

#[test]
fn keeps_valid_assignments_and_replaces_the_rest() {
    let ws = workers(&["w1", "w2", "w3"], 10);
    let current = [
        on("t/a", 0, "w3"),
        on("t/a", 1, "gone"), // worker died
        on("t/a", 5, "w1"),   // index no longer wanted
        on("t/old", 0, "w1"), // app no longer placed
        on("t/b", 0, "w2"),
        on("t/b", 0, "w1"), // the same instance twice: the first worker by name wins
        on("t/c", 0, "w2"),
        on("t/c", 1, "w2"), // two instances on one worker: the lower index stays
    ];
    let demands = [demand("t/a", 2), demand("t/b", 1), demand("t/c", 2)];
    let p = place(&demands, &[], &ws, &current, DEFAULT_BALANCE);
    assert_well_formed(&p, &demands);
    let got: BTreeMap<(&str, u32), &str> = p
        .assignments
        .iter()
        .map(|a| ((a.app.as_str(), a.index), a.worker.as_str()))
        .collect();
    assert_eq!(got[&("t/a", 0)], "w3");
    assert_ne!(got[&("t/a", 1)], "w3");
    assert_eq!(got[&("t/b", 0)], "w1");
    assert_eq!(got[&("t/c", 0)], "w2");
    assert_ne!(got[&("t/c", 1)], "w2");
}

#[test]
fn capacity_is_never_exceeded_and_overflow_is_unplaced() {
    let ws = vec![
        WorkerSlot {
            name: "small".to_owned(),
            capacity: 1,
        },
        WorkerSlot {
            name: "none".to_owned(),
            capacity: 0,
        },
        WorkerSlot {
            name: "big".to_owned(),
            capacity: 2,
        },
    ];
    let demands: Vec<AppDemand> = (0..5).map(|i| demand(&format!("t/{i}"), 1)).collect();
    // Everything currently crowds the small worker.
    let current: Vec<Assignment> = (0..5).map(|i| on(&format!("t/{i}"), 0, "small")).collect();
    let p = place(&demands, &[], &ws, &current, DEFAULT_BALANCE);
    assert_well_formed(&p, &demands);
    let loads = loads(&p);
    assert_eq!(
        (loads.get("small"), loads.get("none"), loads.get("big")),
        (Some(&1), None, Some(&2))
    );
    assert_eq!(p.unplaced.len(), 2);
}

#[test]
fn the_bound_is_relaxed_to_capacity_only_when_needed() {
    // 6 single instances on capacities 10 and 1: the bound is ceil(1.25 × 6 / 2) = 4, and
    // 4 + 1 slots are too few, so the big worker takes a fifth.
    let ws = vec![
        WorkerSlot {
            name: "big".to_owned(),
            capacity: 10,
        },
        WorkerSlot {
            name: "small".to_owned(),
            capacity: 1,
        },
    ];
    let demands: Vec<AppDemand> = (0..6).map(|i| demand(&format!("t/{i}"), 1)).collect();
    let p = place(&demands, &[], &ws, &[], DEFAULT_BALANCE);
    assert!(p.unplaced.is_empty());
    assert_eq!(loads(&p).get("big"), Some(&5));
}

#[test]
fn a_worker_above_the_bound_sheds_to_the_new_worker() {
    let demands: Vec<AppDemand> = (0..8).map(|i| demand(&format!("t/{i}"), 1)).collect();
    let current: Vec<Assignment> = (0..8)
        .map(|i| on(&format!("t/{i}"), 0, if i < 5 { "w1" } else { "w2" }))
        .collect();
    // Bound with three workers: ceil(1.25 × 8 / 3) = 4, so w1 sheds one, to w3.
    let p = place(
        &demands,
        &[],
        &workers(&["w1", "w2", "w3"], 10),
        &current,
        DEFAULT_BALANCE,
    );
    let loads = loads(&p);
    assert_eq!((loads["w1"], loads["w2"], loads["w3"]), (4, 3, 1));
    let moved: Vec<&Assignment> = p
        .assignments
        .iter()
        .filter(|a| !current.contains(a))
        .collect();
    assert_eq!(moved.len(), 1);
    assert_eq!(moved[0].worker, "w3");
}

#[test]
fn duplicate_workers_and_apps_count_once() {
    let ws = vec![
        WorkerSlot {
            name: "w1".to_owned(),
            capacity: 0,
        },
        WorkerSlot {
            name: "w1".to_owned(),
            capacity: 5,
        },
    ];
    let p = place(
        &[demand("t/a", 1), demand("t/a", 2)],
        &[],
        &ws,
        &[],
        DEFAULT_BALANCE,
    );
    assert_eq!(p.assignments, vec![on("t/a", 0, "w1")]);
    assert_eq!(p.unplaced, vec![("t/a".to_owned(), 1)]);
}

#[test]
fn ten_thousand_apps_on_a_hundred_workers() {
    let ws: Vec<WorkerSlot> = (0..100)
        .map(|w| WorkerSlot {
            name: format!("worker-{w:03}"),
            capacity: 1000,
        })
        .collect();
    let demands: Vec<AppDemand> = (0..10_000u32)
        .map(|a| demand(&format!("tenant-{}/app-{a}", a % 97), 1 + a % 10))
        .collect();
    let total: u64 = demands.iter().map(|d| u64::from(d.instances)).sum();
    let bound = load_bound(total, ws.len(), DEFAULT_BALANCE);

    let first = place(&demands, &[], &ws, &[], DEFAULT_BALANCE);
    assert_well_formed(&first, &demands);
    assert!(first.unplaced.is_empty());
    assert!(loads(&first).values().all(|l| *l <= bound));

    // The next tick with nothing changed keeps everything.
    let again = place(&demands, &[], &ws, &first.assignments, DEFAULT_BALANCE);
    assert_eq!(again, first);

    // One worker dies: only its instances move.
    let survivors = &ws[1..];
    let after = place(
        &demands,
        &[],
        survivors,
        &first.assignments,
        DEFAULT_BALANCE,
    );
    assert!(after.unplaced.is_empty());
    let kept: BTreeSet<&Assignment> = after.assignments.iter().collect();
    let moved = first
        .assignments
        .iter()
        .filter(|a| !kept.contains(a))
        .count();
    let on_dead = first
        .assignments
        .iter()
        .filter(|a| a.worker == ws[0].name)
        .count();
    assert_eq!(moved, on_dead);
}
