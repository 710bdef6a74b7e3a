//! What a decision says about itself: the reason sentence, the verdicts and their JSON.

use super::*;

#[test]
fn reasons_name_the_cause() {
    let cases: Vec<(ScaleInput, &str)> = vec![
        (
            target(0, vec![func("orders", QUEUE, &[1000])]),
            "scale out: orders queueLength 1000 / 16 per instance = 63; +4 per decision",
        ),
        (
            target(2, vec![func("b", QUEUE, &[64]), func("a", QUEUE, &[48])]),
            "scale out: 2 functions ask for 3 more instances",
        ),
        (
            target(10, vec![func("a", QUEUE, &[48]), func("b", QUEUE, &[96])]),
            "scale in: b queueLength 96 / 16 per instance = 6",
        ),
        (
            target(3, vec![func("a", QUEUE, &[48])]),
            "steady: a queueLength 48 / 16 per instance = 3",
        ),
        (
            with(target(6, vec![func("q", QUEUE, &[32])]), |i| {
                i.recent_recommendations = vec![5]
            }),
            "scale in: q queueLength 32 / 16 per instance = 2; held at 5 by the stabilisation window",
        ),
        (
            with(target(2, vec![func("q", QUEUE, &[80])]), |i| i.limit = 4),
            "scale out: q queueLength 80 / 16 per instance = 5; capped by limit 4",
        ),
        (
            with(target(2, vec![func("q", QUEUE, &[80])]), |i| {
                i.tenant_allowance = Some(3)
            }),
            "scale out: q queueLength 80 / 16 per instance = 5; capped by tenant quota at 3",
        ),
        (
            with(target(0, vec![]), |i| i.minimum = 2),
            "steady: no function scales on a backlog; raised to minimumInstances 2",
        ),
        (
            target(0, vec![unreadable("sb", &[])]),
            "steady: sb votes none (fewer than 5 samples, metric unreadable); kept at 1 while sb's metric is unreadable",
        ),
        (
            incremental(2, vec![func("q", QUEUE, &[1, 2, 3, 4, 5])]),
            "scale out by 1: incremental votes, q votes scaleOut (length increasing)",
        ),
        (
            incremental(2, vec![func("q", QUEUE, &[0; 5])]),
            "scale in by 1: incremental votes, all functions vote scaleIn",
        ),
        (
            incremental(2, vec![func("q", QUEUE, &[5, 6, 5, 6, 5])]),
            "steady: incremental votes, q votes none (steady)",
        ),
    ];
    for (input, want) in cases {
        assert_eq!(decide(&input).reason, want);
    }
}

#[test]
fn verdicts_keep_the_function_order_and_readings() {
    let input = target(
        1,
        vec![
            FunctionScaleInput {
                samples: vec![MetricSample {
                    value: 33,
                    queue_time_ms: Some(1500),
                    partitions: None,
                }],
                ..func("b", QUEUE, &[])
            },
            func("a", rule(MetricKind::ActiveMessages, 8), &[0]),
        ],
    );
    let d = decide(&input);
    let want_b = FunctionVerdict {
        function: "b".to_owned(),
        mode: ScaleMode::Target,
        metric: Some(33),
        queue_time_ms: Some(1500),
        target: Some(3),
        vote: None,
        per_instance: 16,
        asked_per_instance: None,
        capped_by_concurrency: None,
    };
    assert_eq!(d.functions[0], want_b);
    assert_eq!(
        (d.functions[1].function.as_str(), d.functions[1].target),
        ("a", Some(0))
    );
}

/// A target lowered to what the workers hold at once says so, in the reason and the verdict.
#[test]
fn a_target_held_by_workers_says_what_the_setting_asked() {
    let held = FunctionScaleInput {
        held_by_workers: Some(HeldByWorkers {
            setting: "prefetchCount",
            asked: 250,
        }),
        ..func("Take", rule(MetricKind::QueueLength, 32), &[2000])
    };
    let d = decide(&target(0, vec![held]));
    assert_eq!(
        d.reason,
        "scale out: Take queueLength 2000 / 32 per instance (prefetchCount 250, held 32 at a \
         time by workers) = 63; +4 per decision"
    );
    assert_eq!(
        serde_json::to_value(&d.functions).unwrap(),
        serde_json::json!([{"function": "Take", "mode": "target", "metric": 2000, "target": 63,
                            "perInstance": 32, "askedPerInstance": 250}])
    );
}

#[test]
fn decisions_serialize_in_camel_case_without_empty_fields() {
    let d = decide(&target(0, vec![func("orders", QUEUE, &[1000])]));
    let json = serde_json::to_value(&d).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "from": 0, "to": 4, "recommended": 4, "mode": "target",
            "reason": "scale out: orders queueLength 1000 / 16 per instance = 63; +4 per decision",
            "functions": [{"function": "orders", "mode": "target", "metric": 1000, "target": 63,
                           "perInstance": 16}],
        })
    );
    let back: ScaleDecision = serde_json::from_value(json).unwrap();
    assert_eq!(back, d);
    assert_eq!(
        serde_json::to_value(rule(MetricKind::UnprocessedEvents, 5)).unwrap(),
        serde_json::json!({"metric": "unprocessedEvents", "perInstance": 5})
    );
    assert_eq!(
        serde_json::to_value(Vote::ScaleOut).unwrap(),
        serde_json::json!("scaleOut")
    );
}

/// Listen-only Service Bus rights: the backlog is unreadable, so the listeners' load votes.
#[test]
fn an_unreadable_metric_falls_back_to_the_listeners_load() {
    let listen_only = |in_flight: u64, values: &[u64]| FunctionScaleInput {
        listener_load: Some(ListenerLoad {
            in_flight,
            capacity: 32,
            cause: "listen-only rights".into(),
        }),
        ..unreadable("sb", values)
    };
    let cases: Vec<(ScaleInput, u32, &str)> = vec![
        (
            target(2, vec![listen_only(32, &[32])]),
            3,
            "scale out: sb votes scaleOut (listeners at capacity, metric unreadable: listen-only rights; listeners hold 32 of 32)",
        ),
        (
            target(2, vec![listen_only(10, &[10])]),
            2,
            "steady: sb votes none (fewer than 5 samples, metric unreadable: listen-only rights; listeners hold 10 of 32)",
        ),
        (
            target(2, vec![listen_only(0, &[0; 5])]),
            1,
            "scale in: sb votes scaleIn (idle for 5 samples, metric unreadable: listen-only rights; listeners hold 0 of 32)",
        ),
        (
            target(1, vec![listen_only(0, &[0; 5])]),
            1,
            "scale in: sb votes scaleIn (idle for 5 samples, metric unreadable: listen-only rights; listeners hold 0 of 32); kept at 1 while sb's metric is unreadable",
        ),
    ];
    for (input, to, reason) in cases {
        let decision = decide(&input);
        assert_eq!((decision.to, decision.reason.as_str()), (to, reason));
    }
}
