//! Next occurrences across daylight saving changes, in the examples of Azure's `CronSchedule`
//! comments and their European and southern counterparts.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use super::*;

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .to_utc()
}

fn zone(name: &str) -> Tz {
    name.parse().unwrap()
}

/// The first `want.len()` occurrences of `schedule` after `after`, in `tz`.
fn assert_sequence(tz: &str, schedule: &str, after: &str, want: &[&str]) {
    let schedule = Schedule::parse(schedule).unwrap();
    let got: Vec<_> = occurrences(&schedule, at(after), zone(tz))
        .take(want.len())
        .collect();
    let want: Vec<_> = want.iter().map(|w| at(w)).collect();
    assert_eq!(got, want, "{tz} {schedule} after {after}");
}

#[test]
fn new_york_spring_forward_runs_skipped_times_after_the_gap() {
    // 2024-03-10: 02:00 EST becomes 03:00 EDT.
    let ny = "America/New_York";
    assert_sequence(
        ny,
        "0 30 2 * * *",
        "2024-03-09T00:00:00-05:00",
        &[
            "2024-03-09T02:30:00-05:00",
            "2024-03-10T03:30:00-04:00",
            "2024-03-11T02:30:00-04:00",
        ],
    );
    // The same occurrence whatever time it is counted from.
    assert_sequence(
        ny,
        "0 30 2 * * *",
        "2024-03-10T03:10:00-04:00",
        &["2024-03-10T03:30:00-04:00"],
    );
    // 02:00 runs at 03:00, which also matches: once.
    assert_sequence(
        ny,
        "0 */30 * * * *",
        "2024-03-10T01:00:00-05:00",
        &[
            "2024-03-10T01:30:00-05:00",
            "2024-03-10T03:00:00-04:00",
            "2024-03-10T03:30:00-04:00",
        ],
    );
    assert_sequence(
        ny,
        "0 0 * * * *",
        "2024-03-10T00:30:00-05:00",
        &[
            "2024-03-10T01:00:00-05:00",
            "2024-03-10T03:00:00-04:00",
            "2024-03-10T04:00:00-04:00",
        ],
    );
    // A daily schedule keeps its wall-clock time: 23 hours apart that day.
    assert_sequence(
        ny,
        "0 0 9 * * *",
        "2024-03-09T09:00:00-05:00",
        &["2024-03-10T09:00:00-04:00"],
    );
    // A TimeSpan counts elapsed time.
    assert_sequence(
        ny,
        "01:00:00",
        "2024-03-10T01:30:00-05:00",
        &["2024-03-10T03:30:00-04:00", "2024-03-10T04:30:00-04:00"],
    );
}

#[test]
fn new_york_fall_back_runs_intervals_twice_and_points_in_time_once() {
    // 2024-11-03: 02:00 EDT becomes 01:00 EST; 01:00-01:59 happens twice.
    let ny = "America/New_York";
    // A point in time runs on the first pass only.
    assert_sequence(
        ny,
        "0 30 1 * * *",
        "2024-11-02T12:00:00-04:00",
        &[
            "2024-11-03T01:30:00-04:00",
            "2024-11-04T01:30:00-05:00",
            "2024-11-05T01:30:00-05:00",
        ],
    );
    // Counted from the second pass, it has already run that day.
    assert_sequence(
        ny,
        "0 30 1 * * *",
        "2024-11-03T01:10:00-05:00",
        &["2024-11-04T01:30:00-05:00"],
    );
    assert_sequence(
        ny,
        "0 15,45 1 * * *",
        "2024-11-03T01:20:00-04:00",
        &["2024-11-03T01:45:00-04:00", "2024-11-04T01:15:00-05:00"],
    );
    // An interval runs through both passes.
    assert_sequence(
        ny,
        "0 */30 * * * *",
        "2024-11-03T00:30:00-04:00",
        &[
            "2024-11-03T01:00:00-04:00",
            "2024-11-03T01:30:00-04:00",
            "2024-11-03T01:00:00-05:00",
            "2024-11-03T01:30:00-05:00",
            "2024-11-03T02:00:00-05:00",
        ],
    );
    assert_sequence(
        ny,
        "0 0 * * * *",
        "2024-11-03T00:00:00-04:00",
        &[
            "2024-11-03T01:00:00-04:00",
            "2024-11-03T01:00:00-05:00",
            "2024-11-03T02:00:00-05:00",
        ],
    );
    // Counted from inside the repeated hour, an interval's later occurrences stay where they
    // are (Azure's adjustment would move this one to 08:00).
    assert_sequence(
        ny,
        "0 0 9-17 * * *",
        "2024-11-03T01:30:00-04:00",
        &["2024-11-03T09:00:00-05:00"],
    );
    assert_sequence(
        ny,
        "00:30:00",
        "2024-11-03T01:00:00-04:00",
        &["2024-11-03T01:30:00-04:00", "2024-11-03T01:00:00-05:00"],
    );
}

#[test]
fn london_changes_at_one_in_the_morning() {
    let london = "Europe/London";
    // 2024-03-31: 01:00 GMT becomes 02:00 BST.
    assert_sequence(
        london,
        "0 30 1 * * *",
        "2024-03-31T00:00:00+00:00",
        &["2024-03-31T02:30:00+01:00", "2024-04-01T01:30:00+01:00"],
    );
    // Skipped times run as far past the gap as they were into it: no real time is lost.
    assert_sequence(
        london,
        "0 */20 * * * *",
        "2024-03-31T00:40:00+00:00",
        &[
            "2024-03-31T02:00:00+01:00",
            "2024-03-31T02:20:00+01:00",
            "2024-03-31T02:40:00+01:00",
            "2024-03-31T03:00:00+01:00",
        ],
    );
    // 2024-10-27: 02:00 BST becomes 01:00 GMT.
    assert_sequence(
        london,
        "0 30 1 * * *",
        "2024-10-26T12:00:00+01:00",
        &["2024-10-27T01:30:00+01:00", "2024-10-28T01:30:00+00:00"],
    );
    assert_sequence(
        london,
        "0 */30 * * * *",
        "2024-10-27T00:30:00+01:00",
        &[
            "2024-10-27T01:00:00+01:00",
            "2024-10-27T01:30:00+01:00",
            "2024-10-27T01:00:00+00:00",
            "2024-10-27T01:30:00+00:00",
            "2024-10-27T02:00:00+00:00",
        ],
    );
    // Seconds across the change: from 01:59:40 BST the next 20 seconds are 01:00:00 GMT.
    assert_sequence(
        london,
        "*/20 * * * * *",
        "2024-10-27T01:59:20+01:00",
        &[
            "2024-10-27T01:59:40+01:00",
            "2024-10-27T01:00:00+00:00",
            "2024-10-27T01:00:20+00:00",
        ],
    );
    // A weekly schedule keeps its wall-clock time on both sides.
    assert_sequence(
        london,
        "0 0 9 * * Mon",
        "2024-10-26T00:00:00+01:00",
        &["2024-10-28T09:00:00+00:00"],
    );
}

#[test]
fn southern_hemisphere_springs_forward_in_october() {
    // Sydney, 2024-10-06: 02:00 AEST becomes 03:00 AEDT; 2024-04-07: 03:00 AEDT becomes 02:00.
    let sydney = "Australia/Sydney";
    assert_sequence(
        sydney,
        "0 30 2 * * *",
        "2024-10-06T00:00:00+10:00",
        &["2024-10-06T03:30:00+11:00", "2024-10-07T02:30:00+11:00"],
    );
    assert_sequence(
        sydney,
        "0 30 2 * * *",
        "2024-04-06T12:00:00+11:00",
        &["2024-04-07T02:30:00+11:00", "2024-04-08T02:30:00+10:00"],
    );
}

#[test]
fn a_zone_without_daylight_saving_is_plain_wall_clock() {
    assert_sequence(
        "Asia/Tokyo",
        "0 0 9 * * *",
        "2024-03-10T00:00:00+09:00",
        &["2024-03-10T09:00:00+09:00", "2024-03-11T09:00:00+09:00"],
    );
}
