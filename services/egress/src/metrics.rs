//! `shoal_egress_refusals_total{rule}`: how often the policy refused a destination, by rule.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use shoal_domain::egress::Rule;

/// Shared by every [`crate::Egress`] view of a process; register it once with the process's
/// registry.
#[derive(Clone, Debug, Default)]
pub struct EgressMetrics {
    counts: Arc<[AtomicU64; Rule::ALL.len()]>,
}

impl EgressMetrics {
    pub(crate) fn count(&self, rule: Rule) {
        self.counts[index(rule)].fetch_add(1, Ordering::Relaxed);
    }

    pub fn refusals(&self, rule: Rule) -> u64 {
        self.counts[index(rule)].load(Ordering::Relaxed)
    }
}

fn index(rule: Rule) -> usize {
    Rule::ALL
        .iter()
        .position(|r| *r == rule)
        .expect("every rule is in Rule::ALL")
}

impl Collector for EgressMetrics {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let mut family = encoder.encode_descriptor(
            "egress_refusals",
            "Connections to a tenant's destination the egress policy refused, by rule",
            None,
            prometheus_client::metrics::MetricType::Counter,
        )?;
        for rule in Rule::ALL {
            let labels = [("rule", rule.as_str())];
            ConstCounter::new(self.refusals(rule)).encode(family.encode_family(&labels)?)?;
        }
        Ok(())
    }
}
