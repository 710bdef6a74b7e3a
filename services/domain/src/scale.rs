//! How an app scales: target-based (Azure's default) or incremental, and the pure decision
//! the scheduler takes each tick.
//!
//! * `targets`: what each trigger scales on and how much one instance is meant to take
//!   (`host.json` and binding settings, Azure's defaults).
//! * `held`: a target that is what one listener holds at once (RabbitMQ's `prefetchCount`),
//!   lowered to what the workers' listeners really hold.
//! * `incremental`: Azure's ±1 votes over the last five samples, used when
//!   `TARGET_BASED_SCALING_ENABLED=0` or when a function's metric cannot be read.
//! * `decision`: one function's request per trigger, aggregated per app, damped on the way
//!   in, stepped on the way out, clamped to the app's and the tenant's limits.
//!
//! Nothing here reads a clock or a queue: the scheduler passes the samples and the recent
//! recommendations in, stores the [`ScaleDecision`] that comes out, and tests can replay it.

mod decision;
mod held;
mod incremental;
mod listeners;
mod targets;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

pub use decision::{FunctionScaleInput, FunctionVerdict, ScaleDecision, ScaleInput, decide};
pub use held::{HeldByWorkers, held_rule};
pub use incremental::{Vote, VoteRule, incremental_vote};
pub use listeners::ListenerLoad;
pub use targets::{
    DEFAULT_KAFKA_LAG_THRESHOLD, MetricKind, MetricSample, TargetRule, needs_an_instance,
    target_instances, target_rule,
};

/// The app setting Azure Functions uses to turn target-based scaling off.
pub const TARGET_BASED_SCALING_SETTING: &str = "TARGET_BASED_SCALING_ENABLED";

/// Target-based scaling adds at most this many instances per decision (Azure's documented
/// step), so one burst reading cannot allocate a whole worker pool at once.
pub const MAX_SCALE_OUT_STEP: u32 = 4;

/// Incremental votes look at this many of the latest samples (Azure's `QueueScaleMonitor`).
pub const INCREMENTAL_SAMPLES: usize = 5;

/// Incremental scaling keeps at least one instance per this many queued items.
pub const INCREMENTAL_LENGTH_PER_INSTANCE: u64 = 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum ScaleMode {
    /// Desired instances computed from each trigger's metric and per-instance target.
    Target,
    /// ±1 instance per decision, voted from recent samples.
    Incremental,
}

impl ScaleMode {
    /// Azure's rule: only `TARGET_BASED_SCALING_ENABLED=0` turns target-based scaling off;
    /// anything else, including `false` or an absent setting, leaves it on. Surrounding
    /// whitespace is ignored so a stray space from a copy-paste does not flip the mode.
    pub fn from_app_settings(settings: &BTreeMap<String, String>) -> ScaleMode {
        match settings.get(TARGET_BASED_SCALING_SETTING) {
            Some(value) if value.trim() == "0" => ScaleMode::Incremental,
            _ => ScaleMode::Target,
        }
    }
}
