//! What the `timerTrigger` needs without I/O, as Azure Functions' timer extension defines it
//! (azure-webjobs-sdk-extensions, `src/WebJobs.Extensions/Extensions/Timers/`):
//!
//! * [`schedule`]: the binding's `schedule`, an NCRONTAB expression ([`cron`]) or a TimeSpan,
//!   written out or taken from an app setting (`%Setting%`);
//! * [`time_zone`]: the zone cron schedules are read in, the app's `WEBSITE_TIME_ZONE` (or
//!   `TZ`), UTC by default;
//! * [`occurrences`]: when a schedule next occurs, across daylight saving changes;
//! * [`status`]: the schedule status a monitored timer keeps, and what its listener does on
//!   start (run once if an occurrence was missed, or for `runOnStartup`) and after each
//!   invocation;
//! * [`payload`]: the `TimerInfo` request body the handler receives.
//!
//! The worker's listener owns the clock, the store and the invocation; every decision it takes
//! comes from here.

pub mod cron;
pub mod occurrences;
pub mod payload;
pub mod schedule;
pub mod status;
pub mod time_zone;

#[cfg(test)]
mod occurrence_tests;
#[cfg(test)]
mod proptests;
#[cfg(test)]
mod status_tests;
#[cfg(test)]
mod tests;

pub use cron::CronSchedule;
pub use occurrences::{Occurrences, next_after, occurrences};
pub use payload::{TimerInvocation, timer_payload};
pub use schedule::{MIN_INTERVAL, Schedule, check_written, resolve_schedule};
pub use status::{Reason, ScheduleStatus, Start, after_invocation, start, until_next};
pub use time_zone::{parse_time_zone, time_zone};

/// Whether the timer's schedule status is kept (`useMonitor`): as written, true when not
/// written (the default of `TimerTriggerAttribute`, and what the script host reads from
/// `function.json`), and false for a schedule that occurs more than once a minute whatever
/// was written — Azure's `TimerSchedule.Create` turns it off then, even when set to true, since
/// the attribute cannot tell a written true from the default (see [`Schedule::is_sub_minute`]).
pub fn use_monitor(written: Option<bool>, schedule: &Schedule) -> bool {
    written.unwrap_or(true) && !schedule.is_sub_minute()
}
