//! The scheduler's small HTTP endpoint: `/healthz` and `/metrics` — whether it leads, its
//! epoch, the total desired instances (to autoscale the worker Deployment on), how many
//! instances found no worker, and each tenant's desired and placed instances — plus the
//! loop's failures by kind, the store's operations and the trace export's span counts.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use prometheus_client::registry::Registry;
use shoal_trace_export::SpanCounts;
use tokio_util::sync::CancellationToken;

use crate::runtime::SchedulerStatus;

/// The OpenMetrics text exposition of `status`, the store's operations and the trace export's
/// span counts.
pub fn render(status: &SchedulerStatus, spans: &SpanCounts) -> String {
    let leading = status.leading.load(Ordering::Relaxed);
    let gauges: [(&str, &str, &str, f64); 5] = [
        (
            "shoal_scheduler_leader",
            "1 while this scheduler leads",
            "",
            f64::from(u8::from(leading)),
        ),
        (
            "shoal_scheduler_epoch",
            "The lease epoch last seen",
            "",
            status.epoch.load(Ordering::Relaxed) as f64,
        ),
        // Labelled with whether this scheduler leads: a standby keeps the value of its last tick
        // as leader, stale once another leads, so the worker autoscaler selects leader="true".
        (
            "shoal_scheduler_desired_instances",
            "Desired app instances over all apps, as of this scheduler's last tick",
            if leading {
                "{leader=\"true\"}"
            } else {
                "{leader=\"false\"}"
            },
            status.total_desired.load(Ordering::Relaxed) as f64,
        ),
        (
            "shoal_scheduler_unplaced_instances",
            "Desired instances no live worker could take",
            "",
            status.unplaced.load(Ordering::Relaxed) as f64,
        ),
        (
            "shoal_scheduler_last_tick_seconds",
            "Duration of the last tick",
            "",
            status.last_tick_micros.load(Ordering::Relaxed) as f64 / 1e6,
        ),
    ];
    let mut text = String::new();
    for (name, help, labels, value) in gauges {
        text.push_str(&format!(
            "# HELP {name} {help}\n# TYPE {name} gauge\n{name}{labels} {value}\n"
        ));
    }
    tenant_gauges(&mut text, status);
    let mut registry = Registry::with_prefix("shoal");
    status.errors.register(&mut registry);
    registry.register_collector(Box::new(status.egress.clone()));
    shoal_store::metrics::register(&mut registry);
    registry.register_collector(spans.metrics());
    // Writing to a String cannot fail; the encoder ends the exposition with `# EOF`.
    let _ = prometheus_client::encoding::text::encode(&mut text, &registry);
    text
}

/// Per tenant: the instances its apps want and those placed, so a worker autoscaler sees
/// which tenants wait for capacity (only the leader has samples).
fn tenant_gauges(text: &mut String, status: &SchedulerStatus) {
    let tenants = status.tenants.lock().unwrap_or_else(|e| e.into_inner());
    for (name, help, placed) in [
        (
            "shoal_scheduler_tenant_desired_instances",
            "Desired app instances of the tenant's apps, as of the last tick",
            false,
        ),
        (
            "shoal_scheduler_tenant_placed_instances",
            "App instances of the tenant placed on workers, as of the last tick",
            true,
        ),
    ] {
        text.push_str(&format!("# HELP {name} {help}\n# TYPE {name} gauge\n"));
        for (tenant, desired, on_workers) in tenants.iter() {
            let value = if placed { on_workers } else { desired };
            // Tenant names are validated names; escape anyway, as the format asks.
            let label = tenant
                .replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('\n', "\\n");
            text.push_str(&format!("{name}{{tenant=\"{label}\"}} {value}\n"));
        }
    }
}

/// `spans`: the process's trace export counts (zero while export is off).
pub async fn serve(
    listener: tokio::net::TcpListener,
    status: Arc<SchedulerStatus>,
    spans: SpanCounts,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let app = Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route(
            "/metrics",
            get(move || {
                let status = status.clone();
                let spans = spans.clone();
                async move {
                    (
                        [(
                            header::CONTENT_TYPE,
                            "application/openmetrics-text; version=1.0.0; charset=utf-8",
                        )],
                        render(&status, &spans),
                    )
                        .into_response()
                }
            }),
        );
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::SchedulerError;

    #[test]
    fn metrics_show_the_gauges_and_the_loops_failures_by_kind() {
        let status = SchedulerStatus::default();
        status.errors.count(&SchedulerError::TickTimedOut);
        status.errors.count(&SchedulerError::TickTimedOut);

        let text = render(&status, &SpanCounts::default());

        assert!(text.contains("\nshoal_scheduler_leader 0\n"), "{text}");
        assert!(
            text.contains("shoal_scheduler_errors_total{error=\"tick_timed_out\"} 2\n"),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"), "{text}");
    }

    #[test]
    fn tenants_desired_and_placed_instances_are_gauges_per_tenant() {
        let status = SchedulerStatus::default();
        *status.tenants.lock().unwrap() = vec![("a".into(), 1, 1), ("b".into(), 20, 9)];

        let text = render(&status, &SpanCounts::default());

        for line in [
            "\nshoal_scheduler_tenant_desired_instances{tenant=\"a\"} 1\n",
            "\nshoal_scheduler_tenant_desired_instances{tenant=\"b\"} 20\n",
            "\nshoal_scheduler_tenant_placed_instances{tenant=\"a\"} 1\n",
            "\nshoal_scheduler_tenant_placed_instances{tenant=\"b\"} 9\n",
            "\n# TYPE shoal_scheduler_tenant_placed_instances gauge\n",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
        assert!(text.ends_with("# EOF\n"), "{text}");
    }

    /// The total desired instances carry `leader`: the worker autoscaler reads the leader's
    /// series only, never a standby's stale one.
    #[test]
    fn desired_instances_say_whether_this_scheduler_leads() {
        let status = SchedulerStatus::default();
        status.total_desired.store(7, Ordering::Relaxed);

        let standby = render(&status, &SpanCounts::default());
        status.leading.store(true, Ordering::Relaxed);
        let leader = render(&status, &SpanCounts::default());

        assert!(
            standby.contains("\nshoal_scheduler_desired_instances{leader=\"false\"} 7\n"),
            "{standby}"
        );
        assert!(
            leader.contains("\nshoal_scheduler_desired_instances{leader=\"true\"} 7\n"),
            "{leader}"
        );
        assert!(!leader.contains("leader=\"false\""), "{leader}");
    }
}
