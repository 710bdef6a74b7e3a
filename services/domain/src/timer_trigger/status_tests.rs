//! The listener's decisions on start and after each invocation, and the request body.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde_json::json;

use super::*;

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).unwrap().to_utc()
}

fn every_five_minutes() -> Schedule {
    Schedule::parse("0 */5 * * * *").unwrap()
}

fn status(last: Option<&str>, next: &str, last_updated: &str) -> ScheduleStatus {
    ScheduleStatus {
        last: last.map(at),
        next: at(next),
        last_updated: at(last_updated),
    }
}

#[test]
fn a_new_timer_stores_its_first_occurrence_and_waits() {
    let now = at("2024-01-01T10:02:00Z");
    let started = start(None, &every_five_minutes(), Tz::UTC, now, true, false).unwrap();
    assert_eq!(
        started,
        Start {
            status: status(None, "2024-01-01T10:05:00Z", "2024-01-01T10:02:00Z"),
            write: true,
            immediate: None,
        }
    );
    assert_eq!(
        until_next(&started.status, now),
        std::time::Duration::from_secs(180)
    );
}

#[test]
fn a_stored_status_still_ahead_is_kept_as_is() {
    let stored = status(
        Some("2024-01-01T10:00:00Z"),
        "2024-01-01T10:05:00Z",
        "2024-01-01T10:00:00Z",
    );
    let now = at("2024-01-01T10:03:00Z");
    let started = start(
        Some(&stored),
        &every_five_minutes(),
        Tz::UTC,
        now,
        true,
        false,
    )
    .unwrap();
    assert_eq!(
        started,
        Start {
            status: stored,
            write: false,
            immediate: None
        }
    );
}

#[test]
fn after_downtime_the_missed_occurrences_run_once_as_past_due() {
    // Down from 10:01 to 12:00: 23 occurrences were missed.
    let stored = status(
        Some("2024-01-01T10:00:00Z"),
        "2024-01-01T10:05:00Z",
        "2024-01-01T10:00:00Z",
    );
    let now = at("2024-01-01T12:00:30Z");
    let schedule = every_five_minutes();
    let started = start(Some(&stored), &schedule, Tz::UTC, now, true, true).unwrap();
    // runOnStartup does not add a second invocation to the past-due one.
    assert_eq!(
        started.immediate,
        Some(Reason::PastDue {
            original: at("2024-01-01T10:05:00Z")
        })
    );
    assert_eq!((started.status, started.write), (stored, false));
    let after = after_invocation(
        &started.status,
        &schedule,
        Tz::UTC,
        now,
        started.immediate.unwrap(),
    )
    .unwrap();
    assert_eq!(
        after,
        status(
            Some("2024-01-01T12:00:30Z"),
            "2024-01-01T12:05:00Z",
            "2024-01-01T12:00:30Z"
        )
    );
}

#[test]
fn a_changed_schedule_is_counted_again_and_never_past_due() {
    let hourly = Schedule::parse("0 0 * * * *").unwrap();
    // Stored under the five-minute schedule.
    let stored = status(
        Some("2024-01-01T10:00:00Z"),
        "2024-01-01T10:05:00Z",
        "2024-01-01T10:00:00Z",
    );
    // Restarted soon: counted from Last under the new schedule.
    let soon = start(
        Some(&stored),
        &hourly,
        Tz::UTC,
        at("2024-01-01T10:30:00Z"),
        true,
        false,
    )
    .unwrap();
    assert_eq!(
        soon,
        Start {
            status: status(None, "2024-01-01T11:00:00Z", "2024-01-01T10:00:00Z"),
            write: true,
            immediate: None,
        }
    );
    // Restarted after the new schedule's next occurrence: counted from now, not past due.
    let late = start(
        Some(&stored),
        &hourly,
        Tz::UTC,
        at("2024-01-01T13:30:00Z"),
        true,
        false,
    )
    .unwrap();
    assert_eq!(
        late,
        Start {
            status: status(None, "2024-01-01T14:00:00Z", "2024-01-01T13:30:00Z"),
            write: true,
            immediate: None,
        }
    );
}

#[test]
fn a_status_that_never_ran_counts_from_last_updated() {
    let stored = status(None, "2024-01-01T10:05:00Z", "2024-01-01T10:02:00Z");
    let now = at("2024-01-01T10:07:00Z");
    let started = start(
        Some(&stored),
        &every_five_minutes(),
        Tz::UTC,
        now,
        true,
        false,
    )
    .unwrap();
    assert!(!started.write);
    assert_eq!(
        started.immediate,
        Some(Reason::PastDue {
            original: at("2024-01-01T10:05:00Z")
        })
    );
}

#[test]
fn without_monitoring_a_missed_occurrence_is_not_past_due_and_the_status_starts_from_now() {
    let stored = status(
        Some("2024-01-01T10:00:00Z"),
        "2024-01-01T10:05:00Z",
        "2024-01-01T10:00:00Z",
    );
    let now = at("2024-01-01T12:00:30Z");
    let started = start(
        Some(&stored),
        &every_five_minutes(),
        Tz::UTC,
        now,
        false,
        false,
    )
    .unwrap();
    assert_eq!(
        started,
        Start {
            status: status(None, "2024-01-01T12:05:00Z", "2024-01-01T12:00:30Z"),
            write: true,
            immediate: None,
        }
    );
    // A status still ahead is the fleet's: kept as stored.
    let ahead = status(
        Some("2024-01-01T12:00:00Z"),
        "2024-01-01T12:05:00Z",
        "2024-01-01T12:00:00Z",
    );
    let kept = start(
        Some(&ahead),
        &every_five_minutes(),
        Tz::UTC,
        now,
        false,
        false,
    )
    .unwrap();
    assert_eq!(
        kept,
        Start {
            status: ahead,
            write: false,
            immediate: None,
        }
    );
    let on_startup = start(None, &every_five_minutes(), Tz::UTC, now, false, true).unwrap();
    assert_eq!(on_startup.immediate, Some(Reason::RunOnStartup));
}

#[test]
fn a_timer_that_fires_early_counts_from_its_due_time() {
    let schedule = every_five_minutes();
    let waiting = status(None, "2024-01-01T10:05:00Z", "2024-01-01T10:02:00Z");
    let early = at("2024-01-01T10:04:59.6Z");
    let after = after_invocation(&waiting, &schedule, Tz::UTC, early, Reason::Scheduled).unwrap();
    assert_eq!(
        after,
        status(
            Some("2024-01-01T10:05:00Z"),
            "2024-01-01T10:10:00Z",
            "2024-01-01T10:05:00Z"
        )
    );
    // A startup invocation counts from when it ran.
    let after =
        after_invocation(&waiting, &schedule, Tz::UTC, early, Reason::RunOnStartup).unwrap();
    assert_eq!(after.next, at("2024-01-01T10:05:00Z"));
}

#[test]
fn status_times_are_kept_to_the_microsecond() {
    let schedule = Schedule::parse("00:00:10.0000005").unwrap();
    let waiting = status(None, "2024-01-01T10:00:00Z", "2024-01-01T09:59:50Z");
    let ran = at("2024-01-01T10:00:00.1234567Z");
    let after = after_invocation(&waiting, &schedule, Tz::UTC, ran, Reason::Scheduled).unwrap();
    assert_eq!(after.last, Some(at("2024-01-01T10:00:00.123456Z")));
    assert_eq!(after.next, at("2024-01-01T10:00:10.123456Z"));
    // Read back as stored, it is the same schedule, not a changed one.
    let restarted = start(
        Some(&after),
        &schedule,
        Tz::UTC,
        at("2024-01-01T10:00:05Z"),
        true,
        false,
    )
    .unwrap();
    assert!(!restarted.write, "{restarted:?}");
}

#[test]
fn the_handler_receives_timer_info_as_azure_serializes_it() {
    let ny: Tz = "America/New_York".parse().unwrap();
    let schedule = Schedule::parse("0 30 9 * * *").unwrap();
    let status = status(
        Some("2024-03-09T14:30:00.25Z"),
        "2024-03-10T13:30:00Z",
        "2024-03-09T14:30:00.25Z",
    );
    let body = timer_payload(&TimerInvocation {
        binding: "myTimer",
        function: "Nightly",
        schedule: &schedule,
        status: Some(&status),
        is_past_due: true,
        tz: ny,
        now: at("2024-03-10T13:30:00.5Z"),
        rand_guid: "0f8fad5b-d9cb-469f-a165-70867728950e",
    });
    assert_eq!(
        body,
        json!({
            "Data": {
                "myTimer": {
                    "Schedule": {"AdjustForDST": true},
                    "ScheduleStatus": {
                        "Last": "2024-03-09T09:30:00.25-05:00",
                        "Next": "2024-03-10T09:30:00-04:00",
                        "LastUpdated": "2024-03-09T09:30:00.25-05:00",
                    },
                    "IsPastDue": true,
                }
            },
            "Metadata": {
                "TimerTrigger": "03/10/2024 09:30:00",
                "sys": {
                    "MethodName": "Nightly",
                    "UtcNow": "2024-03-10T13:30:00.500Z",
                    "RandGuid": "0f8fad5b-d9cb-469f-a165-70867728950e",
                }
            }
        })
    );
}

#[test]
fn an_unmonitored_or_first_invocation_sends_what_azure_sends() {
    let schedule = Schedule::parse("00:00:30").unwrap();
    let invocation = TimerInvocation {
        binding: "tick",
        function: "Tick",
        schedule: &schedule,
        status: None,
        is_past_due: false,
        tz: Tz::UTC,
        now: at("2024-01-01T00:00:00Z"),
        rand_guid: "g",
    };
    let body = timer_payload(&invocation);
    assert_eq!(
        body["Data"]["tick"],
        json!({"Schedule": {"AdjustForDST": false}, "ScheduleStatus": null, "IsPastDue": false})
    );
    let first = status(None, "2024-01-01T00:00:30Z", "2024-01-01T00:00:00Z");
    let body = timer_payload(&TimerInvocation {
        status: Some(&first),
        ..invocation
    });
    assert_eq!(
        body["Data"]["tick"]["ScheduleStatus"],
        json!({
            "Last": "0001-01-01T00:00:00+00:00",
            "Next": "2024-01-01T00:00:30+00:00",
            "LastUpdated": "2024-01-01T00:00:00+00:00",
        })
    );
}
