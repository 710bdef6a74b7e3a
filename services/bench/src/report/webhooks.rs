//! The webhook ingress's line: Shoal's and the direct call's throughput (many connections)
//! and latency (one client, sequential), and the latency the ingress adds, against the goal.

use std::time::Duration;

use super::thousands;
use crate::load::LoadResult;
use crate::webhooks::WebhookFigures;

/// The goals for what the ingress adds to one call.
pub const MAX_ADDED_P50: Duration = Duration::from_millis(1);
pub const MAX_ADDED_P99: Duration = Duration::from_millis(5);

/// `Webhook ingress   shoal 5,300 req/s p50 0.41 ms p99 1.90 ms | handler direct 9,800 req/s
/// p50 0.20 ms p99 0.90 ms | added p50 0.21 ms p99 1.00 ms (req/s at 32 connections; latency
/// 1 client, sequential; goal: added p50 < 1 ms, p99 < 5 ms)`
pub fn line(figures: &WebhookFigures) -> String {
    let added_p50 = added(&figures.shoal_sequential, &figures.direct_sequential, 0.50);
    let added_p99 = added(&figures.shoal_sequential, &figures.direct_sequential, 0.99);
    let side = |name: &str, concurrent: &LoadResult, sequential: &LoadResult| {
        format!(
            "{name} {} req/s p50 {} p99 {}",
            thousands(concurrent.per_second()),
            fine_millis(sequential.quantile(0.50).as_secs_f64()),
            fine_millis(sequential.quantile(0.99).as_secs_f64()),
        )
    };
    let mut line = format!(
        "Webhook ingress   {} | {} | added p50 {} p99 {} (req/s at {} connections; latency 1 client, sequential; goal: added p50 < {} ms, p99 < {} ms)",
        side(
            "shoal",
            &figures.shoal_concurrent,
            &figures.shoal_sequential
        ),
        side(
            "handler direct",
            &figures.direct_concurrent,
            &figures.direct_sequential
        ),
        fine_millis(added_p50),
        fine_millis(added_p99),
        figures.connections,
        MAX_ADDED_P50.as_millis(),
        MAX_ADDED_P99.as_millis(),
    );
    let missed: Vec<&str> = [
        (added_p50 >= MAX_ADDED_P50.as_secs_f64(), "added p50"),
        (added_p99 >= MAX_ADDED_P99.as_secs_f64(), "added p99"),
    ]
    .into_iter()
    .filter_map(|(missed, what)| missed.then_some(what))
    .collect();
    if !missed.is_empty() {
        line.push_str(&format!("  [missed: {}]", missed.join(", ")));
    }
    line.push_str(&failures(&figures.results()));
    line
}

/// Seconds the ingress adds to the direct call at `quantile` (each side's own quantile).
pub(super) fn added(shoal: &LoadResult, direct: &LoadResult, quantile: f64) -> f64 {
    shoal.quantile(quantile).as_secs_f64() - direct.quantile(quantile).as_secs_f64()
}

/// `  [2 of 1,000 requests failed; first: …]` for each result with failures.
pub(super) fn failures(results: &[&LoadResult]) -> String {
    results
        .iter()
        .filter(|result| result.errors > 0)
        .map(|result| {
            format!(
                "  [{} of {} requests failed; first: {}]",
                thousands(result.errors as f64),
                thousands(result.requests as f64),
                result.first_error.as_deref().unwrap_or("-")
            )
        })
        .collect()
}

/// Seconds as milliseconds with two decimals below 10 ms ("0.41 ms"), one above.
pub(super) fn fine_millis(seconds: f64) -> String {
    let ms = seconds * 1000.0;
    if ms.abs() < 10.0 {
        format!("{ms:.2} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

impl WebhookFigures {
    pub fn results(&self) -> [&LoadResult; 4] {
        [
            &self.shoal_sequential,
            &self.direct_sequential,
            &self.shoal_concurrent,
            &self.direct_concurrent,
        ]
    }
}

#[cfg(test)]
mod tests {
    use hdrhistogram::Histogram;

    use super::*;

    fn result(latency_us: u64, requests: u64) -> LoadResult {
        let mut latencies = Histogram::new_with_bounds(1, 60_000_000, 3).unwrap();
        latencies.record_n(latency_us, requests).unwrap();
        LoadResult {
            requests,
            errors: 0,
            first_error: None,
            latencies,
            duration: Duration::from_secs(10),
        }
    }

    #[test]
    fn the_line_shows_both_sides_and_what_the_ingress_adds() {
        let figures = WebhookFigures {
            connections: 32,
            shoal_sequential: result(410, 1000),
            direct_sequential: result(200, 1000),
            shoal_concurrent: result(3_000, 53_000),
            direct_concurrent: result(1_000, 98_000),
        };
        assert_eq!(
            line(&figures),
            "Webhook ingress   shoal 5,300 req/s p50 0.41 ms p99 0.41 ms | handler direct 9,800 \
             req/s p50 0.20 ms p99 0.20 ms | added p50 0.21 ms p99 0.21 ms (req/s at 32 \
             connections; latency 1 client, sequential; goal: added p50 < 1 ms, p99 < 5 ms)"
        );
    }

    #[test]
    fn missed_goals_and_failures_are_flagged() {
        let mut shoal = result(7_000, 1000);
        shoal.errors = 2;
        shoal.first_error = Some("shoal POST /webhooks/bench/hooks/echo: 502".into());
        let figures = WebhookFigures {
            connections: 8,
            shoal_sequential: shoal,
            direct_sequential: result(200, 1000),
            shoal_concurrent: result(3_000, 1000),
            direct_concurrent: result(1_000, 1000),
        };
        let line = line(&figures);
        assert!(line.contains("added p50 6.80 ms p99 6.80 ms"), "{line}");
        assert!(
            line.contains("[missed: added p50, added p99]  [2 of 1,000 requests failed; first: shoal POST /webhooks/bench/hooks/echo: 502]"),
            "{line}"
        );
    }
}
