//! Properties of `decide` over arbitrary inputs.

use proptest::prelude::*;

use super::*;

fn metric_kind() -> impl Strategy<Value = MetricKind> {
    prop_oneof![
        Just(MetricKind::QueueLength),
        Just(MetricKind::ActiveMessages),
        Just(MetricKind::ActiveSessions),
        Just(MetricKind::UnprocessedEvents),
        Just(MetricKind::ConsumerLag),
        Just(MetricKind::PendingChanges),
    ]
}

fn sample() -> impl Strategy<Value = MetricSample> {
    (
        prop_oneof![Just(0u64), 0u64..200, 0u64..100_000],
        proptest::option::of(0u64..10_000),
        proptest::option::of(1u32..40),
    )
        .prop_map(|(value, queue_time_ms, partitions)| MetricSample {
            value,
            queue_time_ms,
            partitions,
        })
}

fn function() -> impl Strategy<Value = FunctionScaleInput> {
    (
        "[a-e]",
        metric_kind(),
        1u32..100,
        proptest::collection::vec(sample(), 0..=INCREMENTAL_SAMPLES),
        proptest::bool::weighted(0.2),
        proptest::option::weighted(0.2, 1u32..20),
    )
        .prop_map(
            |(function, metric, per_instance, samples, latest_unreadable, max_concurrency)| {
                FunctionScaleInput {
                    function,
                    rule: TargetRule {
                        metric,
                        per_instance,
                    },
                    samples,
                    latest_unreadable,
                    listener_load: None,
                    max_concurrency,
                    held_by_workers: None,
                }
            },
        )
}

fn input() -> impl Strategy<Value = ScaleInput> {
    (
        prop_oneof![Just(ScaleMode::Target), Just(ScaleMode::Incremental)],
        0u32..60,
        0u32..20,
        1u32..80,
        proptest::option::of(0u32..80),
        proptest::collection::vec(function(), 0..4),
        proptest::collection::vec(0u32..100, 0..6),
    )
        .prop_map(
            |(mode, current, minimum, limit, tenant_allowance, functions, recent)| ScaleInput {
                mode,
                current,
                // Validation keeps the minimum within the limit.
                minimum: minimum.min(limit),
                limit,
                tenant_allowance,
                functions,
                recent_recommendations: recent,
            },
        )
}

fn clamp(input: &ScaleInput, x: u32) -> u32 {
    let x = x.max(input.minimum).min(input.limit);
    input.tenant_allowance.map_or(x, |a| x.min(a))
}

proptest! {
    #[test]
    fn never_above_limit_or_allowance(input in input()) {
        let d = decide(&input);
        prop_assert!(d.to <= input.limit, "{d:?}");
        if let Some(allowance) = input.tenant_allowance {
            prop_assert!(d.to <= allowance, "{d:?}");
        }
    }

    #[test]
    fn never_below_minimum_unless_the_allowance_forces_it(input in input()) {
        let d = decide(&input);
        let floor = input.minimum.min(input.tenant_allowance.unwrap_or(u32::MAX));
        prop_assert!(d.to >= floor, "{d:?}");
    }

    #[test]
    fn target_mode_adds_at_most_the_step(mut input in input()) {
        input.mode = ScaleMode::Target;
        let d = decide(&input);
        prop_assert!(d.to <= input.current.max(input.minimum) + MAX_SCALE_OUT_STEP, "{d:?}");
        prop_assert!(d.recommended <= input.current + MAX_SCALE_OUT_STEP, "{d:?}");
    }

    #[test]
    fn a_lone_capped_function_never_grows_the_app_past_its_cap(mut input in input(), cap in 1u32..20) {
        input.functions.truncate(1);
        if let Some(f) = input.functions.first_mut() {
            f.max_concurrency = Some(cap);
        }
        let d = decide(&input);
        prop_assert!(d.recommended <= input.current.max(cap), "{d:?}");
    }

    #[test]
    fn incremental_mode_moves_one_unless_a_clamp_moves_it(mut input in input()) {
        input.mode = ScaleMode::Incremental;
        let d = decide(&input);
        let from = input.current;
        let reachable: Vec<u32> = [from.saturating_sub(1), from, from + 1]
            .iter()
            .map(|x| clamp(&input, *x))
            .collect();
        prop_assert!(reachable.contains(&d.to), "{d:?} not in {reachable:?}");
        prop_assert!(d.recommended.abs_diff(from) <= 1, "{d:?}");
    }

    #[test]
    fn a_larger_backlog_never_gives_fewer_instances(
        mut input in input(),
        another in function(),
        pick in any::<proptest::sample::Index>(),
        extra in 0u64..100_000,
    ) {
        input.mode = ScaleMode::Target;
        input.functions.push(another);
        let i = pick.index(input.functions.len());
        let f = &mut input.functions[i];
        f.latest_unreadable = false;
        if f.samples.is_empty() {
            f.samples.push(MetricSample { value: 0, queue_time_ms: None, partitions: None });
        }
        let smaller = decide(&input);
        let last = input.functions[i].samples.last_mut().expect("a sample");
        last.value = last.value.saturating_add(extra);
        let larger = decide(&input);
        prop_assert!(larger.to >= smaller.to, "{smaller:?} then {larger:?}");
        prop_assert!(larger.recommended >= smaller.recommended);
    }

    #[test]
    fn function_order_does_not_change_the_decision(mut input in input()) {
        for (i, f) in input.functions.iter_mut().enumerate() {
            f.function = format!("f{i}");
        }
        let mut reversed = input.clone();
        reversed.functions.reverse();
        let (a, b) = (decide(&input), decide(&reversed));
        prop_assert_eq!((a.to, a.recommended, &a.reason), (b.to, b.recommended, &b.reason));
    }
}
