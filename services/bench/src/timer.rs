//! The timer figure: how late a timer function's handler is called after its occurrence, for
//! several functions firing every second on one `shoal worker` process, next to a bare tokio
//! timer in the bench's own process waking at the same whole seconds at the same time (the
//! machine's own scheduling delay, the floor under any timer).
//!
//! An occurrence's time is in its `webhook-id` (`timer-<µs since the epoch>`, the worker's);
//! its lateness is the handler's wall-clock arrival minus that. Every occurrence from the
//! first call on is counted, so a missed or doubled occurrence shows in the count line.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use serde_json::json;
use shoal_testkit::ScratchDatabase;

use crate::drains::worker_round;
use crate::queue::app;
use crate::queue::handler::{Handler, Stamp};
use crate::server::ShoalBin;

pub struct TimerPlan<'a> {
    pub shoal: &'a ShoalBin,
    pub admin_url: &'a str,
    /// Seconds measured (each function fires once a second).
    pub seconds: u64,
    pub functions: usize,
}

/// Lateness percentiles of one side.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lateness {
    pub p50: Duration,
    pub p99: Duration,
    pub max: Duration,
    pub samples: usize,
}

/// What the timer part measured.
#[derive(Clone, Debug)]
pub struct TimerFigures {
    pub functions: usize,
    pub seconds: u64,
    pub shoal: Lateness,
    pub bare: Lateness,
    /// Occurrences fired more than once (by function and occurrence).
    pub doubled: usize,
}

pub async fn run(plan: &TimerPlan<'_>) -> Result<TimerFigures> {
    if plan.seconds == 0 || plan.functions == 0 {
        bail!("--timer-seconds and --timer-functions must be positive");
    }
    eprintln!(
        "shoal-bench: timer: {} functions firing every second for {} s",
        plan.functions, plan.seconds
    );
    let database = ScratchDatabase::create(plan.admin_url, "shoal_bench_timer").await?;
    let figures = measure(plan, &database).await;
    let dropped = database.drop_now().await;
    let figures = figures?;
    dropped?;
    Ok(figures)
}

async fn measure(plan: &TimerPlan<'_>, database: &ScratchDatabase) -> Result<TimerFigures> {
    plan.shoal.migrate(database.url()).await?;
    let handler = Handler::stamping().await?;
    let functions: Vec<(String, serde_json::Value)> = (0..plan.functions)
        .map(|i| {
            let body = json!({"bindings": [{"type": "timerTrigger", "direction": "in",
                "name": "tick", "schedule": "* * * * * *"}]});
            (format!("tick{i}"), body)
        })
        .collect();
    app::write_app_functions(
        plan.shoal,
        database,
        &json!({"handler": {"url": handler.url()}}),
        &functions,
    )
    .await
    .context("writing the app")?;
    // From the next whole second after the first call on, both sides for the same seconds.
    let measured = std::cell::RefCell::new(None);
    let expected = plan.seconds * plan.functions as u64;
    worker_round(
        plan.shoal,
        database.url(),
        "timer",
        &handler,
        expected,
        || async {
            let start = next_whole_second(SystemTime::now());
            let end = start + Duration::from_secs(plan.seconds);
            let bare = tokio::spawn(bare_timer(start, plan.seconds));
            tokio::time::sleep(until(end) + Duration::from_secs(1)).await;
            let bare = bare.await.context("the bare timer")?;
            *measured.borrow_mut() = Some((bare, start, end));
            Ok(())
        },
    )
    .await?;
    let Some((bare, start, end)) = measured.into_inner() else {
        bail!("the timer round measured nothing");
    };
    let stamps = handler.tally().stamps();
    let (late, doubled) = shoal_lateness(&stamps, start, end);
    if (late.len() as u64) < expected / 2 {
        bail!(
            "{} of {expected} occurrences reached the handler",
            late.len()
        );
    }
    Ok(TimerFigures {
        functions: plan.functions,
        seconds: plan.seconds,
        shoal: percentiles(late),
        bare: percentiles(bare),
        doubled,
    })
}

/// Each occurrence in `[start, end)` once per function (the first call's lateness), and how
/// many were called more than once.
fn shoal_lateness(stamps: &[Stamp], start: SystemTime, end: SystemTime) -> (Vec<Duration>, usize) {
    let mut first: BTreeMap<(&str, i64), (Duration, usize)> = BTreeMap::new();
    for stamp in stamps {
        let Some(micros) = stamp
            .webhook_id
            .strip_prefix("timer-")
            .and_then(|m| m.parse::<i64>().ok())
        else {
            continue;
        };
        let occurrence = UNIX_EPOCH + Duration::from_micros(micros.max(0) as u64);
        if occurrence < start || occurrence >= end {
            continue;
        }
        let late = stamp.at.duration_since(occurrence).unwrap_or_default();
        let entry = first
            .entry((stamp.path.as_str(), micros))
            .or_insert((late, 0));
        entry.0 = entry.0.min(late);
        entry.1 += 1;
    }
    let doubled = first.values().filter(|(_, n)| *n > 1).count();
    (first.into_values().map(|(late, _)| late).collect(), doubled)
}

/// Wakes at each whole second from `start` for `seconds`, as a timer with nothing to do would:
/// how late each wake-up was.
async fn bare_timer(start: SystemTime, seconds: u64) -> Vec<Duration> {
    let mut late = Vec::with_capacity(seconds as usize);
    for n in 0..seconds {
        let target = start + Duration::from_secs(n);
        tokio::time::sleep(until(target)).await;
        late.push(SystemTime::now().duration_since(target).unwrap_or_default());
    }
    late
}

fn until(at: SystemTime) -> Duration {
    at.duration_since(SystemTime::now()).unwrap_or_default()
}

fn next_whole_second(now: SystemTime) -> SystemTime {
    let since = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    UNIX_EPOCH + Duration::from_secs(since.as_secs() + 1)
}

/// Nearest-rank percentiles.
pub fn percentiles(mut samples: Vec<Duration>) -> Lateness {
    samples.sort();
    let rank = |p: f64| {
        if samples.is_empty() {
            return Duration::ZERO;
        }
        let index = ((p * samples.len() as f64).ceil() as usize).clamp(1, samples.len()) - 1;
        samples[index]
    };
    Lateness {
        p50: rank(0.50),
        p99: rank(0.99),
        max: samples.last().copied().unwrap_or_default(),
        samples: samples.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(path: &str, micros: i64, late_ms: u64) -> Stamp {
        let occurrence = UNIX_EPOCH + Duration::from_micros(micros as u64);
        Stamp {
            at: occurrence + Duration::from_millis(late_ms),
            path: path.into(),
            webhook_id: format!("timer-{micros}"),
        }
    }

    #[test]
    fn each_occurrence_counts_once_per_function_and_doubles_are_counted() {
        let start = UNIX_EPOCH + Duration::from_secs(100);
        let end = start + Duration::from_secs(3);
        let s = |n: i64| 100_000_000 + n * 1_000_000;
        let stamps = vec![
            stamp("/tick0", s(0), 5),
            stamp("/tick1", s(0), 7),
            stamp("/tick0", s(1), 4),
            // Fired twice: the first call counts, the double is reported.
            stamp("/tick0", s(1), 40),
            stamp("/tick0", s(2), 6),
            // Outside the measured seconds, and not a timer's.
            stamp("/tick0", s(3), 1),
            stamp("/tick0", s(-1), 1),
            Stamp {
                webhook_id: "msg-1".into(),
                ..stamp("/tick0", s(0), 1)
            },
        ];
        let (late, doubled) = shoal_lateness(&stamps, start, end);
        let mut ms: Vec<u128> = late.iter().map(Duration::as_millis).collect();
        ms.sort();
        assert_eq!(ms, vec![4, 5, 6, 7]);
        assert_eq!(doubled, 1);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let samples: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        let l = percentiles(samples);
        assert_eq!(
            (l.p50, l.p99, l.max, l.samples),
            (
                Duration::from_millis(50),
                Duration::from_millis(99),
                Duration::from_millis(100),
                100
            )
        );
        assert_eq!(percentiles(Vec::new()).p99, Duration::ZERO);
    }
}
