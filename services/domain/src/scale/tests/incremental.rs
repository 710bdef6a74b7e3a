//! Incremental decisions: each vote rule through `decide`, and the fallback of a function
//! whose metric cannot be read.

use super::*;

#[test]
fn incremental_decisions_move_one_instance() {
    let rising = [10, 20, 30, 40, 50];
    let falling = [50, 40, 30, 20, 10];
    let cases: Vec<(&str, ScaleInput, u32)> = vec![
        (
            "more than 1000 per instance",
            incremental(2, vec![func("q", QUEUE, &[0, 0, 0, 0, 2001])]),
            3,
        ),
        (
            "a huge backlog still adds one",
            incremental(0, vec![func("q", QUEUE, &[1_000_000; 5])]),
            1,
        ),
        ("idle", incremental(2, vec![func("q", QUEUE, &[0; 5])]), 1),
        (
            "idle at zero stays",
            incremental(0, vec![func("q", QUEUE, &[0; 5])]),
            0,
        ),
        (
            "length increasing",
            incremental(2, vec![func("q", QUEUE, &rising)]),
            3,
        ),
        (
            "length decreasing",
            incremental(2, vec![func("q", QUEUE, &falling)]),
            1,
        ),
        (
            "steady",
            incremental(2, vec![func("q", QUEUE, &[5, 6, 5, 6, 5])]),
            2,
        ),
        (
            "too few samples",
            incremental(2, vec![func("q", QUEUE, &[9_999])]),
            2,
        ),
        (
            "one scaleOut wins, and two add only one",
            incremental(
                2,
                vec![
                    func("a", QUEUE, &rising),
                    func("b", QUEUE, &rising),
                    func("c", QUEUE, &falling),
                ],
            ),
            3,
        ),
        (
            "scale in needs every function",
            incremental(
                2,
                vec![
                    func("a", QUEUE, &falling),
                    func("b", QUEUE, &[5, 6, 5, 6, 5]),
                ],
            ),
            2,
        ),
        (
            "all scaleIn",
            incremental(
                2,
                vec![func("a", QUEUE, &falling), func("b", QUEUE, &[0; 5])],
            ),
            1,
        ),
        ("no function scales in by one", incremental(3, vec![]), 2),
    ];
    for (name, input, to) in cases {
        let d = decide(&input);
        assert_eq!(d.to, to, "{name}: {}", d.reason);
        assert!(
            d.functions.iter().all(|v| v.mode == ScaleMode::Incremental
                && v.vote.is_some()
                && v.target.is_none()),
            "{name}"
        );
    }
}

#[test]
fn queue_time_votes_in_incremental_mode() {
    let timed = |times: [u64; 5]| FunctionScaleInput {
        samples: times
            .iter()
            .map(|t| MetricSample {
                value: 5,
                queue_time_ms: Some(*t),
                partitions: None,
            })
            .collect(),
        ..func("q", QUEUE, &[])
    };
    assert_eq!(decide(&incremental(2, vec![timed([1, 2, 2, 3, 4])])).to, 3);
    assert_eq!(decide(&incremental(2, vec![timed([5, 4, 3, 2, 1])])).to, 1);
}

#[test]
fn the_app_setting_switches_decide_to_single_steps() {
    let mut settings = BTreeMap::new();
    settings.insert(TARGET_BASED_SCALING_SETTING.to_owned(), "0".to_owned());
    let mode = ScaleMode::from_app_settings(&settings);
    let up = app(mode, 4, vec![func("q", QUEUE, &[100_000; 5])]);
    let down = app(mode, 4, vec![func("q", QUEUE, &[0; 5])]);
    assert_eq!((decide(&up).to, decide(&down).to), (5, 3));
}

#[test]
fn unreadable_metrics_fall_back_to_votes() {
    let rising = [10, 20, 30, 40, 50];
    let cases: Vec<(&str, ScaleInput, u32)> = vec![
        (
            "a rising vote counts as +1 beside a target's +2",
            target(2, vec![unreadable("sb", &rising), func("q", QUEUE, &[64])]),
            5,
        ),
        (
            "a vote for none holds a scale-in at current",
            target(4, vec![unreadable("sb", &[]), func("q", QUEUE, &[16])]),
            4,
        ),
        (
            "a scaleIn vote asks for one less",
            target(4, vec![unreadable("sb", &[0; 5]), func("q", QUEUE, &[0])]),
            3,
        ),
        (
            "an unreadable metric keeps one instance",
            target(0, vec![unreadable("sb", &[])]),
            1,
        ),
        (
            "even when it votes scaleIn",
            target(1, vec![unreadable("sb", &[0; 5])]),
            1,
        ),
        (
            "also in incremental mode",
            incremental(1, vec![unreadable("sb", &[0; 5])]),
            1,
        ),
        (
            "no reading yet votes none",
            target(2, vec![func("q", QUEUE, &[])]),
            2,
        ),
    ];
    for (name, input, to) in cases {
        let d = decide(&input);
        assert_eq!(d.to, to, "{name}: {}", d.reason);
    }
    let d = decide(&target(2, vec![unreadable("sb", &rising)]));
    let v = &d.functions[0];
    assert_eq!(
        (v.mode, v.vote, v.metric, v.target),
        (ScaleMode::Incremental, Some(Vote::ScaleOut), None, None)
    );
}
