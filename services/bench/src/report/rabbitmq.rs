//! The RabbitMQ dispatch lines (see `crate::rabbitmq`): Shoal's rate against the raw
//! consume/ack loop with the same client on the same broker, and the worker's CPU time per
//! message.

use super::queue::{micros, ratio_line};
use super::thousands;
use crate::rabbitmq::{PREFETCH, RabbitMqFigures};

/// (a)/(b) should be at least this (issue goal).
pub const RAW_LOOP_GOAL: f64 = 0.85;

/// `RabbitMQ dispatch   shoal 1,234 msg/s | raw consume/ack loop (prefetch 30) 1,400 msg/s |
/// ratio 0.88 (goal >= 0.85)` and `RabbitMQ worker CPU   57 µs/msg`.
pub fn lines(figures: &RabbitMqFigures) -> Vec<String> {
    let reference = format!("raw consume/ack loop (prefetch {PREFETCH})");
    let mut lines = vec![ratio_line(
        "RabbitMQ dispatch",
        &figures.shoal,
        &reference,
        &figures.raw,
        RAW_LOOP_GOAL,
    )];
    if let Some(cpu) = figures.worker_cpu_per_message {
        lines.push(format!(
            "RabbitMQ worker CPU   {} µs/msg",
            thousands(micros(cpu))
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn lines_show_the_ratio_against_the_raw_loop_and_the_cpu() {
        let figures = RabbitMqFigures {
            shoal: Ok(9_000.0),
            raw: Ok(10_000.0),
            worker_cpu_per_message: Some(Duration::from_micros(35)),
        };
        assert_eq!(
            lines(&figures),
            [
                "RabbitMQ dispatch   shoal 9,000 msg/s | raw consume/ack loop (prefetch 30) \
                 10,000 msg/s | ratio 0.90 (goal >= 0.85)",
                "RabbitMQ worker CPU   35 µs/msg",
            ]
        );
    }
}
