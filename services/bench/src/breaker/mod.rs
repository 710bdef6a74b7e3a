//! The circuit breaker figures, against Azurite (its access log read as it is written) and a
//! handler that fails every request:
//!
//! * reaction: three `shoal worker` processes (`--breaker-tick 1s`) fail through a preloaded
//!   queue until more than `failureThreshold` (100) final failures open the breaker; the figure
//!   is the time from the handler's threshold-crossing request (the 101st) to the last receive
//!   call any worker makes on the queue (seen in Azurite's access log; none may follow in the
//!   next 3 s). Its reference, in the same round: the same workers on a function whose breaker
//!   does not count, paused by hand — the notification path alone, without the counting tick;
//! * counting cost: one worker failing through a queue whose messages are visible again at
//!   once, with the breaker's counting off (`enabled: false`) and on (a threshold it never
//!   reaches): invocations per second of each, each on an Azurite of its own (Azurite slows
//!   down with the messages it holds, so a shared one would favour whichever ran first), in
//!   alternating order from round to round.

mod rounds;

use std::time::Duration;

use anyhow::{Result, bail};
use shoal_testkit::ScratchDatabase;

use crate::queue::figures::{NotMeasured, Rate};
use crate::server::ShoalBin;

pub struct BreakerPlan<'a> {
    pub shoal: &'a ShoalBin,
    pub admin_url: &'a str,
    pub rounds: u32,
    /// Messages preloaded for each figure.
    pub messages: u64,
    /// How long each counting figure measures (after a warm-up of 2 s).
    pub measure: Duration,
}

/// A reaction, or why it was not measured.
pub type Reaction = Result<Duration, NotMeasured>;

pub struct BreakerFigures {
    pub rounds: u32,
    /// The slowest round's reaction to the threshold-crossing failure.
    pub reaction: Reaction,
    /// The slowest round's reaction to a pause by hand (the reference).
    pub paused: Reaction,
    /// Failed invocations per second with the breaker counting, and without.
    pub counting_on: Rate,
    pub counting_off: Rate,
}

pub async fn run(plan: &BreakerPlan<'_>) -> Result<BreakerFigures> {
    if plan.rounds == 0 || plan.messages == 0 {
        bail!("--rounds and --breaker-messages must be positive");
    }
    eprintln!(
        "shoal-bench: breaker: {} rounds, {} messages per figure, three workers for the reaction, one for the counting cost",
        plan.rounds, plan.messages
    );
    let database = ScratchDatabase::create(plan.admin_url, "shoal_bench_breaker").await?;
    let figures = rounds::all(plan, &database).await;
    let dropped = database.drop_now().await;
    let figures = figures?;
    dropped?;
    Ok(figures)
}
