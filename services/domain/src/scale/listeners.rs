//! The listeners' own load, for a function whose metric cannot be read.
//!
//! Azure's scale controller falls back to incremental scaling when it cannot read a trigger's
//! metric, e.g. a Service Bus connection with listen-only rights, which may receive messages
//! but not read the entity's runtime properties (DESIGN §5). Without the backlog, the next best
//! signal is whether the listeners are busy: when every listener holds as many messages as it
//! may (`maxConcurrentCalls`, `maxConcurrentSessions` or `maxMessageBatchSize` each), more
//! messages are waiting than the instances can take, so the function votes to scale out by one.
//! Otherwise the usual incremental rules run over the in-flight counts (idle for five samples
//! → in; increasing → out).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// What a function's listeners report, summed over its instances.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListenerLoad {
    /// Messages the listeners hold now.
    pub in_flight: u64,
    /// Messages they may hold: listeners × the per-instance target.
    pub capacity: u64,
    /// Why the metric itself cannot be read, for the decision's reason.
    pub cause: String,
}

impl ListenerLoad {
    /// Every listener holds all it may. No listener reporting is not saturation.
    pub fn saturated(&self) -> bool {
        self.capacity > 0 && self.in_flight >= self.capacity
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturated_only_at_capacity_with_listeners() {
        let load = |in_flight, capacity| ListenerLoad {
            in_flight,
            capacity,
            cause: String::new(),
        };
        let cases = [
            (0, 0, false),
            (5, 0, false),
            (0, 16, false),
            (15, 16, false),
            (16, 16, true),
            (20, 16, true),
        ];
        for (in_flight, capacity, want) in cases {
            assert_eq!(
                load(in_flight, capacity).saturated(),
                want,
                "{in_flight}/{capacity}"
            );
        }
    }
}
