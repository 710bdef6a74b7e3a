//! `/metrics` for listeners and the worker's errors: read from the [`StatsRegistry`] at scrape
//! time, so a stopped listener's series disappear with it.

use std::collections::BTreeMap;
use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use shoal_domain::workers::{ConcurrencyReport, ListenerReport};

use crate::error::ErrorCounts;
use crate::stats::StatsRegistry;

/// Register with a `prometheus_client` registry (the API's in `shoal dev`, the worker's own
/// otherwise). It reads every given worker's registry, so the in-process workers of `shoal dev`
/// share one set of metric families (a family may appear only once per exposition).
#[derive(Debug, Clone)]
pub struct ListenerMetrics(pub Vec<Arc<StatsRegistry>>);

type Labels = [(&'static str, String); 5];
/// A series: name, help text and how to read its value from a report.
type Series<T> = (&'static str, &'static str, fn(&ListenerReport) -> T);
/// A series of a capped listener's `maxConcurrency` slots.
type SlotSeries = (&'static str, &'static str, fn(&ConcurrencyReport) -> u32);

fn labels(r: &ListenerReport) -> Labels {
    [
        ("tenant", r.tenant.clone()),
        ("app", r.app.clone()),
        ("instance", r.instance.to_string()),
        ("function", r.function.clone()),
        ("queue", r.source.clone()),
    ]
}

impl Collector for ListenerMetrics {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let reports: Vec<ListenerReport> = self.0.iter().flat_map(|s| s.reports()).collect();
        let counters: [Series<u64>; 7] = [
            (
                "listener_messages_received",
                "Messages received by the listener",
                |r| r.received,
            ),
            (
                "listener_messages_succeeded",
                "Messages whose invocation succeeded",
                |r| r.succeeded,
            ),
            ("listener_messages_failed", "Invocations that failed", |r| {
                r.failed
            }),
            (
                "listener_messages_deferred",
                "Calls the handler answered 429 or 503: the message was deferred, no attempt counted",
                |r| r.deferred,
            ),
            (
                "listener_messages_parked",
                "Messages parked at their source until a far-off retry is due",
                |r| r.parked,
            ),
            (
                "listener_invocations_retried",
                "Attempts repeated under the function's retry policy",
                |r| r.retried,
            ),
            (
                "listener_messages_poisoned",
                "Messages moved to the poison queue",
                |r| r.poisoned,
            ),
        ];
        for (name, help, value) in counters {
            let family = ConstCounter::new(0u64);
            let mut metric = encoder.encode_descriptor(name, help, None, family.metric_type())?;
            for r in &reports {
                ConstCounter::new(value(r)).encode(metric.encode_family(&labels(r))?)?;
            }
        }
        let gauges: [Series<f64>; 4] = [
            ("listener_in_flight", "Messages being processed now", |r| {
                r.in_flight as f64
            }),
            (
                "listener_last_poll_timestamp_seconds",
                "When the listener last polled (Unix time)",
                |r| {
                    r.last_poll
                        .map_or(0.0, |t| t.timestamp_millis() as f64 / 1000.0)
                },
            ),
            (
                "listener_handler_unreachable_since_timestamp_seconds",
                "Since when the app's handler takes no connections (Unix time); 0 while it does",
                |r| {
                    r.handler_unreachable_since
                        .map_or(0.0, |t| t.timestamp_millis() as f64 / 1000.0)
                },
            ),
            (
                "listener_backoff_seconds",
                "The listener's current wait between polls",
                |r| r.current_backoff_ms as f64 / 1000.0,
            ),
        ];
        for (name, help, value) in gauges {
            let family = ConstGauge::new(0.0f64);
            let mut metric = encoder.encode_descriptor(name, help, None, family.metric_type())?;
            for r in &reports {
                ConstGauge::new(value(r)).encode(metric.encode_family(&labels(r))?)?;
            }
        }
        // Only capped functions have these series (see `crate::concurrency`).
        let slots: [SlotSeries; 4] = [
            (
                "listener_max_concurrency",
                "The function's maxConcurrency across every instance",
                |c| c.max_concurrency,
            ),
            (
                "listener_concurrency_slots_held",
                "Slots of the function's maxConcurrency this instance holds",
                |c| c.held,
            ),
            (
                "listener_concurrency_limit",
                "Handler calls this instance may have in flight under maxConcurrency (0 while its lease lapses)",
                |c| c.limit,
            ),
            (
                "listener_concurrency_in_use",
                "Handler calls of the function in flight on this instance",
                |c| c.in_use,
            ),
        ];
        for (name, help, value) in slots {
            let family = ConstGauge::new(0.0f64);
            let mut metric = encoder.encode_descriptor(name, help, None, family.metric_type())?;
            for r in &reports {
                if let Some(c) = &r.concurrency {
                    ConstGauge::new(f64::from(value(c)))
                        .encode(metric.encode_family(&labels(r))?)?;
                }
            }
        }
        let family = ConstCounter::new(0u64);
        let mut metric = encoder.encode_descriptor(
            "worker_errors",
            "Failed runtime steps the worker retries, by step",
            None,
            family.metric_type(),
        )?;
        for (label, count) in totals(&self.0, StatsRegistry::errors) {
            ConstCounter::new(count).encode(metric.encode_family(&[("error", label)])?)?;
        }
        let mut metric = encoder.encode_descriptor(
            "worker_source_errors",
            "What a trigger's source answered when receiving or settling failed, by service and the service's error",
            None,
            family.metric_type(),
        )?;
        for ((service, label), count) in totals(&self.0, StatsRegistry::source_errors) {
            ConstCounter::new(count)
                .encode(metric.encode_family(&[("service", service), ("error", label)])?)?;
        }
        let mut metric = encoder.encode_descriptor(
            "worker_listeners_not_started",
            "Listeners that did not start (their status says why), by the step that failed",
            None,
            family.metric_type(),
        )?;
        for (label, count) in totals(&self.0, StatsRegistry::not_started) {
            ConstCounter::new(count).encode(metric.encode_family(&[("reason", label)])?)?;
        }
        let mut metric = encoder.encode_descriptor(
            "worker_attempts_failed",
            "Handler calls that failed, by how (the invoker's kinds, an answer asking a retry, a refused answer, outputs, part of a batch)",
            None,
            family.metric_type(),
        )?;
        for (label, count) in totals(&self.0, StatsRegistry::failed_attempts) {
            ConstCounter::new(count).encode(metric.encode_family(&[("kind", label)])?)?;
        }
        Ok(())
    }
}

/// Each label's count of one family summed over the given workers (one family per
/// exposition).
fn totals<L: Ord + Copy>(
    registries: &[Arc<StatsRegistry>],
    family: fn(&StatsRegistry) -> &ErrorCounts<L>,
) -> BTreeMap<L, u64> {
    let mut totals = BTreeMap::new();
    for registry in registries {
        for (label, count) in family(registry).snapshot() {
            *totals.entry(label).or_default() += count;
        }
    }
    totals
}

#[cfg(test)]
mod tests {
    use prometheus_client::registry::Registry;

    use super::*;
    use crate::error::{DatabaseError, WorkerError};

    #[test]
    fn errors_are_summed_over_workers_under_their_labels() {
        let a = Arc::new(StatsRegistry::default());
        let b = Arc::new(StatsRegistry::default());
        let claim = WorkerError::Claim(DatabaseError::TimedOut(std::time::Duration::ZERO));
        a.errors().count(&claim);
        b.errors().count(&claim);
        let mut registry = Registry::with_prefix("shoal");
        registry.register_collector(Box::new(ListenerMetrics(vec![a, b])));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("encodes");
        assert!(
            text.contains("shoal_worker_errors_total{error=\"claim\"} 2"),
            "{text}"
        );
        for label in WorkerError::LABELS {
            assert!(
                text.contains(&format!("shoal_worker_errors_total{{error=\"{label}\"}}")),
                "{label} is exported from the start"
            );
        }
    }

    #[test]
    fn source_errors_are_summed_over_workers_by_service_and_error() {
        let a = Arc::new(StatsRegistry::default());
        let b = Arc::new(StatsRegistry::default());
        a.source_errors().count_label(("amqp", "timeout"));
        b.source_errors().count_label(("amqp", "timeout"));
        let mut registry = Registry::with_prefix("shoal");
        registry.register_collector(Box::new(ListenerMetrics(vec![a, b])));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("encodes");
        for line in [
            "shoal_worker_source_errors_total{service=\"amqp\",error=\"timeout\"} 2",
            "shoal_worker_source_errors_total{service=\"storage_queue\",error=\"queue_not_found\"} 0",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
    }

    #[test]
    fn listeners_not_started_are_summed_over_workers_by_reason() {
        let a = Arc::new(StatsRegistry::default());
        let b = Arc::new(StatsRegistry::default());
        a.not_started().count_label("egress_refused");
        b.not_started().count_label("egress_refused");
        b.not_started().count_label("source_unresolved");
        let mut registry = Registry::with_prefix("shoal");
        registry.register_collector(Box::new(ListenerMetrics(vec![a, b])));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("encodes");
        for (reason, count) in [
            ("egress_refused", 2),
            ("source_unresolved", 1),
            ("output", 0),
        ] {
            let line =
                format!("shoal_worker_listeners_not_started_total{{reason=\"{reason}\"}} {count}");
            assert!(text.contains(&line), "{line} in {text}");
        }
    }
}
