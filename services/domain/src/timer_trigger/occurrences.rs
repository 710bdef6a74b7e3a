//! When a schedule next occurs, as instants, in the app's time zone.
//!
//! A TimeSpan schedule adds its interval to the instant it counts from, whatever the clocks do
//! (Azure's `ConstantSchedule`, `AdjustForDST => false`). A cron schedule matches wall-clock
//! times in the time zone; each matching wall-clock time stands for the instants below, and the
//! next occurrence after an instant is the earliest of them after it. This is what Azure's
//! `CronSchedule.GetNextOccurrence` and `TryAdjustAmbiguousTime`
//! (azure-webjobs-sdk-extensions, `src/WebJobs.Extensions/Extensions/Timers/Scheduling/CronSchedule.cs`)
//! set out to do, its comments' examples included:
//!
//! * a wall-clock time that exists once is that instant;
//! * one a spring-forward skips (02:30 in New York on the second Sunday of March) runs as far
//!   past the gap as it was into it, so at 03:30 (.NET reads a skipped time with the offset
//!   before the gap); one that lands on a time that also matches runs once;
//! * one a fall-back repeats (01:30 in New York on the first Sunday of November) runs on both
//!   passes for an interval schedule (`0 */30 * * * *` runs at 01:00 and 01:30 daylight time,
//!   then 01:00 and 01:30 standard time), and on the first pass only for a point in time
//!   (`0 30 1 * * *` runs once that day). See [`CronSchedule::is_interval`] for which is which.
//!
//! Where Shoal departs: Azure computes the next occurrence from the previous one's local time,
//! which forgets the offset inside the repeated hour, and its interval adjustment moves a next
//! occurrence past that hour back by an hour (`0 0 9-17 * * *` from 01:30 daylight time gives
//! 08:00). Shoal works from instants, so the documented sequences hold whatever time it counts
//! from.

use chrono::{DateTime, Duration, LocalResult, NaiveDateTime, Offset, TimeZone, Utc};
use chrono_tz::{GapInfo, Tz};

use super::cron::CronSchedule;
use super::schedule::Schedule;

/// The schedule's first occurrence strictly after `after`, in `tz` (which a TimeSpan schedule
/// ignores). `None` only past the end of the calendar chrono can represent.
pub fn next_after(schedule: &Schedule, after: DateTime<Utc>, tz: Tz) -> Option<DateTime<Utc>> {
    match schedule {
        Schedule::Constant(interval) => {
            after.checked_add_signed(Duration::from_std(interval.as_duration()).ok()?)
        }
        Schedule::Cron(cron) => cron_next_after(cron, after, tz),
    }
}

/// The schedule's occurrences after `after`, in order; `.take(n)` for the next `n`.
pub fn occurrences(schedule: &Schedule, after: DateTime<Utc>, tz: Tz) -> Occurrences<'_> {
    Occurrences {
        schedule,
        tz,
        last: Some(after),
    }
}

/// See [`occurrences`].
#[derive(Clone, Debug)]
pub struct Occurrences<'a> {
    schedule: &'a Schedule,
    tz: Tz,
    last: Option<DateTime<Utc>>,
}

impl Iterator for Occurrences<'_> {
    type Item = DateTime<Utc>;

    fn next(&mut self) -> Option<DateTime<Utc>> {
        let next = next_after(self.schedule, self.last?, self.tz);
        self.last = next;
        next
    }
}

/// The earliest instant after `after` of the wall-clock times the expression matches.
///
/// Wall-clock times and instants keep their order except near a change of offset, where a wall
/// time can stand for an instant up to the change's size earlier or later. So the search starts
/// that much before `after`'s wall time and goes on until wall times are that much past the
/// best instant found; away from changes both margins are zero.
fn cron_next_after(cron: &CronSchedule, after: DateTime<Utc>, tz: Tz) -> Option<DateTime<Utc>> {
    let wall = after.with_timezone(&tz).naive_local();
    let mut from = wall.checked_sub_signed(offset_spread(tz, after))?;
    let mut best: Option<(DateTime<Utc>, NaiveDateTime)> = None;
    loop {
        let Some(local) = cron.next_local(from) else {
            return best.map(|(instant, _)| instant);
        };
        if let Some((instant, its_wall)) = best
            && local > its_wall + offset_spread(tz, instant)
        {
            return Some(instant);
        }
        for instant in instants(cron, local, tz).into_iter().flatten() {
            if instant > after && best.is_none_or(|(b, _)| instant < b) {
                best = Some((instant, local));
            }
        }
        from = local;
    }
}

/// The instants a matching wall-clock time stands for (see the module's comment).
fn instants(cron: &CronSchedule, local: NaiveDateTime, tz: Tz) -> [Option<DateTime<Utc>>; 2] {
    match tz.from_local_datetime(&local) {
        LocalResult::Single(at) => [Some(at.to_utc()), None],
        LocalResult::Ambiguous(first, second) => [
            Some(first.to_utc()),
            cron.is_interval().then(|| second.to_utc()),
        ],
        LocalResult::None => {
            let before = GapInfo::new(&local, &tz)
                .and_then(|gap| gap.begin)
                .map(|(_, offset)| offset.fix());
            [before.and_then(|offset| skipped(local, offset)), None]
        }
    }
}

/// A skipped wall-clock time read with the offset in force before the gap.
fn skipped(local: NaiveDateTime, before: chrono::FixedOffset) -> Option<DateTime<Utc>> {
    let utc = local.checked_sub_signed(Duration::seconds(before.local_minus_utc().into()))?;
    Some(utc.and_utc())
}

/// How far the zone's offset moves within a day of `at` (the largest change of offset any zone
/// makes): zero away from changes, the change's size near one.
fn offset_spread(tz: Tz, at: DateTime<Utc>) -> Duration {
    let day = Duration::hours(27);
    let offsets = [
        at.checked_sub_signed(day),
        Some(at),
        at.checked_add_signed(day),
    ]
    .into_iter()
    .flatten()
    .map(|t| {
        tz.offset_from_utc_datetime(&t.naive_utc())
            .fix()
            .local_minus_utc()
    });
    let (min, max) = offsets.fold((i32::MAX, i32::MIN), |(lo, hi), o| (lo.min(o), hi.max(o)));
    Duration::seconds((max - min).max(0).into())
}
