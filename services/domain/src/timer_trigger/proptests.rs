//! Properties of schedules, their occurrences and the listener's decisions over arbitrary
//! schedules, zones and times.

use chrono::{DateTime, Duration, Offset, TimeZone, Timelike, Utc};
use chrono_tz::Tz;
use proptest::prelude::*;

use super::*;

/// Zones with the usual changes, half-hour offsets, a half-hour change (Lord Howe) and none.
fn zone() -> impl Strategy<Value = Tz> {
    prop_oneof![
        Just(Tz::UTC),
        Just(chrono_tz::America::New_York),
        Just(chrono_tz::Europe::London),
        Just(chrono_tz::Australia::Sydney),
        Just(chrono_tz::Australia::Lord_Howe),
        Just(chrono_tz::America::St_Johns),
        Just(chrono_tz::America::Santiago),
        Just(chrono_tz::Asia::Kolkata),
    ]
}

/// An instant between 2020 and 2030, with a fraction of a second.
fn instant() -> impl Strategy<Value = DateTime<Utc>> {
    (1_577_836_800i64..1_893_456_000, 0u32..1_000_000_000)
        .prop_map(|(secs, nanos)| DateTime::from_timestamp(secs, nanos).unwrap())
}

/// One field's text, from the forms NCRONTAB has; `wild` weighs `*` for the date fields, so
/// that occurrences come often enough to follow.
fn field(min: u32, max: u32, wild: u32) -> impl Strategy<Value = String> {
    let value = min..=max;
    prop_oneof![
        wild => Just("*".to_owned()),
        1 => (2..=max / 2 + 1).prop_map(|n| format!("*/{n}")),
        1 => value.clone().prop_map(|v| v.to_string()),
        1 => (value.clone(), value.clone()).prop_map(|(a, b)| format!("{a}-{b}")),
        1 => (value.clone(), value.clone()).prop_map(|(a, b)| format!("{a},{b}")),
        1 => (value.clone(), value, 1..10u32).prop_map(|(a, b, n)| format!("{a}-{b}/{n}")),
    ]
}

fn cron_schedule() -> impl Strategy<Value = Schedule> {
    (
        prop::bool::ANY,
        field(0, 59, 1),
        field(0, 59, 1),
        field(0, 23, 2),
        field(1, 31, 6),
        field(1, 12, 6),
        field(0, 6, 6),
    )
        .prop_filter_map(
            "the day and month never meet",
            |(seconds, s, m, h, d, mo, w)| {
                let written = if seconds {
                    format!("{s} {m} {h} {d} {mo} {w}")
                } else {
                    format!("{m} {h} {d} {mo} {w}")
                };
                Schedule::parse(&written).ok()
            },
        )
}

fn schedule() -> impl Strategy<Value = Schedule> {
    prop_oneof![
        4 => cron_schedule(),
        1 => (1u64..3 * 86_400).prop_map(|secs| {
            Schedule::Constant(crate::timespan::TimeSpan::from_secs(secs))
        }),
    ]
}

fn offset_seconds(tz: Tz, at: DateTime<Utc>) -> i32 {
    tz.offset_from_utc_datetime(&at.naive_utc())
        .fix()
        .local_minus_utc()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn occurrences_are_strictly_increasing(
        schedule in schedule(),
        tz in zone(),
        after in instant(),
    ) {
        let mut last = after;
        for next in occurrences(&schedule, after, tz).take(12) {
            prop_assert!(next > last, "{schedule} in {tz}: {next} after {last}");
            last = next;
        }
    }

    /// Cron occurrences are fixed points in time (a TimeSpan's move with what they count from).
    #[test]
    fn any_time_before_the_next_occurrence_has_the_same_next_occurrence(
        schedule in cron_schedule(),
        tz in zone(),
        after in instant(),
        fraction in 0.0f64..1.0,
    ) {
        let next = next_after(&schedule, after, tz).unwrap();
        let between = after
            + Duration::milliseconds(((next - after).num_milliseconds() as f64 * fraction) as i64);
        prop_assume!(between < next);
        prop_assert_eq!(next_after(&schedule, between, tz), Some(next), "{} in {} from {}", schedule, tz, between);
    }

    #[test]
    fn cron_occurrences_match_the_fields_unless_a_change_of_offset_moved_them(
        schedule in cron_schedule(),
        tz in zone(),
        after in instant(),
    ) {
        let Schedule::Cron(cron) = &schedule else { unreachable!() };
        for next in occurrences(&schedule, after, tz).take(6) {
            let wall = next.with_timezone(&tz).naive_local();
            let moved = offset_seconds(tz, next - Duration::hours(3)) != offset_seconds(tz, next);
            prop_assert!(cron.matches(wall) || moved, "{schedule} in {tz}: {next} ({wall})");
        }
    }

    #[test]
    fn in_utc_no_matching_second_is_skipped(schedule in cron_schedule(), after in instant()) {
        let Schedule::Cron(cron) = &schedule else { unreachable!() };
        let next = next_after(&schedule, after, Tz::UTC).unwrap();
        prop_assert!(cron.matches(next.naive_utc()));
        let first = after.naive_utc().with_nanosecond(0).unwrap() + Duration::seconds(1);
        // Checked second by second up to a day (sparser schedules are checked by their fields).
        let span = (next.naive_utc() - first).num_seconds().min(86_400);
        for s in 0..span {
            let t = first + Duration::seconds(s);
            prop_assert!(!cron.matches(t), "{schedule}: {t} matches before {next}");
        }
    }

    /// Runs the listener for a while, stops it for any time, and starts it again.
    #[test]
    fn after_any_downtime_at_most_one_past_due_invocation_runs(
        schedule in schedule(),
        tz in zone(),
        t0 in instant(),
        runs in 0usize..5,
        late_ms in 0i64..2_000,
        downtime_s in -3_600i64..40 * 86_400,
        run_on_startup in prop::bool::ANY,
    ) {
        let mut status = start(None, &schedule, tz, t0, true, false).unwrap().status;
        for _ in 0..runs {
            let ran = status.next + Duration::milliseconds(late_ms);
            let next = after_invocation(&status, &schedule, tz, ran, Reason::Scheduled).unwrap();
            prop_assert!(next.next > next.last.unwrap());
            prop_assert_eq!(next.last, Some(next.last_updated));
            status = next;
        }
        let now = status.next + Duration::seconds(downtime_s);
        let started = start(Some(&status), &schedule, tz, now, true, run_on_startup).unwrap();
        // What the listener wrote reads back as the same schedule.
        prop_assert!(!started.write);
        prop_assert_eq!(started.status, status);
        let past_due = started.immediate.is_some_and(Reason::is_past_due);
        prop_assert_eq!(past_due, now > status.next);
        if !past_due {
            prop_assert_eq!(started.immediate.is_some(), run_on_startup);
        }
        if let Some(reason) = started.immediate {
            let after = after_invocation(&started.status, &schedule, tz, now, reason).unwrap();
            prop_assert!(after.next > now);
            // Stopped again straight after it: nothing more is past due.
            let again = start(Some(&after), &schedule, tz, now, true, false).unwrap();
            prop_assert_eq!(again.immediate, None);
        }
    }

    #[test]
    fn a_changed_schedule_is_never_past_due(
        old in schedule(),
        new in schedule(),
        tz in zone(),
        t0 in instant(),
        downtime_s in 0i64..40 * 86_400,
    ) {
        let stored = start(None, &old, tz, t0, true, false).unwrap().status;
        let ran = stored.next;
        let stored = after_invocation(&stored, &old, tz, ran, Reason::Scheduled).unwrap();
        let now = stored.next + Duration::seconds(downtime_s);
        let started = start(Some(&stored), &new, tz, now, true, false).unwrap();
        if started.write {
            prop_assert_eq!(started.immediate, None);
            prop_assert!(started.status.next > started.status.last_updated);
        }
    }
}
