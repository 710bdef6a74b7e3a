//! `/metrics` for listeners: read from the [`StatsRegistry`] at scrape time, so a stopped
//! listener's series disappear with it.

use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use shoal_domain::workers::ListenerReport;

use crate::stats::StatsRegistry;

/// Register with a `prometheus_client` registry (the API's in `shoal dev`, the worker's own
/// otherwise). It reads every given worker's registry, so the in-process workers of `shoal dev`
/// share one set of metric families (a family may appear only once per exposition).
#[derive(Debug, Clone)]
pub struct ListenerMetrics(pub Vec<Arc<StatsRegistry>>);

type Labels = [(&'static str, String); 5];
/// A series: name, help text and how to read its value from a report.
type Series<T> = (&'static str, &'static str, fn(&ListenerReport) -> T);

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
        let counters: [Series<u64>; 4] = [
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
        let gauges: [Series<f64>; 3] = [
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
        Ok(())
    }
}
