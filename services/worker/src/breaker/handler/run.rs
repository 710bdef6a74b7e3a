//! The handler's reachability as a pure state machine ([`Run`]): connection failures, answers,
//! declared health checks and what Postgres says, and what to tell Postgres next ([`Report`]);
//! and the probes' pace. `handler.rs` drives it.

use std::time::Duration;

use chrono::{DateTime, Utc};
use shoal_store::breakers::FailureSample;

/// Connection failures in a row (with no answer between) that make the handler unreachable.
pub const UNREACHABLE_AFTER: u32 = 3;
/// The first probe follows the failure that started it after this; each further one waits
/// twice as long, up to [`LONGEST_PROBE`].
pub const FIRST_PROBE: Duration = Duration::from_millis(250);
pub const LONGEST_PROBE: Duration = Duration::from_secs(4);

/// Which app a handler belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AppKey {
    pub tenant: String,
    pub app: String,
}

/// What waiting deliveries watch: `answers` grows with every answer after a connection
/// failure; `unreachable_since` is set while the handler counts as unreachable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Reach {
    pub answers: u64,
    pub unreachable_since: Option<DateTime<Utc>>,
}

/// What to tell Postgres (the sync task takes it).
#[derive(Clone, Debug, PartialEq)]
pub enum Report {
    /// Open every breaker of the app; the run's first failure says why.
    Unreachable(FailureSample),
    /// Close the breakers the handler's unreachability opened.
    Reachable,
}

/// The run of connection failures and what follows from it. Pure, tested below.
#[derive(Debug, Default)]
pub struct Run {
    failures: u32,
    first: Option<FailureSample>,
    reach: Reach,
    /// Postgres says the app's breakers are open because the handler is unreachable.
    open_in_store: bool,
    report: Option<Report>,
    /// The declared health check's run (`handler.health`), when the app has one.
    checks: Checks,
}

/// Health checks in a row, and whether they made the handler unhealthy.
#[derive(Debug, Default)]
struct Checks {
    failed: u32,
    passed: u32,
    first_failure: Option<FailureSample>,
    unhealthy: bool,
}

impl Run {
    /// Connection failures have been seen since the last answer.
    pub fn failing(&self) -> bool {
        self.failures > 0
    }

    /// A connection failure at `at`. True when it made the handler unreachable.
    pub fn connection_failed(&mut self, at: DateTime<Utc>, reason: &str) -> bool {
        self.failures = self.failures.saturating_add(1);
        let first = self.first.get_or_insert_with(|| FailureSample {
            at,
            reason: reason.chars().take(1024).collect(),
        });
        if self.failures < UNREACHABLE_AFTER || self.reach.unreachable_since.is_some() {
            return false;
        }
        self.reach.unreachable_since = Some(first.at);
        if !self.open_in_store {
            self.report = Some(Report::Unreachable(first.clone()));
        }
        true
    }

    /// The handler answered (a probe, or any call). True when waiting deliveries must be woken.
    /// While its health checks fail, an answer only ends the run of connection failures: the
    /// checks decide when it is back.
    pub fn answered(&mut self) -> bool {
        if self.checks.unhealthy {
            self.failures = 0;
            self.first = None;
            return false;
        }
        let after_failure = self.failures > 0 || self.reach.unreachable_since.is_some();
        self.failures = 0;
        self.first = None;
        self.reach.unreachable_since = None;
        if self.open_in_store {
            self.report = Some(Report::Reachable);
        } else if matches!(self.report, Some(Report::Unreachable(_))) {
            // Never told: nothing to undo.
            self.report = None;
        }
        if after_failure {
            self.reach.answers += 1;
        }
        after_failure
    }

    /// Postgres says whether the app's breakers are open for the handler (another worker may
    /// have found it unreachable, `since`). True when this worker learnt of it just now.
    pub fn in_store(&mut self, open_since: Option<DateTime<Utc>>) -> bool {
        self.open_in_store = open_since.is_some();
        match open_since {
            Some(since) => {
                if matches!(self.report, Some(Report::Unreachable(_))) {
                    self.report = None;
                }
                // Answered here and not yet told: the next round closes them.
                if self.report == Some(Report::Reachable) {
                    return false;
                }
                if self.reach.unreachable_since.is_none() {
                    self.reach.unreachable_since = Some(since);
                    return true;
                }
                false
            }
            None => {
                if self.report == Some(Report::Reachable) {
                    self.report = None;
                }
                false
            }
        }
    }

    /// A health check failed at `at`; `threshold` in a row make the handler unhealthy, as a
    /// run of connection failures makes it unreachable. True when it became unhealthy.
    pub fn check_failed(&mut self, at: DateTime<Utc>, reason: &str, threshold: u32) -> bool {
        let checks = &mut self.checks;
        checks.passed = 0;
        checks.failed = checks.failed.saturating_add(1);
        let first = checks
            .first_failure
            .get_or_insert_with(|| FailureSample {
                at,
                reason: reason.chars().take(1024).collect(),
            })
            .clone();
        if checks.unhealthy || checks.failed < threshold {
            return false;
        }
        checks.unhealthy = true;
        if self.reach.unreachable_since.is_none() {
            self.reach.unreachable_since = Some(first.at);
            if !self.open_in_store {
                self.report = Some(Report::Unreachable(first));
            }
        }
        true
    }

    /// A health check passed; `threshold` in a row make an unhealthy handler healthy. A
    /// handler that counts as unreachable for another reason (connection failures here,
    /// another worker's finding) is back at once: the check is an answer, and a stricter one.
    /// True when waiting deliveries must be woken.
    pub fn check_passed(&mut self, threshold: u32) -> bool {
        let checks = &mut self.checks;
        checks.failed = 0;
        checks.first_failure = None;
        checks.passed = checks.passed.saturating_add(1);
        if checks.unhealthy {
            if checks.passed < threshold {
                return false;
            }
            checks.unhealthy = false;
        }
        if self.failures == 0 && self.reach.unreachable_since.is_none() {
            return false;
        }
        self.answered()
    }

    /// The app no longer declares a health check: its verdict is dropped.
    pub fn checks_removed(&mut self) -> bool {
        let was = std::mem::take(&mut self.checks).unhealthy;
        was && self.answered()
    }

    pub fn reach(&self) -> Reach {
        self.reach
    }

    /// What Postgres has not been told yet. It stays until Postgres's reading shows it was
    /// ([`Run::in_store`]), so a failed round tells it again.
    pub fn report(&self) -> Option<Report> {
        self.report.clone()
    }
}

/// The pause before each probe: [`FIRST_PROBE`], doubling up to [`LONGEST_PROBE`].
#[derive(Debug)]
pub struct ProbePace(Duration);

impl Default for ProbePace {
    fn default() -> Self {
        ProbePace(FIRST_PROBE)
    }
}

impl ProbePace {
    pub fn next(&mut self) -> Duration {
        let pause = self.0;
        self.0 = (self.0 * 2).min(LONGEST_PROBE);
        pause
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap()
    }

    #[test]
    fn a_run_of_connection_failures_makes_the_handler_unreachable_until_it_answers() {
        let mut run = Run::default();
        assert!(!run.connection_failed(at(0), "refused"));
        assert!(!run.connection_failed(at(1), "refused again"));
        assert_eq!(run.reach().unreachable_since, None, "two are not a run");
        assert!(run.connection_failed(at(2), "refused"));
        assert_eq!(
            run.reach().unreachable_since,
            Some(at(0)),
            "since the first"
        );
        assert!(!run.connection_failed(at(3), "refused"), "once");
        let Some(Report::Unreachable(why)) = run.report() else {
            panic!("reported")
        };
        assert_eq!(why.reason, "refused");
        // Postgres now says so too (which settles the report); then a probe is answered.
        assert!(!run.in_store(Some(at(2))));
        assert_eq!(run.report(), None);
        let answers = run.reach().answers;
        assert!(run.answered());
        assert_eq!(run.reach().answers, answers + 1, "waiters wake");
        assert_eq!(run.reach().unreachable_since, None);
        assert_eq!(run.report(), Some(Report::Reachable));
        assert!(
            !run.in_store(Some(at(2))),
            "a round that failed: still to tell"
        );
        assert_eq!(run.report(), Some(Report::Reachable));
        run.in_store(None);
        assert_eq!(run.report(), None, "told");
    }

    #[test]
    fn an_answer_ends_the_run_and_wakes_only_after_a_failure() {
        let mut run = Run::default();
        assert!(!run.answered(), "nothing to wake");
        run.connection_failed(at(0), "refused");
        run.connection_failed(at(1), "refused");
        assert!(run.answered());
        assert!(!run.connection_failed(at(2), "refused"), "a new run");
        assert_eq!(run.report(), None, "never unreachable, nothing told");
    }

    #[test]
    fn an_answer_before_the_report_went_out_takes_it_back() {
        let mut run = Run::default();
        for s in 0..3 {
            run.connection_failed(at(s), "refused");
        }
        run.answered();
        assert_eq!(run.report(), None);
    }

    #[test]
    fn another_workers_finding_is_learnt_from_postgres() {
        let mut run = Run::default();
        assert!(run.in_store(Some(at(5))), "learnt");
        assert_eq!(run.reach().unreachable_since, Some(at(5)));
        assert!(!run.in_store(Some(at(5))), "once");
        assert_eq!(run.report(), None, "nothing to tell: Postgres knows");
        // Closed elsewhere (another worker's probe, or a resume by hand): still unreachable
        // here until this worker's own probe is answered.
        run.in_store(None);
        assert_eq!(run.reach().unreachable_since, Some(at(5)));
        assert!(run.answered());
        assert_eq!(run.report(), None, "nothing open to close");
    }

    #[test]
    fn failed_health_checks_make_the_handler_unhealthy_until_enough_pass() {
        let mut run = Run::default();
        let (fail, pass) = (3, 2);
        assert!(!run.check_failed(at(0), "answered 503", fail));
        assert!(!run.check_failed(at(1), "answered 503", fail));
        assert!(
            !run.check_passed(pass),
            "a pass ends the run, nothing to wake"
        );
        assert!(!run.check_failed(at(2), "answered 500", fail));
        assert!(!run.check_failed(at(3), "answered 500", fail));
        assert_eq!(
            run.reach().unreachable_since,
            None,
            "two in a row are not enough"
        );
        assert!(
            run.check_failed(at(4), "answered 500", fail),
            "became unhealthy"
        );
        assert_eq!(
            run.reach().unreachable_since,
            Some(at(2)),
            "since the run's first"
        );
        let Some(Report::Unreachable(why)) = run.report() else {
            panic!("reported")
        };
        assert_eq!(why.reason, "answered 500");
        assert!(!run.check_failed(at(5), "answered 500", fail), "once");

        // A call answered meanwhile does not overrule the checks.
        let answers = run.reach().answers;
        assert!(!run.answered());
        assert_eq!(run.reach().unreachable_since, Some(at(2)));
        run.in_store(Some(at(2)));
        assert_eq!(run.report(), None, "Postgres knows");

        assert!(!run.check_passed(pass), "one pass of two");
        assert!(
            !run.check_failed(at(6), "answered 500", fail),
            "the passes start over"
        );
        assert!(!run.check_passed(pass));
        assert!(run.check_passed(pass), "healthy: waiters wake");
        assert_eq!(run.reach().answers, answers + 1);
        assert_eq!(run.reach().unreachable_since, None);
        assert_eq!(run.report(), Some(Report::Reachable));
    }

    #[test]
    fn a_passing_check_is_an_answer_for_every_other_reason_too() {
        // Connection failures made the handler unreachable here.
        let mut run = Run::default();
        for s in 0..3 {
            run.connection_failed(at(s), "refused");
        }
        assert!(
            run.check_passed(2),
            "back at the first pass: it was never unhealthy"
        );
        assert_eq!(run.reach().unreachable_since, None);
        // Another worker found it unreachable.
        let mut run = Run::default();
        run.in_store(Some(at(9)));
        assert!(run.check_passed(1));
        assert_eq!(run.report(), Some(Report::Reachable));
        // Passing while all is well wakes nobody.
        assert!(!Run::default().check_passed(1));
    }

    #[test]
    fn dropping_the_check_drops_its_verdict() {
        let mut run = Run::default();
        run.check_failed(at(0), "refused", 1);
        assert!(run.reach().unreachable_since.is_some());
        assert!(run.checks_removed());
        assert_eq!(run.reach().unreachable_since, None);
        assert!(!Run::default().checks_removed());
    }

    #[test]
    fn probes_back_off_to_a_cap() {
        let mut pace = ProbePace::default();
        let ms: Vec<u128> = (0..7).map(|_| pace.next().as_millis()).collect();
        assert_eq!(ms, [250, 500, 1_000, 2_000, 4_000, 4_000, 4_000]);
    }
}
