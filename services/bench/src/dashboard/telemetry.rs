//! What invocation telemetry costs dispatch: the queue part's paired drains (see
//! [`crate::queue::paired`]) with `shoal worker --invocation-telemetry on` against `off`.

use anyhow::Result;
use tokio::process::Command;

use super::DashboardPlan;
use crate::queue::figures::Rate;
use crate::queue::paired::{self, PairedPlan, Switch};

struct Telemetry;

impl Switch for Telemetry {
    fn configure(&self, on: bool, worker: &mut Command) {
        worker.args(["--invocation-telemetry", if on { "on" } else { "off" }]);
    }
}

/// The rates with telemetry on and off.
pub async fn measure(plan: &DashboardPlan<'_>) -> Result<(Rate, Rate)> {
    let paired = PairedPlan {
        shoal: plan.shoal,
        admin_url: plan.admin_url,
        part: "dashboard",
        figure: "telemetry",
        rounds: plan.rounds,
        messages: plan.messages,
        batch_size: plan.batch_size,
        new_batch_threshold: plan.new_batch_threshold,
        timeout: plan.timeout,
    };
    paired::measure(&paired, &Telemetry).await
}
