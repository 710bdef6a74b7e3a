//! A dispatch figure made of timed drains, as the Service Bus and stream parts measure it:
//! every round drains a preloaded queue or topic; the figure's rate is all items over all drain
//! time, and the consumer's CPU time per item comes from `/proc` where it is its own process.
//! A drain that fails ends the figure (its rate says in which round and why).

use std::time::Duration;

use anyhow::Result;

use crate::queue::figures::{NotMeasured, Rate};

/// One drain: how many items, how long from the first in hand to the last settled, and the
/// consumer process's CPU time meanwhile (zero when it is not a process of its own).
#[derive(Clone, Copy, Debug)]
pub struct Drain {
    pub items: u64,
    pub elapsed: Duration,
    pub cpu: Duration,
}

/// The rounds of one figure.
pub struct DrainFigure {
    /// The part, in progress lines (`service bus`).
    part: &'static str,
    /// What is counted (`messages`, `events`).
    unit: &'static str,
    items: u64,
    elapsed: Duration,
    cpu: Duration,
    failed: Option<NotMeasured>,
}

impl DrainFigure {
    pub fn new(part: &'static str, unit: &'static str) -> DrainFigure {
        DrainFigure {
            part,
            unit,
            items: 0,
            elapsed: Duration::ZERO,
            cpu: Duration::ZERO,
            failed: None,
        }
    }

    pub fn record(&mut self, name: &str, round: u32, drain: Result<Drain>) {
        let (part, unit) = (self.part, self.unit);
        match drain {
            Ok(d) => {
                eprintln!(
                    "shoal-bench: {part}:   {name}: {} {unit} in {:.2} s, {:.0} {unit}/s",
                    d.items,
                    d.elapsed.as_secs_f64(),
                    d.items as f64 / d.elapsed.as_secs_f64().max(f64::MIN_POSITIVE)
                );
                self.items += d.items;
                self.elapsed += d.elapsed;
                self.cpu += d.cpu;
            }
            Err(error) => {
                eprintln!("shoal-bench: {part}: {name} failed in round {round}: {error:#}");
                self.failed = Some(NotMeasured::Failed {
                    round,
                    why: format!("{error:#}"),
                });
            }
        }
    }

    pub fn live(&self) -> bool {
        self.failed.is_none()
    }

    pub fn rate(&self) -> Rate {
        match &self.failed {
            Some(failed) => Err(failed.clone()),
            None => Ok(self.items as f64 / self.elapsed.as_secs_f64().max(f64::MIN_POSITIVE)),
        }
    }

    /// The consumer's CPU time per item, once measured.
    pub fn cpu_per_item(&self) -> Option<Duration> {
        self.live()
            .then(|| self.cpu.div_f64(self.items.max(1) as f64))
    }
}
