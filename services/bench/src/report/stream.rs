//! The stream dispatch lines (see `crate::stream`): Shoal's rate against the raw
//! consume-and-commit loop with the same client on the same broker, and the worker's CPU time
//! per event.

use super::queue::{micros, ratio_line};
use super::thousands;
use crate::stream::StreamFigures;

/// (a)/(b) should be at least this (issue goal).
pub const RAW_LOOP_GOAL: f64 = 0.85;

/// `Kafka dispatch   shoal 1,234 msg/s | raw consume/commit loop (…) 1,400 msg/s | ratio 0.88
/// (goal >= 0.85)` and `Kafka worker CPU   57 µs/event`.
pub fn lines(figures: &StreamFigures) -> Vec<String> {
    let reference = format!(
        "raw consume/commit loop (batches of 64, {} partitions)",
        figures.partitions
    );
    let mut lines = vec![ratio_line(
        "Kafka dispatch (cardinality many)",
        &figures.shoal,
        &reference,
        &figures.raw,
        RAW_LOOP_GOAL,
    )];
    if let Some(cpu) = figures.worker_cpu_per_event {
        lines.push(format!(
            "Kafka worker CPU   {} µs/event",
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
        let figures = StreamFigures {
            partitions: 4,
            shoal: Ok(8_000.0),
            raw: Ok(10_000.0),
            worker_cpu_per_event: Some(Duration::from_micros(20)),
        };
        assert_eq!(
            lines(&figures),
            [
                "Kafka dispatch (cardinality many)   shoal 8,000 msg/s | raw consume/commit loop \
                 (batches of 64, 4 partitions) 10,000 msg/s | ratio 0.80 (goal >= 0.85)  \
                 [missed: ratio]",
                "Kafka worker CPU   20 µs/event",
            ]
        );
    }
}
