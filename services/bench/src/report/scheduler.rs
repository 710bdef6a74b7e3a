//! The scheduler lines (see `crate::scheduler`): each figure, its reference from the same run,
//! their ratio and the goal, flagged `[missed: …]` when it is not met.

use std::time::Duration;

use super::{millis, thousands};
use crate::scheduler::SchedulerFigures;
use crate::scheduler::pure::PureFigures;
use crate::scheduler::reaction::{FailoverFigures, ReactionFigures};
use crate::scheduler::tick::{Tick, TickFigures};

/// (a): decide for every app plus one placement, cold.
pub const PURE_GOAL: Duration = Duration::from_millis(50);
/// (b): one tick, cold or steady.
pub const TICK_GOAL: Duration = Duration::from_secs(1);
/// (c): from the backlog to the first delivery, with a 1 s tick.
pub const REACTION_GOAL: Duration = Duration::from_secs(2);
/// (d): the lease TTL plus this.
pub const FAILOVER_MARGIN: Duration = Duration::from_secs(1);

/// One line per figure measured, in the order (a)–(d).
pub fn lines(figures: &SchedulerFigures) -> Vec<String> {
    let mut lines = Vec::new();
    lines.extend(figures.pure.as_ref().map(pure_line));
    lines.extend(figures.tick.as_ref().map(tick_line));
    lines.extend(figures.reaction.as_ref().map(reaction_line));
    lines.extend(figures.failover.as_ref().map(failover_line));
    lines
}

/// `Scheduler pure   decide+place 10,000 apps / 100 workers  14.2 ms (steady 11.0 ms) | naive
/// full-sort placement 9.8 ms | ratio 0.85 (placement 8.3 ms / naive; decide 5.9 ms) (goal <
/// 50 ms)`
fn pure_line(pure: &PureFigures) -> String {
    let mut line = format!(
        "Scheduler pure   decide+place {} apps / {} workers  {} (steady {}) | naive full-sort placement {} | ratio {:.2} (placement {} / naive; decide {}) (goal < {})",
        thousands(pure.apps as f64),
        thousands(pure.workers as f64),
        millis(pure.cold()),
        millis(pure.steady()),
        millis(pure.naive),
        ratio(pure.place_cold, pure.naive),
        millis(pure.place_cold),
        millis(pure.decide),
        whole(PURE_GOAL),
    );
    flag(&mut line, &[(pure.cold() >= PURE_GOAL, "time")]);
    line
}

/// `Scheduler tick   10,000 apps / 100 workers on Postgres  cold 850 ms (read …) | steady
/// 310 ms (read …) | catalog select 140 ms | ratio 6.07 cold, 2.21 steady (goal < 1 s)`
fn tick_line(tick: &TickFigures) -> String {
    let mut line = format!(
        "Scheduler tick   {} apps / {} workers on Postgres  cold {} ({}) | steady {} ({}; median of {}) | catalog select {} | ratio {:.2} cold, {:.2} steady (goal < {})",
        thousands(tick.apps as f64),
        thousands(tick.workers as f64),
        millis(tick.cold.took),
        phases(&tick.cold),
        millis(tick.steady.took),
        phases(&tick.steady),
        tick.steady_ticks,
        millis(tick.catalog_select),
        ratio(tick.cold.took, tick.catalog_select),
        ratio(tick.steady.took, tick.catalog_select),
        whole(TICK_GOAL),
    );
    flag(
        &mut line,
        &[
            (tick.cold.took >= TICK_GOAL, "cold"),
            (tick.steady.took >= TICK_GOAL, "steady"),
        ],
    );
    line
}

/// `read 420, metrics 60, plan 120, write 250 ms; 21,000 upserts`
fn phases(tick: &Tick) -> String {
    let r = &tick.report;
    let ms = |d: Duration| format!("{:.0}", d.as_secs_f64() * 1e3);
    format!(
        "read {}, metrics {}, plan {}, write {} ms; {} upserts",
        ms(r.read),
        ms(r.metrics),
        ms(r.plan),
        ms(r.write),
        thousands(r.upserts as f64),
    )
}

/// `Scheduler reaction   200 messages on an app at zero: placed 0.62 s, claimed 0.70 s, first
/// delivery 0.74 s (medians of 3; first delivery 0.50 s–2.50 s) | tick 1.00 s | ratio 0.74 (goal
/// <= 2 s)`
fn reaction_line(reaction: &ReactionFigures) -> String {
    let median = reaction.median();
    let (fastest, slowest) = reaction.delivered_range();
    let mut line = format!(
        "Scheduler reaction   {} messages on an app at zero: placed {}, claimed {}, first delivery {} (medians of {}; first delivery {}–{}) | tick {} | ratio {:.2} (goal <= {})",
        thousands(reaction.messages as f64),
        seconds(median.placed),
        seconds(median.claimed),
        seconds(median.delivered),
        reaction.rounds.len(),
        seconds(fastest),
        seconds(slowest),
        seconds(reaction.tick),
        ratio(median.delivered, reaction.tick),
        whole(REACTION_GOAL),
    );
    flag(&mut line, &[(median.delivered > REACTION_GOAL, "time")]);
    line
}

/// `Scheduler failover   a SIGKILLed worker's instances claimed elsewhere after 5.40 s (median of
/// 3, max 5.80 s) | worker lease TTL 5.00 s | ratio 1.08 (goal <= TTL + 1 s)`
fn failover_line(failover: &FailoverFigures) -> String {
    let median = failover.median();
    let goal = failover.lease_ttl + FAILOVER_MARGIN;
    let mut line = format!(
        "Scheduler failover   a SIGKILLed worker's instances claimed elsewhere after {} (median of {}, max {}) | worker lease TTL {} | ratio {:.2} (goal <= TTL + {} = {})",
        seconds(median),
        failover.moves.len(),
        seconds(failover.max()),
        seconds(failover.lease_ttl),
        ratio(median, failover.lease_ttl),
        seconds(FAILOVER_MARGIN),
        seconds(goal),
    );
    flag(&mut line, &[(median > goal, "time")]);
    line
}

fn ratio(value: Duration, reference: Duration) -> f64 {
    if reference.is_zero() {
        0.0
    } else {
        value.as_secs_f64() / reference.as_secs_f64()
    }
}

/// A goal: "50 ms", "2 s".
fn whole(duration: Duration) -> String {
    if duration.subsec_nanos() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{} ms", duration.as_millis())
    }
}

/// "0.74 s"
fn seconds(duration: Duration) -> String {
    format!("{:.2} s", duration.as_secs_f64())
}

fn flag(line: &mut String, missed: &[(bool, &str)]) {
    let missed: Vec<&str> = missed
        .iter()
        .filter_map(|(missed, what)| missed.then_some(*what))
        .collect();
    if !missed.is_empty() {
        line.push_str(&format!("  [missed: {}]", missed.join(", ")));
    }
}

#[cfg(test)]
mod tests {
    use shoal_scheduler::tick::TickReport;

    use super::*;
    use crate::scheduler::reaction::Reaction;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn pure_line_shows_both_placements_the_reference_and_the_ratio() {
        let line = pure_line(&PureFigures {
            apps: 10_000,
            workers: 100,
            decide: ms(6),
            place_cold: ms(8),
            place_steady: ms(5),
            naive: ms(16),
            instances: 20_000,
        });
        assert_eq!(
            line,
            "Scheduler pure   decide+place 10,000 apps / 100 workers  14.0 ms (steady 11.0 ms) | \
             naive full-sort placement 16.0 ms | ratio 0.50 (placement 8.0 ms / naive; decide \
             6.0 ms) (goal < 50 ms)"
        );
    }

    fn tick(took: u64, upserts: usize) -> Tick {
        Tick {
            took: ms(took),
            report: TickReport {
                read: ms(took / 2),
                metrics: ms(10),
                plan: ms(20),
                write: ms(took / 4),
                upserts,
                ..TickReport::default()
            },
        }
    }

    #[test]
    fn tick_line_flags_a_slow_cold_tick_only() {
        let line = tick_line(&TickFigures {
            apps: 10_000,
            workers: 100,
            cold: tick(1_200, 21_000),
            steady: tick(300, 0),
            steady_ticks: 10,
            catalog_select: ms(150),
        });
        assert_eq!(
            line,
            "Scheduler tick   10,000 apps / 100 workers on Postgres  cold 1200 ms (read 600, \
             metrics 10, plan 20, write 300 ms; 21,000 upserts) | steady 300 ms (read 150, \
             metrics 10, plan 20, write 75 ms; 0 upserts; median of 10) | catalog select 150 ms \
             | ratio 8.00 cold, 2.00 steady (goal < 1 s)  [missed: cold]"
        );
    }

    #[test]
    fn reaction_line_reports_medians_against_the_tick() {
        let round = |p, c, d| Reaction {
            placed: ms(p),
            claimed: ms(c),
            delivered: ms(d),
        };
        let line = reaction_line(&ReactionFigures {
            tick: ms(1_000),
            messages: 200,
            rounds: vec![
                round(600, 700, 750),
                round(900, 950, 2_500),
                round(400, 450, 500),
            ],
        });
        assert_eq!(
            line,
            "Scheduler reaction   200 messages on an app at zero: placed 0.60 s, claimed 0.70 s, \
             first delivery 0.75 s (medians of 3; first delivery 0.50 s–2.50 s) | tick 1.00 s | \
             ratio 0.75 (goal <= 2 s)"
        );
    }

    #[test]
    fn failover_line_compares_with_the_lease() {
        let line = failover_line(&FailoverFigures {
            lease_ttl: ms(5_000),
            moves: vec![ms(5_400), ms(6_400), ms(5_800)],
        });
        assert_eq!(
            line,
            "Scheduler failover   a SIGKILLed worker's instances claimed elsewhere after 5.80 s \
             (median of 3, max 6.40 s) | worker lease TTL 5.00 s | ratio 1.16 (goal <= TTL + \
             1.00 s = 6.00 s)"
        );
        let slow = failover_line(&FailoverFigures {
            lease_ttl: ms(5_000),
            moves: vec![ms(6_500)],
        });
        assert!(slow.ends_with("[missed: time]"), "{slow}");
    }
}
