//! The timer line (see `crate::timer`): how late handlers are called after their occurrences,
//! next to a bare timer's wake-up in the same seconds.

use std::time::Duration;

use crate::timer::TimerFigures;

/// The goal: occurrence to handler call, p99.
pub const P99_GOAL: Duration = Duration::from_millis(100);

/// `Timer lateness   shoal p50 3.1 ms p99 12.0 ms max 15.2 ms (200 occurrences, 10 functions
/// every second for 20 s) | bare tokio timer p99 1.1 ms | added p99 10.9 ms (goal: p99 < 100 ms)`
pub fn line(figures: &TimerFigures) -> String {
    let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1e3);
    let (shoal, bare) = (&figures.shoal, &figures.bare);
    let mut line = format!(
        "Timer lateness   shoal p50 {} p99 {} max {} ({} occurrences, {} functions every second \
         for {} s) | bare tokio timer p99 {} | added p99 {} (goal: p99 < {})",
        ms(shoal.p50),
        ms(shoal.p99),
        ms(shoal.max),
        shoal.samples,
        figures.functions,
        figures.seconds,
        ms(bare.p99),
        ms(shoal.p99.saturating_sub(bare.p99)),
        ms(P99_GOAL),
    );
    let expected = figures.functions * figures.seconds as usize;
    if shoal.samples != expected {
        line.push_str(&format!("  [{} of {expected} occurrences]", shoal.samples));
    }
    if figures.doubled > 0 {
        line.push_str(&format!("  [{} fired twice]", figures.doubled));
    }
    if shoal.p99 >= P99_GOAL {
        line.push_str("  [missed: p99]");
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timer::Lateness;

    fn lateness(p50: u64, p99: u64, max: u64, samples: usize) -> Lateness {
        Lateness {
            p50: Duration::from_millis(p50),
            p99: Duration::from_millis(p99),
            max: Duration::from_millis(max),
            samples,
        }
    }

    #[test]
    fn the_line_says_the_added_lateness_and_what_went_wrong() {
        let mut figures = TimerFigures {
            functions: 10,
            seconds: 20,
            shoal: lateness(3, 12, 15, 200),
            bare: lateness(1, 2, 2, 20),
            doubled: 0,
        };
        assert_eq!(
            line(&figures),
            "Timer lateness   shoal p50 3.0 ms p99 12.0 ms max 15.0 ms (200 occurrences, 10 \
             functions every second for 20 s) | bare tokio timer p99 2.0 ms | added p99 10.0 ms \
             (goal: p99 < 100.0 ms)"
        );
        figures.shoal = lateness(3, 150, 300, 198);
        figures.doubled = 1;
        assert!(
            line(&figures).ends_with("  [198 of 200 occurrences]  [1 fired twice]  [missed: p99]")
        );
    }
}
