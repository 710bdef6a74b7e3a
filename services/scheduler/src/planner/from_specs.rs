//! Decisions for apps as the catalog parses them from their stored specifications.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use shoal_domain::placement::WorkerSlot;

use super::*;
use crate::catalog::tests::{Functions, app, cosmos, queue};
use crate::catalog::{AppKey, ScalableApp, Snapshot};
use crate::trigger_metrics::{QueueReading, Reading};

/// One tick's decision for a new app (no instances yet), with every readable source reporting
/// `backlog` and every other one read as the scheduler reads it: an error.
fn first_decision(app: ScalableApp, backlog: u64) -> u32 {
    let now = Instant::now();
    let readings: HashMap<(AppKey, String), Reading> = app
        .functions
        .iter()
        .map(|f| {
            let result = match &f.source {
                Err(why) => Err(why.clone()),
                Ok(_) => Ok(QueueReading {
                    length: backlog,
                    queue_time_ms: None,
                    partitions: None,
                }),
            };
            let reading = Reading {
                result,
                at: now,
                listen_only: false,
            };
            ((app.key.clone(), f.name.clone()), reading)
        })
        .collect();
    let snapshot = Snapshot {
        apps: vec![Arc::new(app)],
        ..Snapshot::default()
    };
    let workers: Vec<WorkerSlot> = (0..10)
        .map(|i| WorkerSlot {
            name: format!("w{i}"),
            capacity: 100,
        })
        .collect();
    let plan = Planner::new(Duration::from_secs(300), 1.25).plan(&Inputs {
        snapshot: &snapshot,
        readings: &readings,
        in_flight: &InFlight::new(),
        listeners: &ListenerCounts::new(),
        workers: &workers,
        current: &[],
        now,
    });
    plan.decisions[0].1.to
}

#[test]
fn a_function_nothing_runs_keeps_no_instances() {
    // (case, functions, backlog of the readable sources, instances decided)
    let cases: [(&str, Functions, u64, u32); 6] = [
        ("cosmos alone", vec![("c", cosmos())], 0, 0),
        ("queue idle", vec![("q", queue())], 0, 0),
        (
            "queue and cosmos idle",
            vec![("q", queue()), ("c", cosmos())],
            0,
            0,
        ),
        ("queue backlog", vec![("q", queue())], 100, 4),
        (
            "queue and cosmos backlog",
            vec![("q", queue()), ("c", cosmos())],
            100,
            4,
        ),
        (
            "queue and cosmos, one message",
            vec![("q", queue()), ("c", cosmos())],
            1,
            1,
        ),
    ];
    for (name, functions, backlog, want) in cases {
        assert_eq!(first_decision(app(&functions), backlog), want, "{name}");
    }
}
