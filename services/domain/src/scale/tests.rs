//! Tables of scale decisions: the documented target-based examples, the stabilisation window
//! and every clamp here; incremental votes and reasons in the submodules.

use std::collections::BTreeMap;

use super::*;

mod incremental;
mod reasons;

/// A trigger binding as a function's `function.json` writes it.
pub(super) fn binding(value: serde_json::Value) -> crate::bindings::Binding {
    crate::bindings::parse_binding(&value, "bindings[0]").expect("test binding is valid")
}

/// An app's `host.json`.
pub(super) fn host(value: serde_json::Value) -> crate::host_config::HostConfig {
    crate::host_config::HostConfig::parse(&value, "hostConfig").expect("test hostConfig is valid")
}

pub(super) fn rule(metric: MetricKind, per_instance: u32) -> TargetRule {
    TargetRule {
        metric,
        per_instance,
    }
}

pub(super) const QUEUE: TargetRule = TargetRule {
    metric: MetricKind::QueueLength,
    per_instance: 16,
};

pub(super) fn sample(value: u64) -> MetricSample {
    MetricSample {
        value,
        queue_time_ms: None,
        partitions: None,
    }
}

pub(super) fn func(name: &str, rule: TargetRule, values: &[u64]) -> FunctionScaleInput {
    FunctionScaleInput {
        function: name.to_owned(),
        rule,
        samples: values.iter().copied().map(sample).collect(),
        latest_unreadable: false,
        listener_load: None,
        max_concurrency: None,
        held_by_workers: None,
    }
}

pub(super) fn unreadable(name: &str, values: &[u64]) -> FunctionScaleInput {
    FunctionScaleInput {
        latest_unreadable: true,
        ..func(name, QUEUE, values)
    }
}

pub(super) fn app(mode: ScaleMode, current: u32, functions: Vec<FunctionScaleInput>) -> ScaleInput {
    ScaleInput {
        mode,
        current,
        minimum: 0,
        limit: 100,
        tenant_allowance: None,
        functions,
        recent_recommendations: vec![],
    }
}

pub(super) fn target(current: u32, functions: Vec<FunctionScaleInput>) -> ScaleInput {
    app(ScaleMode::Target, current, functions)
}

pub(super) fn incremental(current: u32, functions: Vec<FunctionScaleInput>) -> ScaleInput {
    app(ScaleMode::Incremental, current, functions)
}

pub(super) fn with(mut input: ScaleInput, change: impl FnOnce(&mut ScaleInput)) -> ScaleInput {
    change(&mut input);
    input
}

#[test]
fn target_based_decisions() {
    use MetricKind::*;
    let events = |value, partitions| FunctionScaleInput {
        samples: vec![MetricSample {
            value,
            queue_time_ms: None,
            partitions,
        }],
        ..func("hub", rule(UnprocessedEvents, 153), &[])
    };
    // (name, input, to, recommended)
    let cases: Vec<(&str, ScaleInput, u32, u32)> = vec![
        (
            "1000 messages / batchSize 16 asks for 63, +4 from 0",
            target(0, vec![func("orders", QUEUE, &[1000])]),
            4,
            4,
        ),
        (
            "target reached in steps of 4",
            target(60, vec![func("orders", QUEUE, &[1000])]),
            63,
            63,
        ),
        (
            "two functions asking +3 each are capped at +4",
            target(2, vec![func("a", QUEUE, &[80]), func("b", QUEUE, &[80])]),
            6,
            6,
        ),
        (
            "increases of +1 and +2 add up to +3",
            target(2, vec![func("a", QUEUE, &[48]), func("b", QUEUE, &[64])]),
            5,
            5,
        ),
        (
            "only scale-in requests: the largest target",
            target(10, vec![func("a", QUEUE, &[48]), func("b", QUEUE, &[96])]),
            6,
            6,
        ),
        (
            "scale-out beats scale-in",
            target(5, vec![func("a", QUEUE, &[16]), func("b", QUEUE, &[112])]),
            7,
            7,
        ),
        (
            "steady when the largest target is current",
            target(3, vec![func("a", QUEUE, &[48]), func("b", QUEUE, &[1])]),
            3,
            3,
        ),
        (
            "service bus sessions: 40 / maxConcurrentSessions 8",
            target(3, vec![func("s", rule(ActiveMessages, 8), &[40])]),
            5,
            5,
        ),
        (
            "service bus batched: 2500 / maxMessageBatchSize 1000",
            target(0, vec![func("s", rule(ActiveMessages, 1000), &[2500])]),
            3,
            3,
        ),
        (
            "event hubs: 1000 / threshold 153 = 7, spread over 10 partitions",
            target(8, vec![events(1000, Some(10))]),
            10,
            10,
        ),
        (
            "event hubs: capped at the partition count",
            target(4, vec![events(100_000, Some(4))]),
            4,
            4,
        ),
        (
            "event hubs without a partition count",
            target(5, vec![events(1000, None)]),
            7,
            7,
        ),
        (
            "kafka lag / lagThreshold 1000",
            target(0, vec![func("k", rule(ConsumerLag, 1000), &[2500])]),
            3,
            3,
        ),
        (
            "cosmos pending / maxItemsPerInvocation 100",
            target(1, vec![func("c", rule(PendingChanges, 100), &[250])]),
            3,
            3,
        ),
        (
            "the latest sample counts, not older ones",
            target(5, vec![func("orders", QUEUE, &[5000, 5000, 16])]),
            1,
            1,
        ),
        (
            "no backlog-scaled function (httpTrigger only) scales to zero",
            target(3, vec![]),
            0,
            0,
        ),
    ];
    for (name, input, to, recommended) in cases {
        let d = decide(&input);
        assert_eq!(
            (d.to, d.recommended),
            (to, recommended),
            "{name}: {}",
            d.reason
        );
        assert_eq!(
            (d.from, d.mode),
            (input.current, ScaleMode::Target),
            "{name}"
        );
    }
}

#[test]
fn scale_in_is_held_by_the_window_and_scale_out_is_not() {
    let small = || target(6, vec![func("q", QUEUE, &[32])]); // asks for 2
    let cases: Vec<(&str, Vec<u32>, u32)> = vec![
        ("no window", vec![], 2),
        ("window below the target", vec![1, 2], 2),
        ("largest recent recommendation", vec![3, 5, 4], 5),
        ("never above current", vec![9], 6),
    ];
    for (name, recent, to) in cases {
        let d = decide(&with(small(), |i| i.recent_recommendations = recent));
        assert_eq!((d.to, d.recommended), (to, 2), "{name}: {}", d.reason);
    }
    let up = with(target(2, vec![func("q", QUEUE, &[80])]), |i| {
        i.recent_recommendations = vec![0, 0, 1]
    });
    assert_eq!(decide(&up).to, 5);
}

#[test]
fn clamps_to_minimum_limit_and_quota() {
    let busy = || target(2, vec![func("q", QUEUE, &[80])]); // asks for 5
    let idle = || target(2, vec![func("q", QUEUE, &[0])]);
    let cases: Vec<(&str, ScaleInput, u32)> = vec![
        ("limit", with(busy(), |i| i.limit = 4), 4),
        ("quota", with(busy(), |i| i.tenant_allowance = Some(3)), 3),
        (
            "quota below limit",
            with(busy(), |i| {
                i.limit = 4;
                i.tenant_allowance = Some(3)
            }),
            3,
        ),
        ("minimum", with(idle(), |i| i.minimum = 1), 1),
        (
            "minimum beyond the step cap",
            with(idle(), |i| i.minimum = 10),
            10,
        ),
        (
            "quota wins over minimum",
            with(idle(), |i| {
                i.minimum = 2;
                i.tenant_allowance = Some(0)
            }),
            0,
        ),
        (
            "a lowered limit scales in at once",
            with(idle(), |i| {
                i.current = 10;
                i.limit = 5;
                i.recent_recommendations = vec![10];
            }),
            5,
        ),
    ];
    for (name, input, to) in cases {
        let d = decide(&input);
        assert_eq!(d.to, to, "{name}: {}", d.reason);
    }
}

#[test]
fn a_function_never_asks_for_more_instances_than_its_max_concurrency() {
    let capped = |values: &[u64], cap| FunctionScaleInput {
        max_concurrency: Some(cap),
        ..func("q", QUEUE, values)
    };
    // (name, input, to, the verdict says it was cut)
    let cases: Vec<(&str, ScaleInput, u32, bool)> = vec![
        (
            "a target above the cap is cut to it",
            target(1, vec![capped(&[160], 3)]),
            3,
            true,
        ),
        (
            "a target within the cap is left alone",
            target(1, vec![capped(&[32], 3)]),
            2,
            false,
        ),
        (
            "at the cap a scale-out vote becomes none",
            incremental(3, vec![capped(&[1, 2, 3, 4, 5], 3)]),
            3,
            true,
        ),
        (
            "below the cap a scale-out vote stands",
            incremental(2, vec![capped(&[1, 2, 3, 4, 5], 3)]),
            3,
            false,
        ),
        (
            "another function may still want more instances",
            target(1, vec![capped(&[160], 2), func("r", QUEUE, &[64])]),
            5,
            true,
        ),
    ];
    for (name, input, to, cut) in cases {
        let d = decide(&input);
        assert_eq!(d.to, to, "{name}: {}", d.reason);
        let verdict = d.functions.iter().find(|f| f.function == "q").unwrap();
        assert_eq!(
            verdict.capped_by_concurrency.is_some(),
            cut,
            "{name}: {}",
            d.reason
        );
        if cut && d.reason.contains("q ") {
            assert!(
                d.reason.contains("(maxConcurrency "),
                "{name}: {}",
                d.reason
            );
        }
    }
}

#[test]
fn only_zero_selects_incremental_scaling() {
    let cases = [
        (None, ScaleMode::Target),
        (Some("0"), ScaleMode::Incremental),
        (Some(" 0 "), ScaleMode::Incremental),
        (Some("0\n"), ScaleMode::Incremental),
        (Some("1"), ScaleMode::Target),
        (Some("false"), ScaleMode::Target),
        (Some(""), ScaleMode::Target),
        (Some("00"), ScaleMode::Target),
        (Some("O"), ScaleMode::Target),
    ];
    for (value, want) in cases {
        let mut settings = BTreeMap::new();
        settings.insert("OTHER".to_owned(), "0".to_owned());
        if let Some(value) = value {
            settings.insert(TARGET_BASED_SCALING_SETTING.to_owned(), value.to_owned());
        }
        assert_eq!(ScaleMode::from_app_settings(&settings), want, "{value:?}");
    }
}

#[test]
fn serializes_as_lowercase_words() {
    assert_eq!(
        serde_json::to_string(&ScaleMode::Target).unwrap(),
        "\"target\""
    );
    assert_eq!(
        serde_json::to_string(&ScaleMode::Incremental).unwrap(),
        "\"incremental\""
    );
}
