//! The Service Bus dispatch lines (see `crate::service_bus`): Shoal's rate against the raw
//! receive/complete loop with the same client on the same stand-in, and the worker's CPU time
//! per message.

use super::queue::{micros, ratio_line};
use super::thousands;
use crate::service_bus::ServiceBusFigures;

/// (a)/(b) should be at least this (issue goal).
pub const RAW_LOOP_GOAL: f64 = 0.85;

/// `Service Bus dispatch   shoal 1,234 msg/s | raw receive/complete loop 1,400 msg/s | ratio
/// 0.88 (goal >= 0.85)` and `Worker CPU   57 µs/msg`.
pub fn lines(figures: &ServiceBusFigures) -> Vec<String> {
    let reference = format!(
        "raw receive/complete loop ({} per receive)",
        figures.max_concurrent_calls
    );
    let mut lines = vec![ratio_line(
        "Service Bus dispatch",
        &figures.shoal,
        &reference,
        &figures.raw,
        RAW_LOOP_GOAL,
    )];
    if let Some(cpu) = figures.worker_cpu_per_message {
        lines.push(format!(
            "Service Bus worker CPU   {} µs/msg",
            thousands(micros(cpu))
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::queue::figures::NotMeasured;

    #[test]
    fn lines_show_the_ratio_against_the_raw_loop_and_the_cpu() {
        let figures = ServiceBusFigures {
            max_concurrent_calls: 16,
            shoal: Ok(900.0),
            raw: Ok(1_000.0),
            worker_cpu_per_message: Some(Duration::from_micros(120)),
        };
        assert_eq!(
            lines(&figures),
            [
                "Service Bus dispatch   shoal 900 msg/s | raw receive/complete loop (16 per \
                 receive) 1,000 msg/s | ratio 0.90 (goal >= 0.85)",
                "Service Bus worker CPU   120 µs/msg",
            ]
        );
    }

    #[test]
    fn a_failed_figure_has_no_ratio_and_no_cpu() {
        let figures = ServiceBusFigures {
            max_concurrent_calls: 16,
            shoal: Err(NotMeasured::Failed {
                round: 2,
                why: "10/100 messages in 120 s".into(),
            }),
            raw: Ok(1_000.0),
            worker_cpu_per_message: None,
        };
        let lines = lines(&figures);
        assert_eq!(lines.len(), 1);
        assert!(lines[0].ends_with("[missed: not measured]"), "{}", lines[0]);
        assert!(lines[0].contains("failed in round 2"), "{}", lines[0]);
    }
}
