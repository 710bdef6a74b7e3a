//! The circuit breaker lines (see `crate::breaker`): how soon every listener stops after the
//! threshold-crossing failure, next to a pause by hand and the counting tick, and what the
//! counting costs on the failure path.

use std::time::Duration;

use super::queue::ratio_line;
use crate::breaker::{BreakerFigures, Reaction};

/// The threshold-crossing failure to the last receive call: at most this (issue goal, with a
/// 1 s tick).
pub const REACTION_GOAL: Duration = Duration::from_secs(2);
pub const TICK: Duration = Duration::from_secs(1);
/// Failed invocations per second with counting on, over off: at least this (issue goal).
pub const COUNTING_GOAL: f64 = 0.9;

/// `Breaker reaction   threshold 1.23 s | pause by hand 0.08 s | ratio 1.23 of the 1 s tick
/// (goal <= 2 s; slowest of 3 rounds, 3 workers)` and the counting line.
pub fn lines(figures: &BreakerFigures) -> Vec<String> {
    vec![reaction_line(figures), counting_line(figures)]
}

fn reaction_line(figures: &BreakerFigures) -> String {
    let text = |reaction: &Reaction| match reaction {
        Ok(took) => format!("{:.2} s", took.as_secs_f64()),
        Err(not_measured) => not_measured.to_string(),
    };
    let mut line = format!(
        "Breaker reaction   threshold-crossing failure to the last receive {} | pause by hand (notification alone) {}",
        text(&figures.reaction),
        text(&figures.paused)
    );
    match &figures.reaction {
        Ok(took) => {
            line.push_str(&format!(
                " | ratio {:.2} of the {} s tick (goal <= {} s; slowest of {} rounds, 3 workers)",
                took.as_secs_f64() / TICK.as_secs_f64(),
                TICK.as_secs(),
                REACTION_GOAL.as_secs(),
                figures.rounds
            ));
            if *took > REACTION_GOAL {
                line.push_str("  [missed: reaction]");
            }
        }
        Err(_) => line.push_str("  [missed: not measured]"),
    }
    line
}

fn counting_line(figures: &BreakerFigures) -> String {
    ratio_line(
        "Breaker counting (failure path, 1 worker)",
        &figures.counting_on,
        "counting off",
        &figures.counting_off,
        COUNTING_GOAL,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::figures::NotMeasured;

    #[test]
    fn lines_show_the_reaction_against_the_tick_and_the_counting_ratio() {
        let figures = BreakerFigures {
            rounds: 3,
            reaction: Ok(Duration::from_millis(1_230)),
            paused: Ok(Duration::from_millis(80)),
            counting_on: Ok(950.0),
            counting_off: Ok(1_000.0),
        };
        assert_eq!(
            lines(&figures),
            [
                "Breaker reaction   threshold-crossing failure to the last receive 1.23 s | pause by hand (notification alone) 0.08 s | ratio 1.23 of the 1 s tick (goal <= 2 s; slowest of 3 rounds, 3 workers)",
                "Breaker counting (failure path, 1 worker)   shoal 950 msg/s | counting off 1,000 msg/s | ratio 0.95 (goal >= 0.9)",
            ]
        );
    }

    #[test]
    fn a_slow_or_missing_reaction_is_flagged() {
        let mut figures = BreakerFigures {
            rounds: 1,
            reaction: Ok(Duration::from_millis(2_500)),
            paused: Ok(Duration::from_millis(80)),
            counting_on: Ok(800.0),
            counting_off: Ok(1_000.0),
        };
        let lines_now = lines(&figures);
        assert!(
            lines_now[0].ends_with("[missed: reaction]"),
            "{}",
            lines_now[0]
        );
        assert!(
            lines_now[1].ends_with("[missed: ratio]"),
            "{}",
            lines_now[1]
        );
        figures.reaction = Err(NotMeasured::Failed {
            round: 1,
            why: "the breaker did not open".into(),
        });
        assert!(lines(&figures)[0].ends_with("[missed: not measured]"));
    }
}
