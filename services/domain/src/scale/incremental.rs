//! Incremental votes: Azure's `QueueScaleMonitor` rules over the last five samples.
//!
//! Used for every function when the app sets `TARGET_BASED_SCALING_ENABLED=0`, and for one
//! function whose latest metric could not be read (Azure falls back the same way, e.g. for a
//! Service Bus connection with listen-only rights). The rules apply to every trigger kind:
//! they only compare lengths and ages.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::targets::MetricSample;
use super::{INCREMENTAL_LENGTH_PER_INSTANCE, INCREMENTAL_SAMPLES};

/// An incremental scale vote.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum Vote {
    ScaleOut,
    ScaleIn,
    None,
}

impl Vote {
    pub fn as_str(self) -> &'static str {
        match self {
            Vote::ScaleOut => "scaleOut",
            Vote::ScaleIn => "scaleIn",
            Vote::None => "none",
        }
    }
}

/// Which rule decided a vote, in the order Azure checks them; the first that matches wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VoteRule {
    /// Fewer than [`INCREMENTAL_SAMPLES`] samples: no vote yet.
    TooFewSamples,
    /// Latest length above `current × INCREMENTAL_LENGTH_PER_INSTANCE`.
    AboveLengthPerInstance,
    /// Every sample zero.
    Idle,
    /// Length strictly increasing from a non-zero first sample.
    LengthIncreasing,
    /// Age of the oldest message non-decreasing, from a non-zero first to a larger last one.
    QueueTimeIncreasing,
    /// Length strictly decreasing.
    LengthDecreasing,
    /// Age of the oldest message strictly decreasing.
    QueueTimeDecreasing,
    /// None of the above.
    Steady,
    /// The metric is unreadable and every listener holds all it may (see `listeners`).
    ListenersSaturated,
}

impl VoteRule {
    pub fn vote(self) -> Vote {
        match self {
            VoteRule::AboveLengthPerInstance
            | VoteRule::ListenersSaturated
            | VoteRule::LengthIncreasing
            | VoteRule::QueueTimeIncreasing => Vote::ScaleOut,
            VoteRule::Idle | VoteRule::LengthDecreasing | VoteRule::QueueTimeDecreasing => {
                Vote::ScaleIn
            }
            VoteRule::TooFewSamples | VoteRule::Steady => Vote::None,
        }
    }

    /// A few words for decision reasons.
    pub fn describe(self) -> &'static str {
        match self {
            VoteRule::TooFewSamples => "fewer than 5 samples",
            VoteRule::AboveLengthPerInstance => "more than 1000 per instance",
            VoteRule::Idle => "idle for 5 samples",
            VoteRule::LengthIncreasing => "length increasing",
            VoteRule::QueueTimeIncreasing => "queue time increasing",
            VoteRule::LengthDecreasing => "length decreasing",
            VoteRule::QueueTimeDecreasing => "queue time decreasing",
            VoteRule::Steady => "steady",
            VoteRule::ListenersSaturated => "listeners at capacity",
        }
    }
}

/// Votes from `samples` (oldest first) for an app that has `current` instances.
///
/// Only the last [`INCREMENTAL_SAMPLES`] count. Queue-time rules apply only when every one of
/// them carries `queue_time_ms`: a missing age is unknown, not zero.
pub fn incremental_vote(samples: &[MetricSample], current: u32) -> VoteRule {
    if samples.len() < INCREMENTAL_SAMPLES {
        return VoteRule::TooFewSamples;
    }
    let window = &samples[samples.len() - INCREMENTAL_SAMPLES..];
    let lengths: Vec<u64> = window.iter().map(|s| s.value).collect();
    let times: Option<Vec<u64>> = window.iter().map(|s| s.queue_time_ms).collect();
    let (first, latest) = (lengths[0], lengths[INCREMENTAL_SAMPLES - 1]);

    // Keep at least one instance per 1000 items.
    if u128::from(latest) > u128::from(current) * u128::from(INCREMENTAL_LENGTH_PER_INSTANCE) {
        return VoteRule::AboveLengthPerInstance;
    }
    if lengths.iter().all(|l| *l == 0) {
        return VoteRule::Idle;
    }
    if first > 0 && pairwise(&lengths, |a, b| a < b) {
        return VoteRule::LengthIncreasing;
    }
    if let Some(times) = &times {
        let (t_first, t_last) = (times[0], times[INCREMENTAL_SAMPLES - 1]);
        if t_first > 0 && t_first < t_last && pairwise(times, |a, b| a <= b) {
            return VoteRule::QueueTimeIncreasing;
        }
    }
    if pairwise(&lengths, |a, b| a > b) {
        return VoteRule::LengthDecreasing;
    }
    if let Some(times) = &times
        && pairwise(times, |a, b| a > b)
    {
        return VoteRule::QueueTimeDecreasing;
    }
    VoteRule::Steady
}

fn pairwise(values: &[u64], holds: impl Fn(u64, u64) -> bool) -> bool {
    values.windows(2).all(|w| holds(w[0], w[1]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lengths(values: &[u64]) -> Vec<MetricSample> {
        values
            .iter()
            .map(|v| MetricSample {
                value: *v,
                queue_time_ms: None,
                partitions: None,
            })
            .collect()
    }

    fn timed(values: &[(u64, u64)]) -> Vec<MetricSample> {
        values
            .iter()
            .map(|(v, t)| MetricSample {
                value: *v,
                queue_time_ms: Some(*t),
                partitions: None,
            })
            .collect()
    }

    #[test]
    fn each_rule_votes_as_azures_queue_scale_monitor() {
        use VoteRule::*;
        let cases: Vec<(&str, Vec<MetricSample>, u32, VoteRule)> = vec![
            ("no samples", lengths(&[]), 1, TooFewSamples),
            ("four samples", lengths(&[5000; 4]), 1, TooFewSamples),
            (
                "above 1000 per instance",
                lengths(&[0, 0, 0, 0, 2001]),
                2,
                AboveLengthPerInstance,
            ),
            (
                "exactly 1000 per instance",
                lengths(&[9, 9, 9, 9, 2000]),
                2,
                Steady,
            ),
            (
                "any item with no instance",
                lengths(&[0, 0, 0, 0, 1]),
                0,
                AboveLengthPerInstance,
            ),
            ("idle", lengths(&[0; 5]), 3, Idle),
            ("idle with no instance", lengths(&[0; 5]), 0, Idle),
            (
                "length increasing",
                lengths(&[1, 2, 3, 4, 5]),
                1,
                LengthIncreasing,
            ),
            (
                "increasing from zero is not",
                lengths(&[0, 2, 3, 4, 5]),
                1,
                Steady,
            ),
            (
                "flat step is not increasing",
                lengths(&[1, 2, 2, 4, 5]),
                1,
                Steady,
            ),
            (
                "queue time increasing",
                timed(&[(5, 10), (5, 10), (5, 20), (5, 30), (5, 40)]),
                1,
                QueueTimeIncreasing,
            ),
            (
                "queue time from zero is not",
                timed(&[(5, 0), (5, 10), (5, 20), (5, 30), (5, 40)]),
                1,
                Steady,
            ),
            (
                "queue time flat is not",
                timed(&[(5, 10), (5, 10), (5, 10), (5, 10), (5, 10)]),
                1,
                Steady,
            ),
            (
                "length decreasing",
                lengths(&[9, 7, 5, 3, 1]),
                1,
                LengthDecreasing,
            ),
            (
                "decreasing to zero",
                lengths(&[4, 3, 2, 1, 0]),
                1,
                LengthDecreasing,
            ),
            (
                "queue time decreasing",
                timed(&[(5, 50), (5, 40), (5, 30), (5, 20), (5, 10)]),
                1,
                QueueTimeDecreasing,
            ),
            (
                "length increase beats queue time decrease",
                timed(&[(1, 50), (2, 40), (3, 30), (4, 20), (5, 10)]),
                1,
                LengthIncreasing,
            ),
            (
                "queue time increase beats length decrease",
                timed(&[(9, 10), (8, 20), (7, 30), (6, 40), (5, 50)]),
                1,
                QueueTimeIncreasing,
            ),
            ("steady", lengths(&[5, 6, 5, 6, 5]), 1, Steady),
            (
                "older samples than the last five do not count",
                lengths(&[100, 0, 1, 2, 3, 4]),
                1,
                Steady,
            ),
        ];
        for (name, samples, current, want) in cases {
            assert_eq!(incremental_vote(&samples, current), want, "{name}");
        }
    }

    #[test]
    fn queue_time_counts_only_when_every_sample_has_it() {
        let mut samples = timed(&[(5, 10), (5, 20), (5, 30), (5, 40), (5, 50)]);
        assert_eq!(incremental_vote(&samples, 1), VoteRule::QueueTimeIncreasing);
        samples[2].queue_time_ms = None;
        assert_eq!(incremental_vote(&samples, 1), VoteRule::Steady);
    }

    #[test]
    fn rules_map_to_votes() {
        assert_eq!(VoteRule::AboveLengthPerInstance.vote(), Vote::ScaleOut);
        assert_eq!(VoteRule::QueueTimeDecreasing.vote(), Vote::ScaleIn);
        assert_eq!(VoteRule::TooFewSamples.vote(), Vote::None);
    }
}
