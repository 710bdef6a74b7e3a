//! A timer's schedule status and what its listener does with it, as Azure's listener does.
//!
//! Azure keeps a `ScheduleStatus` per monitored timer (`Last`, `Next`, `LastUpdated`;
//! azure-webjobs-sdk-extensions, `src/WebJobs.Extensions/Extensions/Timers/Scheduling/ScheduleStatus.cs`)
//! so that a host that was down when an occurrence came runs it once when it is back. The
//! rules, from `Listener/TimerListener.cs` (`StartAsync`, `InvokeJobFunction`) and
//! `Scheduling/ScheduleMonitor.cs` (`CheckPastDueAsync`):
//!
//! * on start, with no status stored, one is written with the next occurrence from now;
//! * with one stored, the next occurrence is computed again from its `Last` (or, before the
//!   first invocation, its `LastUpdated`); if that differs from the stored `Next` the schedule
//!   has changed since, and the status is rewritten: `Next` from `Last`, or from now if that
//!   is already past (a changed schedule is never past due);
//! * if `Next` is then in the past, the listener invokes the function once, straight away,
//!   with `IsPastDue` set: the occurrences missed while it was down are not replayed one by
//!   one;
//! * otherwise, with `runOnStartup`, it invokes it once straight away; then the schedule goes on;
//! * after every invocation, whether it succeeded or not, `Last` and `LastUpdated` become the
//!   invocation's time (or the due time, if the timer fired a little early) and `Next` the
//!   next occurrence after it.
//!
//! Without monitoring the handler is sent no status and nothing is ever past due. Shoal still
//! keeps the status, because the fleet shares it: the worker that moves it on is the one that
//! fires the occurrence (`shoal_store::timer_schedules`), so a timer runs once per occurrence
//! however many instances host it. An unmonitored timer whose stored status is behind (its
//! hosts were down) starts again from now, as Azure's unmonitored listener starts from now.
//!
//! The times are kept to the microsecond, as the store keeps them, so a status read back
//! compares equal to the one written and is not taken for a changed schedule.

use chrono::{DateTime, Duration, DurationRound, Utc};
use chrono_tz::Tz;

use super::occurrences::next_after;
use super::schedule::Schedule;

/// Where a timer's schedule stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScheduleStatus {
    /// The time of the last invocation; `None` before the first, and after the schedule
    /// changed (Azure writes .NET's default date, `0001-01-01`).
    pub last: Option<DateTime<Utc>>,
    /// The occurrence the timer waits for.
    pub next: DateTime<Utc>,
    /// When `next` was last computed from the schedule: the time it was counted from.
    pub last_updated: DateTime<Utc>,
}

/// Why the function is invoked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Its schedule's next occurrence came.
    Scheduled,
    /// The listener found the stored next occurrence already past when it started (Azure's
    /// `UnscheduledInvocationReason: IsPastDue`, with `OriginalSchedule`).
    PastDue { original: DateTime<Utc> },
    /// `runOnStartup`: once when the listener starts.
    RunOnStartup,
}

impl Reason {
    /// `IsPastDue` of the invocation's `TimerInfo`.
    pub fn is_past_due(self) -> bool {
        matches!(self, Reason::PastDue { .. })
    }
}

/// What a starting listener does (see the module's doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Start {
    /// The status to wait on (and, when monitored, the one the handler is sent next).
    pub status: ScheduleStatus,
    /// Whether `status` must be written to the store before anything else: none was stored,
    /// the schedule changed, or (unmonitored) the stored status is behind.
    pub write: bool,
    /// An invocation to make straight away, before waiting for `status.next`: at most one.
    pub immediate: Option<Reason>,
}

/// What the listener of a timer does when it starts at `now`, given the status stored for it
/// (`None` when nothing is stored). `None` only when the schedule has no occurrence left in the
/// calendar.
pub fn start(
    stored: Option<&ScheduleStatus>,
    schedule: &Schedule,
    tz: Tz,
    now: DateTime<Utc>,
    monitor: bool,
    run_on_startup: bool,
) -> Option<Start> {
    let now = to_micros(now);
    let fresh = |from: DateTime<Utc>| -> Option<ScheduleStatus> {
        Some(ScheduleStatus {
            last: None,
            next: to_micros(next_after(schedule, from, tz)?),
            last_updated: from,
        })
    };
    let (status, write) = match stored {
        None => (fresh(now)?, true),
        // Behind: what an unmonitored timer missed is not run, and it counts from now.
        Some(stored) if !monitor && stored.next < now => (fresh(now)?, true),
        Some(stored) => {
            let counted_from = stored.last.unwrap_or(stored.last_updated);
            let expected = to_micros(next_after(schedule, counted_from, tz)?);
            if expected == stored.next {
                (*stored, false)
            } else if now > expected {
                (fresh(now)?, true)
            } else {
                let status = ScheduleStatus {
                    last: None,
                    next: expected,
                    last_updated: counted_from,
                };
                (status, true)
            }
        }
    };
    let immediate = if monitor && now > status.next {
        Some(Reason::PastDue {
            original: status.next,
        })
    } else if run_on_startup {
        Some(Reason::RunOnStartup)
    } else {
        None
    };
    Some(Start {
        status,
        write,
        immediate,
    })
}

/// The status after an invocation for `reason` that started at `invoked_at`, to store (when
/// monitored) and wait on. A scheduled invocation that fired before its due time counts from
/// the due time, so the same occurrence is not scheduled twice. `None` only when the schedule
/// has no occurrence left in the calendar.
pub fn after_invocation(
    status: &ScheduleStatus,
    schedule: &Schedule,
    tz: Tz,
    invoked_at: DateTime<Utc>,
    reason: Reason,
) -> Option<ScheduleStatus> {
    let invoked_at = to_micros(invoked_at);
    let at = if reason == Reason::Scheduled && status.next > invoked_at {
        status.next
    } else {
        invoked_at
    };
    Some(ScheduleStatus {
        last: Some(at),
        next: to_micros(next_after(schedule, at, tz)?),
        last_updated: at,
    })
}

/// How long to wait from `now` for the status's next occurrence; zero when it is due.
pub fn until_next(status: &ScheduleStatus, now: DateTime<Utc>) -> std::time::Duration {
    (status.next - now).to_std().unwrap_or_default()
}

fn to_micros(t: DateTime<Utc>) -> DateTime<Utc> {
    t.duration_trunc(Duration::microseconds(1)).unwrap_or(t)
}
