//! The parts of a run and how each ended. A part that fails is reported and the run goes on to
//! the next one, so one broken part (an emulator that stopped answering, a reference that
//! stalled) does not hide the others' figures; only Ctrl-C ends the run early.
//!
//! The exit code is non-zero when a part failed: it could not measure Shoal's own figures, or
//! they broke a hard limit (too many failed requests). A reference that failed inside a part
//! (the queue part's SDK ceiling or Python consumer) is named in that part's line and does not
//! fail the part: the run is about Shoal, and a reference on a busy machine can stall for
//! reasons of its own. The API and scheduler parts' references (pgbench, the naive placement,
//! the catalog select) run as steps of their part, so their failure fails the part.

use std::fmt;

/// The parts of a run, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Part {
    /// The management API against pgbench.
    Api,
    /// Storage Queue dispatch against the SDK ceiling and a Python consumer.
    Queue,
    /// Service Bus dispatch against a raw receive/complete loop with the same client.
    ServiceBus,
    /// Kafka dispatch against a raw consume-and-commit loop with the same client.
    Stream,
    /// RabbitMQ dispatch against a raw consume/ack loop with the same client.
    Rabbitmq,
    /// Timer occurrences to handler calls, against a bare timer's wake-up.
    Timer,
    /// Scale decisions, placement, ticks, reaction and failover.
    Scheduler,
    /// The webhook ingress against calling the handler directly.
    Webhooks,
    /// The circuit breaker's reaction and the cost of its counting.
    Breaker,
    /// The dashboard's bundle and first render, and invocation telemetry's cost to dispatch.
    Dashboard,
    /// Trace export's cost to queue dispatch and to the webhook ingress's latency.
    Tracing,
}

impl Part {
    pub const ALL: [Part; 11] = [
        Part::Api,
        Part::Queue,
        Part::ServiceBus,
        Part::Stream,
        Part::Rabbitmq,
        Part::Timer,
        Part::Scheduler,
        Part::Webhooks,
        Part::Breaker,
        Part::Dashboard,
        Part::Tracing,
    ];

    /// As the part is named in docs/benchmarks.md and in `--only`.
    pub fn title(self) -> &'static str {
        match self {
            Part::Api => "API",
            Part::Queue => "Queue",
            Part::ServiceBus => "Service Bus",
            Part::Stream => "Stream",
            Part::Rabbitmq => "RabbitMQ",
            Part::Timer => "Timer",
            Part::Scheduler => "Scheduler",
            Part::Webhooks => "Webhooks",
            Part::Breaker => "Breaker",
            Part::Dashboard => "Dashboard",
            Part::Tracing => "Tracing",
        }
    }
}

/// The error a part returns when Ctrl-C stopped it.
#[derive(Debug)]
pub struct Interrupted;

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

/// How one part ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Its lines are printed (a failed reference among them, perhaps).
    Measured,
    /// Why it failed, the whole chain of causes.
    Failed(String),
    Interrupted,
}

impl Outcome {
    pub fn of(result: anyhow::Result<()>) -> Outcome {
        match result {
            Ok(()) => Outcome::Measured,
            Err(error) if error.is::<Interrupted>() => Outcome::Interrupted,
            Err(error) => Outcome::Failed(format!("{error:#}")),
        }
    }

    /// Whether the run goes on to the next part.
    pub fn go_on(&self) -> bool {
        *self != Outcome::Interrupted
    }

    /// The line printed among the figures for a part that failed: the first line of why (a
    /// consumer's output may follow it; all of it is on stderr).
    pub fn line(&self, part: Part) -> Option<String> {
        match self {
            Outcome::Measured => None,
            Outcome::Failed(why) => Some(format!(
                "{} part failed: {}",
                part.title(),
                why.lines().next().unwrap_or_default()
            )),
            Outcome::Interrupted => Some(format!("{} part interrupted", part.title())),
        }
    }
}

/// The run's exit code: 0 when every part that ran measured Shoal's figures, 1 when one
/// failed or the run was interrupted.
pub fn exit_code(outcomes: &[(Part, Outcome)]) -> u8 {
    let failed = outcomes
        .iter()
        .any(|(_, outcome)| *outcome != Outcome::Measured);
    u8::from(failed)
}

#[cfg(test)]
mod tests {
    use anyhow::{Context, anyhow};

    use super::*;

    #[test]
    fn an_outcome_tells_ctrl_c_from_a_failure() {
        let interrupted: anyhow::Result<()> = Err(Interrupted).context("while loading apps");
        assert_eq!(Outcome::of(interrupted), Outcome::Interrupted);
        assert_eq!(Outcome::of(Ok(())), Outcome::Measured);
        let failed: anyhow::Result<()> = Err(anyhow!("Azurite did not start")).context("queue");
        assert_eq!(
            Outcome::of(failed),
            Outcome::Failed("queue: Azurite did not start".to_owned())
        );
    }

    #[test]
    fn only_ctrl_c_ends_the_run_early() {
        assert!(Outcome::Measured.go_on());
        assert!(Outcome::Failed("x".to_owned()).go_on());
        assert!(!Outcome::Interrupted.go_on());
    }

    #[test]
    fn a_failed_part_prints_the_first_line_of_why() {
        let failed = Outcome::Failed("shoal worker exited (exit status: 1)\nlog tail".to_owned());
        assert_eq!(
            failed.line(Part::Queue).as_deref(),
            Some("Queue part failed: shoal worker exited (exit status: 1)")
        );
        assert_eq!(Outcome::Measured.line(Part::Api), None);
        assert_eq!(
            Outcome::Interrupted.line(Part::Scheduler).as_deref(),
            Some("Scheduler part interrupted")
        );
    }

    #[test]
    fn the_exit_code_is_non_zero_only_when_a_part_did_not_measure_shoal() {
        use Outcome::{Failed, Interrupted, Measured};
        let failed = || Failed("why".to_owned());
        let cases: [(Vec<(Part, Outcome)>, u8); 6] = [
            (vec![], 0),
            (vec![(Part::Api, Measured), (Part::Queue, Measured)], 0),
            (
                vec![(Part::Queue, failed()), (Part::Scheduler, Measured)],
                1,
            ),
            (vec![(Part::Api, Measured), (Part::Webhooks, failed())], 1),
            (vec![(Part::Api, Interrupted)], 1),
            (
                vec![
                    (Part::Api, Measured),
                    (Part::Queue, Measured),
                    (Part::Scheduler, Measured),
                    (Part::Webhooks, Measured),
                ],
                0,
            ),
        ];
        for (outcomes, expected) in cases {
            assert_eq!(exit_code(&outcomes), expected, "{outcomes:?}");
        }
    }
}
