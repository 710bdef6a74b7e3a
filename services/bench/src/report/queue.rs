//! The Storage Queue dispatch lines (see `crate::queue`): Shoal's rate against the SDK ceiling
//! and against the Python consumer, CPU per message, and Azurite's load. A figure that could not
//! be measured (its consumer stalled, crashed or could not start) is named in its line with
//! why, and no ratio is printed for it.

use std::time::Duration;

use super::thousands;
use crate::queue::figures::{CAPPED, QueueFigures, Rate};

const LABEL: &str = "Queue dispatch";

/// (a)/(b) should be at least this.
pub const CEILING_GOAL: f64 = 0.85;
/// (a)/(c) should be at least this.
pub const PYTHON_GOAL: f64 = 4.0;
/// (d)/(a) should be at least this: a cap that does not bind costs little.
pub const CAPPED_GOAL: f64 = 0.9;

/// `Queue dispatch   shoal 1,234 msg/s | SDK ceiling 1,400 msg/s | ratio 0.88 (goal >= 0.85)`,
/// the same against the Python consumer, the worker's CPU time per message and Azurite's load.
pub fn lines(figures: &QueueFigures) -> Vec<String> {
    let python = format!(
        "Python azure-storage-queue ({} threads)",
        figures.concurrency
    );
    let mut lines = vec![
        ratio_line(
            LABEL,
            &figures.shoal,
            "SDK ceiling",
            &figures.ceiling,
            CEILING_GOAL,
        ),
        ratio_line(LABEL, &figures.shoal, &python, &figures.python, PYTHON_GOAL),
    ];
    // When even the SDK's own loop is not that much faster than Python here, the goal is out
    // of reach on this machine, whatever Shoal does: say so.
    if let (Ok(ceiling), Ok(python)) = (&figures.ceiling, &figures.python)
        && lines[1].ends_with("[missed: ratio]")
    {
        let bound = if *python > 0.0 { ceiling / python } else { 0.0 };
        if bound < PYTHON_GOAL {
            lines[1].push_str(&format!(" (SDK ceiling / Python is {bound:.2} here)"));
        }
    }
    if let Some(worker) = figures.worker_cpu_per_message {
        let mut cpu = format!("Worker CPU   {} µs/msg", thousands(micros(worker)));
        if let Some(python) = figures.python_cpu_per_message {
            cpu.push_str(&format!(
                " (Python consumer {} µs/msg)",
                thousands(micros(python))
            ));
        }
        lines.push(cpu);
    }
    if !figures.azurite.is_empty() {
        let loads: Vec<String> = figures
            .azurite
            .iter()
            .map(|load| {
                format!(
                    "{} {} µs/msg, {:.0} % busy",
                    load.figure,
                    thousands(micros(load.cpu_per_message)),
                    load.busy * 100.0
                )
            })
            .collect();
        lines.push(format!("Azurite CPU   {}", loads.join(" | ")));
    }
    lines.push(ratio_line(
        &format!("Queue dispatch, maxConcurrency {CAPPED}"),
        &figures.capped,
        "no cap",
        &figures.shoal,
        CAPPED_GOAL,
    ));
    lines
}

/// Shoal against one reference; without both rates, each side says why it has none and no
/// ratio is printed.
pub(super) fn ratio_line(
    label: &str,
    shoal: &Rate,
    reference: &str,
    rate: &Rate,
    goal: f64,
) -> String {
    let (shoal, rate) = match (shoal, rate) {
        (Ok(shoal), Ok(rate)) => (*shoal, *rate),
        _ => {
            let side = |rate: &Rate| match rate {
                Ok(rate) => format!("{} msg/s", thousands(*rate)),
                Err(not_measured) => not_measured.to_string(),
            };
            return format!(
                "{label}   shoal {} | {reference} {}  [missed: not measured]",
                side(shoal),
                side(rate)
            );
        }
    };
    let ratio = if rate > 0.0 { shoal / rate } else { 0.0 };
    let mut line = format!(
        "{label}   shoal {} msg/s | {reference} {} msg/s | ratio {ratio:.2} (goal >= {})",
        thousands(shoal),
        thousands(rate),
        goal_text(goal),
    );
    if ratio < goal {
        line.push_str("  [missed: ratio]");
    }
    line
}

pub(super) fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

/// 0.85 → "0.85", 4.0 → "4".
fn goal_text(goal: f64) -> String {
    let text = format!("{goal:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::figures::{AzuriteLoad, NotMeasured};

    fn figures(shoal: Rate, ceiling: Rate, python: Rate) -> QueueFigures {
        QueueFigures {
            concurrency: 48,
            worker_cpu_per_message: shoal.is_ok().then_some(Duration::from_micros(57)),
            python_cpu_per_message: python.is_ok().then_some(Duration::from_micros(3_912)),
            capped: shoal.clone().map(|rate| rate * 0.97),
            shoal,
            ceiling,
            python,
            azurite: vec![
                AzuriteLoad {
                    figure: "SDK ceiling",
                    cpu_per_message: Duration::from_micros(700),
                    busy: 0.98,
                },
                AzuriteLoad {
                    figure: "shoal",
                    cpu_per_message: Duration::from_micros(1_210),
                    busy: 0.964,
                },
            ],
        }
    }

    fn stalled(round: u32) -> NotMeasured {
        NotMeasured::Failed {
            round,
            why: "384/1000 messages in 120 s (616 left on the queue)\nits output ends with:\n…"
                .to_owned(),
        }
    }

    #[test]
    fn queue_lines_show_both_ratios_and_cpu_per_message() {
        let lines = lines(&figures(Ok(1_234.0), Ok(1_400.0), Ok(250.0)));
        assert_eq!(
            lines,
            [
                "Queue dispatch   shoal 1,234 msg/s | SDK ceiling 1,400 msg/s | ratio 0.88 \
                 (goal >= 0.85)",
                "Queue dispatch   shoal 1,234 msg/s | Python azure-storage-queue (48 threads) \
                 250 msg/s | ratio 4.94 (goal >= 4)",
                "Worker CPU   57 µs/msg (Python consumer 3,912 µs/msg)",
                "Azurite CPU   SDK ceiling 700 µs/msg, 98 % busy | shoal 1,210 µs/msg, 96 % busy",
                "Queue dispatch, maxConcurrency 64   shoal 1,197 msg/s | no cap 1,234 msg/s | \
                 ratio 0.97 (goal >= 0.9)",
            ]
        );
    }

    #[test]
    fn queue_lines_flag_missed_goals_and_say_when_the_ceiling_bounds_python() {
        let lines = lines(&figures(Ok(700.0), Ok(1_400.0), Ok(250.0)));
        assert!(
            lines[0].ends_with("ratio 0.50 (goal >= 0.85)  [missed: ratio]"),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].ends_with("ratio 2.80 (goal >= 4)  [missed: ratio]"),
            "{}",
            lines[1]
        );
        let bounded = super::lines(&figures(Ok(900.0), Ok(900.0), Ok(250.0)));
        assert!(
            bounded[1].ends_with(
                "ratio 3.60 (goal >= 4)  [missed: ratio] (SDK ceiling / Python is 3.60 here)"
            ),
            "{}",
            bounded[1]
        );
    }

    #[test]
    fn a_python_reference_that_could_not_start_is_named_without_a_ratio() {
        let lines = lines(&figures(
            Ok(700.0),
            Ok(1_400.0),
            Err(NotMeasured::CouldNotRun(
                "pip install failed (exit status: 1): no network".to_owned(),
            )),
        ));
        assert_eq!(
            lines[1],
            "Queue dispatch   shoal 700 msg/s | Python azure-storage-queue (48 threads) could not \
             run: pip install failed (exit status: 1): no network  [missed: not measured]"
        );
        assert_eq!(lines[2], "Worker CPU   57 µs/msg");
    }

    #[test]
    fn a_stalled_python_reference_is_reported_failed_with_its_round_and_no_ratio() {
        let lines = lines(&figures(Ok(892.0), Ok(916.0), Err(stalled(4))));
        assert_eq!(
            lines[0],
            "Queue dispatch   shoal 892 msg/s | SDK ceiling 916 msg/s | ratio 0.97 (goal >= 0.85)"
        );
        assert_eq!(
            lines[1],
            "Queue dispatch   shoal 892 msg/s | Python azure-storage-queue (48 threads) failed \
             in round 4: 384/1000 messages in 120 s (616 left on the queue)  \
             [missed: not measured]"
        );
        assert_eq!(lines[2], "Worker CPU   57 µs/msg");
    }

    #[test]
    fn a_failed_sdk_ceiling_omits_its_ratio_but_not_pythons() {
        let lines = lines(&figures(Ok(892.0), Err(stalled(2)), Ok(406.0)));
        assert_eq!(
            lines[0],
            "Queue dispatch   shoal 892 msg/s | SDK ceiling failed in round 2: 384/1000 messages \
             in 120 s (616 left on the queue)  [missed: not measured]"
        );
        assert!(
            lines[1].ends_with("406 msg/s | ratio 2.20 (goal >= 4)  [missed: ratio]"),
            "{}",
            lines[1]
        );
    }

    #[test]
    fn only_a_failed_shoal_figure_fails_the_part() {
        let python_failed = figures(Ok(892.0), Err(stalled(2)), Err(stalled(4)));
        assert_eq!(python_failed.failure(), None);
        let shoal_failed = figures(Err(stalled(3)), Ok(916.0), Ok(406.0));
        assert_eq!(
            shoal_failed.failure().as_deref(),
            Some(
                "Shoal's queue dispatch failed in round 3: 384/1000 messages in 120 s (616 left \
                 on the queue) (see the lines above)"
            )
        );
    }

    #[test]
    fn a_failed_shoal_figure_is_named_on_both_lines_and_drops_the_worker_cpu() {
        let lines = lines(&figures(Err(stalled(1)), Ok(916.0), Ok(406.0)));
        assert_eq!(
            lines[0],
            "Queue dispatch   shoal failed in round 1: 384/1000 messages in 120 s (616 left on \
             the queue) | SDK ceiling 916 msg/s  [missed: not measured]"
        );
        assert!(lines[1].contains("| Python azure-storage-queue (48 threads) 406 msg/s  ["));
        assert!(lines[2].starts_with("Azurite CPU"), "{}", lines[2]);
    }
}
