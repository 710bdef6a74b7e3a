//! The one-sentence reason stored with every decision: the cause first, then each step that
//! changed the number, in the order they were applied. Deterministic, so tests can pin it and
//! operators can grep for it.

use std::fmt::Write;

use super::{Aggregate, Cause, Judged, ScaleInput, Steps};
use crate::scale::{MAX_SCALE_OUT_STEP, ScaleMode};

pub(super) fn sentence(
    input: &ScaleInput,
    judged: &[Judged],
    aggregate: &Aggregate,
    recommended: u32,
    steps: &Steps,
) -> String {
    // The direction of what the functions asked for, before the unreadable-metric floor.
    let direction = match aggregate.value.cmp(&input.current) {
        std::cmp::Ordering::Greater => "scale out",
        std::cmp::Ordering::Less => "scale in",
        std::cmp::Ordering::Equal => "steady",
    };
    let by_one = if input.mode == ScaleMode::Incremental && direction != "steady" {
        " by 1"
    } else {
        ""
    };
    let votes = if input.mode == ScaleMode::Incremental {
        "incremental votes, "
    } else {
        ""
    };
    let cause = match aggregate.cause {
        Cause::NoFunctions => "no function scales on a backlog".to_owned(),
        Cause::One(i) => describe(&judged[i]),
        Cause::Several { count, increase } => {
            format!("{count} functions ask for {increase} more instances")
        }
        Cause::AllScaleIn => "all functions vote scaleIn".to_owned(),
    };
    let mut s = format!("{direction}{by_one}: {votes}{cause}");

    if aggregate.step_capped {
        let _ = write!(s, "; +{MAX_SCALE_OUT_STEP} per decision");
    }
    if let Some(i) = steps.kept_for_unreadable {
        let f = &judged[i].input.function;
        let _ = write!(
            s,
            "; kept at {recommended} while {f}'s metric is unreadable"
        );
    }
    if let Some(held) = steps.held_by_window {
        let _ = write!(s, "; held at {held} by the stabilisation window");
    }
    if steps.raised_to_minimum {
        let _ = write!(s, "; raised to minimumInstances {}", input.minimum);
    }
    if steps.capped_by_limit {
        let _ = write!(s, "; capped by limit {}", input.limit);
    }
    if steps.capped_by_quota
        && let Some(allowance) = input.tenant_allowance
    {
        let _ = write!(s, "; capped by tenant quota at {allowance}");
    }
    s
}

/// `orders queueLength 1000 / 16 per instance = 63`, `orders queueLength 2000 / 32 per instance
/// (prefetchCount 250, held 32 at a time by workers) = 63`, or `orders votes scaleIn (idle for 5
/// samples)`.
fn describe(j: &Judged) -> String {
    let described = describe_request(j);
    match j.verdict.capped_by_concurrency {
        Some(cap) => format!("{described}, cut to {} (maxConcurrency {cap})", j.request),
        None => described,
    }
}

fn describe_request(j: &Judged) -> String {
    let f = &j.input.function;
    match (j.rule, j.verdict.metric, j.verdict.target) {
        (None, Some(metric), Some(target)) => {
            let per_instance = j.input.rule.per_instance;
            let held = match j.input.held_by_workers {
                Some(h) => format!(
                    " ({} {}, held {per_instance} at a time by workers)",
                    h.setting, h.asked
                ),
                None => String::new(),
            };
            format!(
                "{f} {} {metric} / {per_instance} per instance{held} = {target}",
                j.input.rule.metric.as_str(),
            )
        }
        (Some(rule), _, _) => {
            let unreadable = match (&j.input.listener_load, j.input.latest_unreadable) {
                (Some(load), true) => format!(
                    ", metric unreadable: {}; listeners hold {} of {}",
                    load.cause, load.in_flight, load.capacity
                ),
                (None, true) => ", metric unreadable".to_owned(),
                (_, false) => String::new(),
            };
            format!(
                "{f} votes {} ({}{unreadable})",
                rule.vote().as_str(),
                rule.describe()
            )
        }
        // Not produced by `judge`: a target verdict always has a metric and a target.
        _ => f.clone(),
    }
}
