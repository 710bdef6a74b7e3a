//! One line per figure: Shoal's throughput and latency, the pgbench reference measured in the
//! same run, and their ratio against the goal.

use std::time::Duration;

use crate::load::LoadResult;

pub mod breaker;
pub mod dashboard;
pub mod queue;
pub mod rabbitmq;
pub mod scheduler;
pub mod service_bus;
pub mod stream;
pub mod timer;
pub mod traces;
pub mod webhooks;

/// The goals an issue set for a figure; a figure without goals is reported as measured.
#[derive(Clone, Copy)]
pub struct Goal {
    /// Shoal's req/s divided by pgbench's tps should be at least this.
    pub min_ratio: Option<f64>,
    /// Shoal's p99 latency should stay below this.
    pub max_p99: Option<Duration>,
}

pub struct Figure {
    pub name: &'static str,
    pub shoal: LoadResult,
    pub pgbench_tps: f64,
    pub goal: Goal,
}

/// `GET app   shoal 9,812 req/s  p50 4.1 ms  p99 8.7 ms | pgbench 21,030 tps | ratio 0.47
/// (goal >= 0.40); p99 goal < 10 ms`
pub fn line(figure: &Figure) -> String {
    let rate = figure.shoal.per_second();
    let ratio = if figure.pgbench_tps > 0.0 {
        rate / figure.pgbench_tps
    } else {
        0.0
    };
    let p50 = figure.shoal.quantile(0.50);
    let p99 = figure.shoal.quantile(0.99);
    let mut line = format!(
        "{:<9} shoal {} req/s  p50 {}  p99 {} | pgbench {} tps | ratio {ratio:.2}",
        figure.name,
        thousands(rate),
        millis(p50),
        millis(p99),
        thousands(figure.pgbench_tps),
    );
    match (figure.goal.min_ratio, figure.goal.max_p99) {
        (None, None) => line.push_str(" (no goal set)"),
        (min_ratio, max_p99) => {
            if let Some(min) = min_ratio {
                line.push_str(&format!(" (goal >= {min:.2})"));
            }
            if let Some(max) = max_p99 {
                line.push_str(&format!("; p99 goal < {} ms", max.as_millis()));
            }
        }
    }
    let missed: Vec<&str> = [
        (
            figure.goal.min_ratio.is_some_and(|min| ratio < min),
            "ratio",
        ),
        (figure.goal.max_p99.is_some_and(|max| p99 >= max), "p99"),
    ]
    .into_iter()
    .filter_map(|(missed, what)| missed.then_some(what))
    .collect();
    if !missed.is_empty() {
        line.push_str(&format!("  [missed: {}]", missed.join(", ")));
    }
    if figure.shoal.errors > 0 {
        line.push_str(&format!("  [{}]", errors(figure)));
    }
    line
}

/// `GET app: 12 of 98,120 requests failed; first: …`
pub fn errors(figure: &Figure) -> String {
    format!(
        "{}: {} of {} requests failed; first: {}",
        figure.name,
        thousands(figure.shoal.errors as f64),
        thousands(figure.shoal.requests as f64),
        figure.shoal.first_error.as_deref().unwrap_or("-"),
    )
}

/// A whole number with thousands separators: 21030.4 → "21,030".
pub fn thousands(value: f64) -> String {
    let digits = format!("{:.0}", value.max(0.0));
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Milliseconds with one decimal below 100 ms: "4.1 ms", "250 ms".
pub fn millis(duration: Duration) -> String {
    let ms = duration.as_secs_f64() * 1000.0;
    if ms < 100.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.0} ms")
    }
}

#[cfg(test)]
mod tests {
    use hdrhistogram::Histogram;

    use super::*;

    #[test]
    fn thousands_groups_digits() {
        let cases = [
            (0.0, "0"),
            (7.4, "7"),
            (999.0, "999"),
            (1000.0, "1,000"),
            (21030.4, "21,030"),
            (1234567.0, "1,234,567"),
        ];
        for (value, expected) in cases {
            assert_eq!(thousands(value), expected, "{value}");
        }
    }

    #[test]
    fn millis_keeps_one_decimal_for_small_values() {
        assert_eq!(millis(Duration::from_micros(4_100)), "4.1 ms");
        assert_eq!(millis(Duration::from_millis(10)), "10.0 ms");
        assert_eq!(millis(Duration::from_millis(250)), "250 ms");
    }

    fn figure(latency_us: u64, requests: u64, errors: u64, pgbench_tps: f64) -> Figure {
        let mut latencies = Histogram::new_with_bounds(1, 60_000_000, 3).unwrap();
        latencies.record_n(latency_us, requests - errors).unwrap();
        Figure {
            name: "GET app",
            shoal: LoadResult {
                requests,
                errors,
                first_error: (errors > 0).then(|| "GET /x: 500".to_owned()),
                latencies,
                duration: Duration::from_secs(10),
            },
            pgbench_tps,
            goal: Goal {
                min_ratio: Some(0.40),
                max_p99: Some(Duration::from_millis(10)),
            },
        }
    }

    #[test]
    fn line_shows_rate_latency_reference_and_ratio() {
        let line = line(&figure(4_100, 98_120, 0, 21_030.0));
        assert_eq!(
            line,
            "GET app   shoal 9,812 req/s  p50 4.1 ms  p99 4.1 ms | pgbench 21,030 tps | \
             ratio 0.47 (goal >= 0.40); p99 goal < 10 ms"
        );
    }

    #[test]
    fn a_figure_without_goals_says_so_and_misses_nothing() {
        let mut put = figure(40_000, 10_000, 0, 2_000.0);
        put.goal = Goal {
            min_ratio: None,
            max_p99: None,
        };
        let line = line(&put);
        assert!(line.ends_with("ratio 0.50 (no goal set)"), "{line}");
    }

    #[test]
    fn line_flags_missed_goals_and_errors() {
        let line = line(&figure(20_000, 10_000, 10, 21_030.0));
        assert!(
            line.ends_with(
                "[missed: ratio, p99]  [GET app: 10 of 10,000 requests failed; first: GET /x: 500]"
            ),
            "{line}"
        );
    }
}
