//! One scale decision for one app: each function's request, the app's aggregate, the scale-in
//! stabilisation window, and the clamps, in that order.
//!
//! The order matters and is Azure's where Azure has one: functions asking for more win and
//! their increases add up (capped at [`MAX_SCALE_OUT_STEP`]); otherwise the largest target
//! wins, i.e. the smallest reduction. The window then damps scale-in only, and the clamps come
//! last so that `minimumInstances`, `scale.limit` and the tenant's quota always hold.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::held::HeldByWorkers;
use super::incremental::{Vote, VoteRule, incremental_vote};
use super::listeners::ListenerLoad;
use super::targets::{MetricSample, TargetRule, target_instances};
use super::{MAX_SCALE_OUT_STEP, ScaleMode};

/// The sentence stored with every decision, built from this module's intermediate results.
mod reason;

#[derive(Clone, Debug, PartialEq)]
pub struct FunctionScaleInput {
    pub function: String,
    pub rule: TargetRule,
    /// Readings oldest first, the latest last (the scheduler keeps at most
    /// [`INCREMENTAL_SAMPLES`](super::INCREMENTAL_SAMPLES)).
    pub samples: Vec<MetricSample>,
    /// The newest reading failed: this function falls back to incremental voting over
    /// `samples` (DESIGN §5) and keeps the app at one instance or more.
    pub latest_unreadable: bool,
    /// With an unreadable metric: the listeners' load, which votes scale-out when they are
    /// saturated (then `samples` hold in-flight counts for the other incremental rules).
    pub listener_load: Option<ListenerLoad>,
    /// The function's `maxConcurrency`: it never asks for more instances than it has slots,
    /// since an instance beyond that could never start a call.
    pub max_concurrency: Option<u32>,
    /// Why `rule.per_instance` is lower than the trigger's setting, when it is: the workers'
    /// listeners hold fewer messages at once than the setting asks (see `held_rule`).
    pub held_by_workers: Option<HeldByWorkers>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ScaleInput {
    /// From the app setting.
    pub mode: ScaleMode,
    /// Instances the app has now (the previous decision's `to`).
    pub current: u32,
    /// `scale.minimumInstances`.
    pub minimum: u32,
    /// `scale.limit`.
    pub limit: u32,
    /// How many instances the tenant's quota still allows this app in total (None = no quota).
    pub tenant_allowance: Option<u32>,
    pub functions: Vec<FunctionScaleInput>,
    /// Unstabilised recommendations ([`ScaleDecision::recommended`]) made within the scale-in
    /// stabilisation window before this decision, oldest first.
    pub recent_recommendations: Vec<u32>,
}

/// How one function was judged, stored with the decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FunctionVerdict {
    pub function: String,
    /// `incremental` when the app is, or when this function fell back to voting.
    pub mode: ScaleMode,
    /// The latest reading; absent when it could not be read or none was taken yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_time_ms: Option<u64>,
    /// Target-based: the instances this function asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<u32>,
    /// Incremental: this function's vote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vote: Option<Vote>,
    pub per_instance: u32,
    /// What the trigger's setting asks one instance to take (RabbitMQ's `prefetchCount`), when
    /// `perInstance` is lower: the workers hold fewer messages at once, and an instance takes
    /// only what it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_per_instance: Option<u32>,
    /// The function's `maxConcurrency`, when its request was cut to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capped_by_concurrency: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScaleDecision {
    pub from: u32,
    pub to: u32,
    /// Before the stabilisation window and clamps: what the scheduler records for later
    /// windows.
    pub recommended: u32,
    pub mode: ScaleMode,
    /// One human-readable sentence naming the cause.
    pub reason: String,
    pub functions: Vec<FunctionVerdict>,
}

/// A function's verdict plus what the aggregation needs from it.
pub(super) struct Judged<'a> {
    pub input: &'a FunctionScaleInput,
    pub verdict: FunctionVerdict,
    /// Instances this function asks for: its target, or `current ± 1` for a vote.
    pub request: u32,
    pub rule: Option<VoteRule>,
}

/// What drove the aggregate, for the reason.
pub(super) enum Cause {
    NoFunctions,
    /// One function's request (index into the judged list).
    One(usize),
    /// Several functions scale out; their increases add up.
    Several {
        count: usize,
        increase: u64,
    },
    /// Incremental mode: every function votes scaleIn.
    AllScaleIn,
}

pub(super) struct Aggregate {
    pub value: u32,
    pub cause: Cause,
    /// The increase was cut to [`MAX_SCALE_OUT_STEP`].
    pub step_capped: bool,
}

/// What each step after aggregation changed, for the reason.
#[derive(Default)]
pub(super) struct Steps {
    /// The function whose unreadable metric kept the app at one instance.
    pub kept_for_unreadable: Option<usize>,
    pub held_by_window: Option<u32>,
    pub raised_to_minimum: bool,
    pub capped_by_limit: bool,
    pub capped_by_quota: bool,
}

/// The next instance count for one app, with each function's verdict and the reason.
///
/// The window damps scale-in in both modes; in incremental mode it can only hold the app where
/// it is, so a decision still moves at most one instance before the clamps.
pub fn decide(input: &ScaleInput) -> ScaleDecision {
    let current = input.current;
    let judged: Vec<Judged> = input
        .functions
        .iter()
        .map(|f| judge(f, input.mode, current))
        .collect();
    let aggregate = match input.mode {
        ScaleMode::Target => aggregate_targets(&judged, current),
        ScaleMode::Incremental => aggregate_votes(&judged, current),
    };
    let mut steps = Steps::default();

    // A function whose metric cannot be read still needs a running listener to report why
    // (and to process what it can), so such an app never scales to zero.
    let mut recommended = aggregate.value;
    if recommended == 0 {
        steps.kept_for_unreadable = first_by_name(&judged, |j| j.input.latest_unreadable);
        if steps.kept_for_unreadable.is_some() {
            recommended = 1;
        }
    }

    // Scale-in stabilisation: never go below what was recommended within the window, so a
    // backlog that drains between two bursts does not bounce the app. Scale-out is immediate.
    let mut to = recommended;
    if to < current {
        let window = input.recent_recommendations.iter().copied().max();
        let held = window.map_or(to, |w| w.max(to)).min(current);
        if held > to {
            steps.held_by_window = Some(held);
            to = held;
        }
    }

    // `minimumInstances` is a floor the user asked for, so it may add more than the step cap.
    if to < input.minimum {
        steps.raised_to_minimum = true;
        to = input.minimum;
    }
    if to > input.limit {
        steps.capped_by_limit = true;
        to = input.limit;
    }
    // The tenant's quota is a hard cap and wins over the minimum.
    if let Some(allowance) = input.tenant_allowance
        && to > allowance
    {
        steps.capped_by_quota = true;
        to = allowance;
    }

    let reason = reason::sentence(input, &judged, &aggregate, recommended, &steps);
    ScaleDecision {
        from: current,
        to,
        recommended,
        mode: input.mode,
        reason,
        functions: judged.into_iter().map(|j| j.verdict).collect(),
    }
}

fn judge(f: &FunctionScaleInput, mode: ScaleMode, current: u32) -> Judged<'_> {
    let latest = if f.latest_unreadable {
        None
    } else {
        f.samples.last()
    };
    let verdict = FunctionVerdict {
        function: f.function.clone(),
        mode,
        metric: latest.map(|s| s.value),
        queue_time_ms: latest.and_then(|s| s.queue_time_ms),
        target: None,
        vote: None,
        per_instance: f.rule.per_instance,
        asked_per_instance: f.held_by_workers.map(|h| h.asked),
        capped_by_concurrency: None,
    };
    let mut judged = judge_uncapped(f, mode, current, latest, verdict);
    // An instance needs one of the cap's slots to start a call: more instances than slots would
    // idle, so the function never asks for more than its cap (DESIGN §5 has no such rule; it
    // follows from `maxConcurrency`, see `crate::concurrency`).
    if let Some(cap) = f.max_concurrency
        && judged.request > cap
    {
        if judged.verdict.vote == Some(Vote::ScaleOut) {
            // Already at or above the cap: a vote to grow becomes none.
            judged.verdict.vote = Some(Vote::None);
            judged.request = current;
        } else {
            judged.request = cap;
        }
        judged.verdict.capped_by_concurrency = Some(cap);
    }
    judged
}

fn judge_uncapped<'a>(
    f: &'a FunctionScaleInput,
    mode: ScaleMode,
    current: u32,
    latest: Option<&MetricSample>,
    mut verdict: FunctionVerdict,
) -> Judged<'a> {
    match (mode, latest) {
        (ScaleMode::Target, Some(latest)) => {
            let target = target_instances(latest.value, &f.rule, latest.partitions);
            verdict.target = Some(target);
            Judged {
                input: f,
                verdict,
                request: target,
                rule: None,
            }
        }
        // Incremental app, an unreadable latest metric, or no reading yet: vote.
        _ => {
            let rule = match &f.listener_load {
                Some(load) if f.latest_unreadable && load.saturated() => {
                    VoteRule::ListenersSaturated
                }
                _ => incremental_vote(&f.samples, current),
            };
            let request = match rule.vote() {
                Vote::ScaleOut => current.saturating_add(1),
                Vote::ScaleIn => current.saturating_sub(1),
                Vote::None => current,
            };
            verdict.mode = ScaleMode::Incremental;
            verdict.vote = Some(rule.vote());
            Judged {
                input: f,
                verdict,
                request,
                rule: Some(rule),
            }
        }
    }
}

/// Target mode (votes, if any, count as requests for `current ± 1`).
fn aggregate_targets(judged: &[Judged], current: u32) -> Aggregate {
    let ups: Vec<usize> = (0..judged.len())
        .filter(|i| judged[*i].request > current)
        .collect();
    if !ups.is_empty() {
        let increase: u64 = ups
            .iter()
            .map(|i| u64::from(judged[*i].request - current))
            .sum();
        let step = increase.min(u64::from(MAX_SCALE_OUT_STEP)) as u32;
        let cause = match ups[..] {
            [one] => Cause::One(one),
            _ => Cause::Several {
                count: ups.len(),
                increase,
            },
        };
        return Aggregate {
            value: current.saturating_add(step),
            cause,
            step_capped: increase > u64::from(MAX_SCALE_OUT_STEP),
        };
    }
    // Only scale-in requests or none: the largest target, i.e. the smallest reduction.
    let largest = (0..judged.len()).min_by(|a, b| {
        let (a, b) = (&judged[*a], &judged[*b]);
        b.request
            .cmp(&a.request)
            .then_with(|| a.input.function.cmp(&b.input.function))
    });
    match largest {
        Some(i) => Aggregate {
            value: judged[i].request,
            cause: Cause::One(i),
            step_capped: false,
        },
        None => Aggregate {
            value: 0,
            cause: Cause::NoFunctions,
            step_capped: false,
        },
    }
}

/// Incremental mode: one vote to scale out is enough; scaling in needs every function.
fn aggregate_votes(judged: &[Judged], current: u32) -> Aggregate {
    let vote = |j: &Judged| j.verdict.vote;
    if let Some(i) = first_by_name(judged, |j| vote(j) == Some(Vote::ScaleOut)) {
        return Aggregate {
            value: current.saturating_add(1),
            cause: Cause::One(i),
            step_capped: false,
        };
    }
    if let Some(i) = first_by_name(judged, |j| vote(j) != Some(Vote::ScaleIn)) {
        return Aggregate {
            value: current,
            cause: Cause::One(i),
            step_capped: false,
        };
    }
    Aggregate {
        value: current.saturating_sub(1),
        cause: if judged.is_empty() {
            Cause::NoFunctions
        } else {
            Cause::AllScaleIn
        },
        step_capped: false,
    }
}

/// The matching function that sorts first by name, so reasons do not depend on input order.
fn first_by_name(judged: &[Judged], matches: impl Fn(&Judged) -> bool) -> Option<usize> {
    (0..judged.len())
        .filter(|i| matches(&judged[*i]))
        .min_by(|a, b| judged[*a].input.function.cmp(&judged[*b].input.function))
}
