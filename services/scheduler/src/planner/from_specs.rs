//! Decisions for apps as the catalog parses them from their stored specifications.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use shoal_domain::placement::WorkerSlot;

use super::*;
use serde_json::{Value, json};

use crate::catalog::tests::{Functions, app, app_with_host, cosmos, queue, rabbit};
use crate::catalog::{AppKey, ScalableApp, Snapshot};
use crate::trigger_metrics::{QueueReading, Reading};

/// One tick's decision for a new app (no instances yet), with every readable source reporting
/// `backlog` and every other one read as the scheduler reads it: an error.
fn first_decision(app: ScalableApp, backlog: u64) -> u32 {
    decide_first(app, backlog, None).to
}

/// [`first_decision`] whole, with live workers whose listeners hold at most `hold_limit`
/// messages at once.
fn decide_first(app: ScalableApp, backlog: u64, hold_limit: Option<u16>) -> ScaleDecision {
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
    let mut plan = Planner::new(Duration::from_secs(300), 1.25).plan(&Inputs {
        snapshot: &snapshot,
        readings: &readings,
        in_flight: &InFlight::new(),
        listeners: &ListenerCounts::new(),
        workers: &workers,
        hold_limit,
        current: &[],
        now,
    });
    plan.decisions.remove(0).1
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

/// A RabbitMQ instance takes what it holds: `prefetchCount` capped at what the live workers'
/// listeners hold at once, and as written when no live worker reports a limit. Other targets
/// are what their listeners take whatever the limit.
#[test]
fn a_prefetch_count_is_capped_at_what_the_workers_hold() {
    let prefetch =
        |n: u32| json!({"version": "2.0", "extensions": {"rabbitMQ": {"prefetchCount": n}}});
    // (case, function, hostConfig, the workers' smallest limit, per instance, what was asked)
    let cases = [
        (
            "prefetch 250 held 32",
            rabbit(),
            prefetch(250),
            Some(32),
            32,
            Some(250),
        ),
        (
            "default prefetch 30",
            rabbit(),
            Value::Null,
            Some(32),
            30,
            None,
        ),
        (
            "prefetch 250, no limit reported",
            rabbit(),
            prefetch(250),
            None,
            250,
            None,
        ),
        (
            "prefetch 250 on roomy workers",
            rabbit(),
            prefetch(250),
            Some(512),
            250,
            None,
        ),
        (
            "prefetch 250 held 1",
            rabbit(),
            prefetch(250),
            Some(1),
            1,
            Some(250),
        ),
        (
            "a queue's batchSize",
            queue(),
            Value::Null,
            Some(8),
            16,
            None,
        ),
    ];
    for (name, function, host, hold_limit, per_instance, asked) in cases {
        let app = app_with_host(host, &[("f", function)]);
        let decision = decide_first(app, 2000, hold_limit);
        let verdict = &decision.functions[0];
        assert_eq!(
            (verdict.per_instance, verdict.asked_per_instance),
            (per_instance, asked),
            "{name}"
        );
        assert_eq!(
            verdict.target,
            Some(2000u32.div_ceil(per_instance)),
            "{name}"
        );
        assert_eq!(
            decision.reason.contains("held 32 at a time by workers"),
            asked.is_some() && per_instance == 32,
            "{name}: {}",
            decision.reason
        );
    }
}
