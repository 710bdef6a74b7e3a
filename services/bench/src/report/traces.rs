//! The tracing lines (see `crate::traces`): queue dispatch with trace export on against off,
//! the webhook ingress's added latency with export on beside off, and under each the spans the
//! sink received against those the processes dropped.

use super::queue::ratio_line;
use super::thousands;
use super::webhooks::{MAX_ADDED_P99, added, failures, fine_millis};
use crate::traces::{DispatchFigure, IngressFigure, Spans, TraceFigures};

/// Dispatch with export on, over off: at least this (issue goal).
pub const DISPATCH_GOAL: f64 = 0.9;

pub fn lines(figures: &TraceFigures) -> Vec<String> {
    let dispatch = &figures.dispatch;
    let mut lines = vec![
        ratio_line(
            &format!(
                "Queue dispatch, trace export on (1 worker, {} rounds, local OTLP sink)",
                dispatch.rounds
            ),
            &dispatch.on,
            "export off",
            &dispatch.off,
            DISPATCH_GOAL,
        ),
        dispatch_spans_line(dispatch),
    ];
    match &figures.ingress {
        Ok(ingress) => {
            lines.push(ingress_line(ingress));
            lines.push(spans_line(
                "Trace spans, webhook ingress",
                &ingress.spans,
                "",
            ));
        }
        Err(not_measured) => lines.push(format!(
            "Webhook ingress, trace export on   {not_measured}  [missed: not measured]"
        )),
    }
    lines
}

/// `Trace spans, queue dispatch   10,000 received by the sink (2.00 per message), 0 dropped`
fn dispatch_spans_line(dispatch: &DispatchFigure) -> String {
    let per_message = if dispatch.on.is_ok() && dispatch.messages > 0 {
        format!(
            " ({:.2} per message)",
            dispatch.spans.received as f64 / dispatch.messages as f64
        )
    } else {
        String::new()
    };
    spans_line("Trace spans, queue dispatch", &dispatch.spans, &per_message)
}

fn spans_line(label: &str, spans: &Spans, note: &str) -> String {
    let mut line = format!(
        "{label}   {} received by the sink{note}, {} dropped",
        thousands(spans.received as f64),
        thousands(spans.dropped as f64),
    );
    if spans.received == 0 {
        line.push_str("  [missed: nothing exported]");
    }
    line
}

/// `Webhook ingress, trace export on   added p50 0.30 ms p99 1.20 ms | export off: added p50
/// 0.21 ms p99 1.00 ms (latency 1 client, sequential, each against the handler called
/// directly beside it; goal: added p99 < 5 ms with export on)`
fn ingress_line(ingress: &IngressFigure) -> String {
    let on_p99 = added(&ingress.on_shoal, &ingress.on_direct, 0.99);
    let mut line = format!(
        "Webhook ingress, trace export on   added p50 {} p99 {} | export off: added p50 {} p99 {} (latency 1 client, sequential, each against the handler called directly beside it; goal: added p99 < {} ms with export on)",
        fine_millis(added(&ingress.on_shoal, &ingress.on_direct, 0.50)),
        fine_millis(on_p99),
        fine_millis(added(&ingress.off_shoal, &ingress.off_direct, 0.50)),
        fine_millis(added(&ingress.off_shoal, &ingress.off_direct, 0.99)),
        MAX_ADDED_P99.as_millis(),
    );
    if on_p99 >= MAX_ADDED_P99.as_secs_f64() {
        line.push_str("  [missed: added p99]");
    }
    line.push_str(&failures(&[
        &ingress.on_shoal,
        &ingress.on_direct,
        &ingress.off_shoal,
        &ingress.off_direct,
    ]));
    line
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use hdrhistogram::Histogram;

    use super::*;
    use crate::load::LoadResult;
    use crate::queue::figures::NotMeasured;

    fn result(latency_us: u64) -> LoadResult {
        let mut latencies = Histogram::new_with_bounds(1, 60_000_000, 3).unwrap();
        latencies.record_n(latency_us, 1000).unwrap();
        LoadResult {
            requests: 1000,
            errors: 0,
            first_error: None,
            latencies,
            duration: Duration::from_secs(10),
        }
    }

    fn figures() -> TraceFigures {
        TraceFigures {
            dispatch: DispatchFigure {
                rounds: 5,
                messages: 5_000,
                on: Ok(950.0),
                off: Ok(1_000.0),
                spans: Spans {
                    received: 10_000,
                    dropped: 0,
                },
            },
            ingress: Ok(IngressFigure {
                off_shoal: result(410),
                off_direct: result(200),
                on_shoal: result(500),
                on_direct: result(200),
                spans: Spans {
                    received: 24_000,
                    dropped: 12,
                },
            }),
        }
    }

    #[test]
    fn lines_show_each_figure_against_export_off_and_the_spans_exported() {
        assert_eq!(
            lines(&figures()),
            [
                "Queue dispatch, trace export on (1 worker, 5 rounds, local OTLP sink)   shoal 950 msg/s | export off 1,000 msg/s | ratio 0.95 (goal >= 0.9)",
                "Trace spans, queue dispatch   10,000 received by the sink (2.00 per message), 0 dropped",
                "Webhook ingress, trace export on   added p50 0.30 ms p99 0.30 ms | export off: added p50 0.21 ms p99 0.21 ms (latency 1 client, sequential, each against the handler called directly beside it; goal: added p99 < 5 ms with export on)",
                "Trace spans, webhook ingress   24,000 received by the sink, 12 dropped",
            ]
        );
    }

    #[test]
    fn missed_goals_and_missing_figures_are_flagged() {
        let mut figures = figures();
        figures.dispatch.on = Ok(800.0);
        figures.dispatch.spans.received = 0;
        figures.ingress = Ok(IngressFigure {
            on_shoal: result(6_000),
            ..figures.ingress.unwrap()
        });
        let now = lines(&figures);
        assert!(now[0].ends_with("[missed: ratio]"), "{}", now[0]);
        assert!(now[1].ends_with("[missed: nothing exported]"), "{}", now[1]);
        assert!(now[2].ends_with("[missed: added p99]"), "{}", now[2]);
        figures.ingress = Err(NotMeasured::CouldNotRun("shoal serve exited".into()));
        assert_eq!(
            lines(&figures)[2],
            "Webhook ingress, trace export on   could not run: shoal serve exited  [missed: not measured]"
        );
    }
}
