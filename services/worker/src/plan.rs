//! The reconcile decision, without I/O: given the app instances the worker should host
//! (`wanted`) and those it hosts now (`hosted`), which stop, which restart with a new
//! configuration and which start. `supervisor.rs` applies the plan: it claims, spawns,
//! drains and releases.
//!
//! The rules:
//! * the lease is not held (lost, or not yet confirmed by a fresh read): everything stops and
//!   nothing starts;
//! * an instance started under a lease period that has since been lost stops, whatever is
//!   wanted; it may start again under the new period like any instance that is not hosted;
//! * an instance no longer wanted stops;
//! * an instance whose configuration fingerprint changed restarts — even when its assignment
//!   is stale, because the running instance already belongs here and only its configuration
//!   moved on;
//! * an instance not hosted starts only from an assignment of the current leader's epoch
//!   (`may_start`): a stale one was written by a deposed leader.

use std::collections::HashMap;
use std::fmt;

use crate::hosted_apps::AppInstance;

/// An instance the worker should host, as the plan needs to see it.
#[derive(Clone, Copy, Debug)]
pub struct Intent<'a> {
    pub instance: &'a AppInstance,
    pub fingerprint: u64,
    /// False for an assignment of an older epoch than the current leader's.
    pub may_start: bool,
}

/// An instance the worker hosts now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Observed {
    /// The fingerprint of the configuration it runs with.
    pub fingerprint: u64,
    /// The lease period it was started in has ended (its listeners stopped polling already).
    pub lease_lost: bool,
}

/// Why a hosted instance stops for good (a restart is not a stop).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum StopReason {
    LeaseLost,
    /// Unassigned from this worker, stopped, removed, or the lease is not held.
    NotWanted,
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StopReason::LeaseLost => "lease lost",
            StopReason::NotWanted => "unassigned, stopped or removed",
        })
    }
}

/// What one reconcile pass does. An instance appears in at most one of `restart` and `start`;
/// an instance stopped because its lease period ended may also be in `start`. Every list is
/// ordered by instance, so passes act in a predictable order.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Plan {
    pub stop: Vec<(AppInstance, StopReason)>,
    /// Stopped and started again with the new configuration (the claim is kept).
    pub restart: Vec<AppInstance>,
    pub start: Vec<AppInstance>,
}

impl Plan {
    /// Every instance to start, restarts included, in instance order.
    pub fn starting(&self) -> Vec<&AppInstance> {
        let mut all: Vec<&AppInstance> = self.restart.iter().chain(&self.start).collect();
        all.sort();
        all
    }
}

/// Decides one reconcile pass. `lease_held`: a lease period is held and `wanted` was read in it.
pub fn plan(
    wanted: &[Intent<'_>],
    hosted: &HashMap<AppInstance, Observed>,
    lease_held: bool,
) -> Plan {
    let wanted: HashMap<&AppInstance, &Intent<'_>> = if lease_held {
        wanted.iter().map(|w| (w.instance, w)).collect()
    } else {
        HashMap::new()
    };
    let mut plan = Plan::default();
    let mut kept = Vec::new();
    for (instance, observed) in hosted {
        if observed.lease_lost {
            plan.stop.push((instance.clone(), StopReason::LeaseLost));
            continue;
        }
        match wanted.get(instance) {
            None => plan.stop.push((instance.clone(), StopReason::NotWanted)),
            Some(w) if w.fingerprint != observed.fingerprint => plan.restart.push(instance.clone()),
            Some(_) => kept.push(instance),
        }
    }
    plan.start = wanted
        .values()
        .filter(|w| w.may_start)
        .map(|w| w.instance)
        .filter(|i| !kept.contains(i) && !plan.restart.contains(i))
        .cloned()
        .collect();
    plan.stop.sort();
    plan.restart.sort();
    plan.start.sort();
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance(app: &str) -> AppInstance {
        AppInstance {
            tenant: "t".into(),
            app: app.into(),
            index: 0,
        }
    }

    /// `(app, fingerprint, may_start)` wanted; `(app, fingerprint, lease_lost)` hosted.
    struct Case {
        name: &'static str,
        lease_held: bool,
        wanted: &'static [(&'static str, u64, bool)],
        hosted: &'static [(&'static str, u64, bool)],
        stop: &'static [(&'static str, StopReason)],
        restart: &'static [&'static str],
        start: &'static [&'static str],
    }

    const NONE: &[(&str, u64, bool)] = &[];
    use StopReason::{LeaseLost, NotWanted};

    const CASES: &[Case] = &[
        Case {
            name: "nothing wanted, nothing hosted",
            lease_held: true,
            wanted: NONE,
            hosted: NONE,
            stop: &[],
            restart: &[],
            start: &[],
        },
        Case {
            name: "a current assignment starts",
            lease_held: true,
            wanted: &[("a", 1, true)],
            hosted: NONE,
            stop: &[],
            restart: &[],
            start: &["a"],
        },
        Case {
            name: "a stale assignment starts nothing",
            lease_held: true,
            wanted: &[("a", 1, false)],
            hosted: NONE,
            stop: &[],
            restart: &[],
            start: &[],
        },
        Case {
            name: "an unchanged hosted instance is left alone",
            lease_held: true,
            wanted: &[("a", 1, true)],
            hosted: &[("a", 1, false)],
            stop: &[],
            restart: &[],
            start: &[],
        },
        Case {
            name: "a stale assignment keeps its running instance",
            lease_held: true,
            wanted: &[("a", 1, false)],
            hosted: &[("a", 1, false)],
            stop: &[],
            restart: &[],
            start: &[],
        },
        Case {
            name: "an instance no longer wanted stops",
            lease_held: true,
            wanted: NONE,
            hosted: &[("a", 1, false)],
            stop: &[("a", NotWanted)],
            restart: &[],
            start: &[],
        },
        Case {
            name: "a changed configuration restarts",
            lease_held: true,
            wanted: &[("a", 2, true)],
            hosted: &[("a", 1, false)],
            stop: &[],
            restart: &["a"],
            start: &[],
        },
        Case {
            name: "a changed configuration restarts under a stale assignment too",
            lease_held: true,
            wanted: &[("a", 2, false)],
            hosted: &[("a", 1, false)],
            stop: &[],
            restart: &["a"],
            start: &[],
        },
        Case {
            name: "an instance of a lost lease period stops and starts again",
            lease_held: true,
            wanted: &[("a", 1, true)],
            hosted: &[("a", 1, true)],
            stop: &[("a", LeaseLost)],
            restart: &[],
            start: &["a"],
        },
        Case {
            name: "an instance of a lost lease period with a stale assignment only stops",
            lease_held: true,
            wanted: &[("a", 1, false)],
            hosted: &[("a", 1, true)],
            stop: &[("a", LeaseLost)],
            restart: &[],
            start: &[],
        },
        Case {
            name: "without the lease everything stops and nothing starts",
            lease_held: false,
            wanted: &[("a", 1, true), ("b", 2, true), ("c", 1, true)],
            hosted: &[("a", 1, false), ("b", 1, false), ("d", 1, true)],
            stop: &[("a", NotWanted), ("b", NotWanted), ("d", LeaseLost)],
            restart: &[],
            start: &[],
        },
        Case {
            name: "mixed changes are ordered by instance",
            lease_held: true,
            wanted: &[
                ("e", 1, true),
                ("b", 2, true),
                ("c", 1, true),
                ("a", 9, false),
            ],
            hosted: &[
                ("d", 1, false),
                ("b", 1, false),
                ("c", 1, false),
                ("a", 1, false),
            ],
            stop: &[("d", NotWanted)],
            restart: &["a", "b"],
            start: &["e"],
        },
    ];

    #[test]
    fn plans_follow_the_reconcile_rules() {
        for case in CASES {
            let instances: Vec<AppInstance> =
                case.wanted.iter().map(|(app, ..)| instance(app)).collect();
            let wanted: Vec<Intent<'_>> = case
                .wanted
                .iter()
                .zip(&instances)
                .map(|((_, fingerprint, may_start), instance)| Intent {
                    instance,
                    fingerprint: *fingerprint,
                    may_start: *may_start,
                })
                .collect();
            let hosted = case
                .hosted
                .iter()
                .map(|(app, fingerprint, lease_lost)| {
                    let observed = Observed {
                        fingerprint: *fingerprint,
                        lease_lost: *lease_lost,
                    };
                    (instance(app), observed)
                })
                .collect();
            let expected = Plan {
                stop: case
                    .stop
                    .iter()
                    .map(|(app, reason)| (instance(app), *reason))
                    .collect(),
                restart: case.restart.iter().map(|app| instance(app)).collect(),
                start: case.start.iter().map(|app| instance(app)).collect(),
            };
            assert_eq!(
                plan(&wanted, &hosted, case.lease_held),
                expected,
                "{}",
                case.name
            );
        }
    }

    #[test]
    fn starting_merges_restarts_and_starts_in_order() {
        let plan = Plan {
            stop: vec![(instance("z"), StopReason::NotWanted)],
            restart: vec![instance("b"), instance("d")],
            start: vec![instance("a"), instance("c")],
        };
        let names: Vec<&str> = plan.starting().iter().map(|i| i.app.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d"]);
    }

    #[test]
    fn stop_reasons_read_as_before() {
        assert_eq!(StopReason::LeaseLost.to_string(), "lease lost");
        assert_eq!(
            StopReason::NotWanted.to_string(),
            "unassigned, stopped or removed"
        );
    }
}
