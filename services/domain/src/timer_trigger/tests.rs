//! Schedules as written: what parses, what is refused and why, what they match in UTC.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use super::*;

fn utc(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).unwrap().to_utc()
}

fn cron(expression: &str) -> Schedule {
    Schedule::parse(expression).unwrap_or_else(|e| panic!("{expression}: {e}"))
}

fn settings(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn next_occurrence_in_utc_follows_every_field() {
    let cases = [
        (
            "0 */5 * * * *",
            "2024-01-01T00:00:00Z",
            "2024-01-01T00:05:00Z",
        ),
        (
            "0 */5 * * * *",
            "2024-01-01T00:02:30Z",
            "2024-01-01T00:05:00Z",
        ),
        (
            "*/15 * * * * *",
            "2024-01-01T12:00:07.5Z",
            "2024-01-01T12:00:15Z",
        ),
        (
            "* * * * * *",
            "2024-01-01T12:00:00.5Z",
            "2024-01-01T12:00:01Z",
        ),
        // Strictly after: an occurrence at `after` itself is not the next one.
        (
            "0 0 * * * *",
            "2024-01-01T12:00:00Z",
            "2024-01-01T13:00:00Z",
        ),
        (
            "10/20 * * * * *",
            "2024-01-01T12:00:31Z",
            "2024-01-01T12:00:50Z",
        ),
        (
            "10/20 * * * * *",
            "2024-01-01T12:00:50Z",
            "2024-01-01T12:01:10Z",
        ),
        // A step past the field's end is its first value only.
        (
            "*/90 * * * * *",
            "2024-01-01T12:00:01Z",
            "2024-01-01T12:01:00Z",
        ),
        // Weekdays at 09:30, from a Friday morning after it: the next Monday.
        (
            "0 30 9 * * 1-5",
            "2024-01-05T10:00:00Z",
            "2024-01-08T09:30:00Z",
        ),
        (
            "0 30 9 * * Mon-Fri",
            "2024-01-05T10:00:00Z",
            "2024-01-08T09:30:00Z",
        ),
        // Day and day of week both restricted: both must match (Friday the 13th).
        (
            "0 0 0 13 * Fri",
            "2024-01-01T00:00:00Z",
            "2024-09-13T00:00:00Z",
        ),
        (
            "0 0 0 29 2 *",
            "2024-03-01T00:00:00Z",
            "2028-02-29T00:00:00Z",
        ),
        (
            "0 0 0 31 * *",
            "2024-04-01T00:00:00Z",
            "2024-05-31T00:00:00Z",
        ),
        (
            "0 0 12 * JAN,jul *",
            "2024-02-01T00:00:00Z",
            "2024-07-01T12:00:00Z",
        ),
        (
            "0 0 0 1 * Sun",
            "2024-01-01T00:00:00Z",
            "2024-09-01T00:00:00Z",
        ),
        (
            "0 0 0 * * 6",
            "2024-01-01T00:00:00Z",
            "2024-01-06T00:00:00Z",
        ),
        // NCrontab's name matching: the first name that starts with the text.
        (
            "0 0 0 1 M *",
            "2024-01-01T00:00:00Z",
            "2024-03-01T00:00:00Z",
        ),
        (
            "0 0 0 * * t",
            "2024-01-01T00:00:00Z",
            "2024-01-02T00:00:00Z",
        ),
        // NCrontab reads a reversed range the right way round.
        (
            "0 0 5-1 * * *",
            "2024-01-01T00:30:00Z",
            "2024-01-01T01:00:00Z",
        ),
        (
            "0 0 0,12 * * *",
            "2024-01-01T00:00:00Z",
            "2024-01-01T12:00:00Z",
        ),
        (
            "0 0 0 1 1 *",
            "2024-01-01T00:00:00Z",
            "2025-01-01T00:00:00Z",
        ),
        // Five fields: no seconds, so at second 0.
        (
            "*/5 * * * *",
            "2024-01-01T00:02:30Z",
            "2024-01-01T00:05:00Z",
        ),
        (
            "30 9 * * 1-5",
            "2024-01-05T10:00:00Z",
            "2024-01-08T09:30:00Z",
        ),
        // TimeSpans count from the time given.
        ("00:05:00", "2024-01-01T00:02:30Z", "2024-01-01T00:07:30Z"),
        ("1.02:03:04", "2024-01-01T00:00:00Z", "2024-01-02T02:03:04Z"),
        ("00:30", "2024-01-01T00:00:00Z", "2024-01-01T00:30:00Z"),
    ];
    for (expression, after, want) in cases {
        let next = next_after(&cron(expression), utc(after), Tz::UTC);
        assert_eq!(next, Some(utc(want)), "{expression} after {after}");
    }
}

#[test]
fn occurrences_lists_the_next_ones_in_order() {
    let schedule = cron("0 0 */6 * * *");
    let got: Vec<_> = occurrences(&schedule, utc("2024-01-01T01:00:00Z"), Tz::UTC)
        .take(4)
        .collect();
    let want = [
        "2024-01-01T06:00:00Z",
        "2024-01-01T12:00:00Z",
        "2024-01-01T18:00:00Z",
        "2024-01-02T00:00:00Z",
    ];
    assert_eq!(got, want.map(utc));
}

#[test]
fn schedules_are_refused_with_what_is_wrong() {
    let cases = [
        ("", "must not be empty"),
        ("   ", "must not be empty"),
        ("0 0 * * * * *", "expected 6 fields"),
        ("0 0 * * * * *", "found 7"),
        ("* * * *", "found 4"),
        ("every 5 minutes", "found 3"),
        (
            "60 * * * * *",
            "the second field \"60\": 60 is out of range (0-59)",
        ),
        (
            "0 60 * * * *",
            "the minute field \"60\": 60 is out of range (0-59)",
        ),
        (
            "0 0 24 * * *",
            "the hour field \"24\": 24 is out of range (0-23)",
        ),
        (
            "0 0 0 0 * *",
            "the day field \"0\": 0 is out of range (1-31)",
        ),
        ("0 0 0 32 * *", "the day field \"32\""),
        (
            "0 0 0 * 13 *",
            "the month field \"13\": 13 is out of range (1-12",
        ),
        ("0 0 0 * 0 *", "the month field \"0\""),
        (
            "0 0 0 * * 7",
            "the day-of-week field \"7\": 7 is out of range (0-6, Sunday is 0",
        ),
        ("0 */0 * * * *", "a step of 0 never advances"),
        ("0 */x * * * *", "the step \"x\" is not a whole number"),
        ("0 */-2 * * * *", "the step \"-2\" is not a whole number"),
        ("0 5a * * * *", "\"5a\" is not a number"),
        ("0 -5 * * * *", "\"-5\" is not a number"),
        ("0 ? * * * *", "NCRONTAB has no ? L W or #"),
        ("0 0 0 L * *", "NCRONTAB has no ? L W or #"),
        ("0 0 0 * * MON#2", "\"MON#2\" is not a day-of-week"),
        ("0 0 0 * Foo *", "\"Foo\" is not a month"),
        ("0 0 0 * Mayday *", "\"Mayday\" is not a month"),
        ("0 1,,2 * * * *", "a value in the list is empty"),
        ("0 1, * * * *", "a value in the list is empty"),
        ("0 1- * * * *", "a range is missing a value"),
        ("0 0 0 30 2 *", "never occurs"),
        ("0 0 0 31 4,6,9,11 *", "never occurs"),
        ("5", "is neither a cron expression"),
        ("daily", "is neither a cron expression"),
        ("00:00:00", "under one second"),
        ("00:00:00.500", "under one second"),
        ("-00:05:00", "is not a valid TimeSpan: must not be negative"),
        ("25:00:00", "hours must be 0-23"),
        ("1:2:3:4", "is not a valid TimeSpan"),
    ];
    for (written, want) in cases {
        let err = Schedule::parse(written).unwrap_err();
        assert!(err.contains(want), "{written:?}: {err}");
    }
}

#[test]
fn schedules_read_back_as_azure_writes_them() {
    let cases = [
        ("0 */5 * * * *", "Cron: '0 */5 * * * *'", true),
        ("  0  */5 * *   * *  ", "Cron: '0 */5 * * * *'", true),
        ("*/5 * * * *", "Cron: '*/5 * * * *'", true),
        ("00:30:00", "Constant: 00:30:00", false),
        ("1.00:00:00", "Constant: 1.00:00:00", false),
    ];
    for (written, display, dst) in cases {
        let schedule = cron(written);
        assert_eq!(schedule.to_string(), display, "{written}");
        assert_eq!(schedule.adjusts_for_dst(), dst, "{written}");
    }
}

#[test]
fn interval_schedules_are_those_azure_expands_to_a_range() {
    let cases = [
        ("0 */5 * * * *", true),
        ("0 0 * * * *", true),
        ("0 0 9-17 * * *", true),
        // NCrontab writes neighbouring values back as a range, which Azure reads as an interval.
        ("0 0 1,2 * * *", true),
        ("0 30 1 * * *", false),
        ("0 0,30 1 * * *", false),
        ("0 0 9 * * 1-5", false),
        ("30 1 * * *", false),
        // A step expands to a list of values apart, which is no interval to Azure.
        ("0 */5 1 * * *", false),
        ("*/5 1 * * *", false),
    ];
    for (written, interval) in cases {
        let Schedule::Cron(schedule) = cron(written) else {
            panic!("{written}")
        };
        assert_eq!(schedule.is_interval(), interval, "{written}");
    }
}

#[test]
fn monitoring_is_on_unless_the_schedule_runs_more_than_once_a_minute() {
    let cases = [
        (None, "0 */5 * * * *", true),
        (None, "0 * * * * *", true),
        (None, "* * * * *", true),
        (None, "*/10 * * * * *", false),
        // Azure samples the next minute, which can see one of two seconds; Shoal counts them.
        (None, "0,30 * * * * *", false),
        // A written true does not keep it on: Azure cannot tell it from the default.
        (Some(true), "*/10 * * * * *", false),
        // Only a schedule with every other field a wildcard counts, as in Azure.
        (None, "*/10 * * * * 1-5", true),
        (Some(false), "0 0 * * * *", false),
        (None, "00:00:30", false),
        (None, "00:01:00", true),
        (Some(false), "00:01:00", false),
    ];
    for (written, schedule, want) in cases {
        assert_eq!(
            use_monitor(written, &cron(schedule)),
            want,
            "{written:?} {schedule}"
        );
    }
}

#[test]
fn schedules_resolve_from_app_settings() {
    let settings = settings(&[
        ("TimerSchedule", " 0 */5 * * * * "),
        ("Minute", "*/10"),
        ("Broken", "0 61 * * * *"),
    ]);
    let ok = [
        ("0 */5 * * * *", "Cron: '0 */5 * * * *'"),
        ("%TimerSchedule%", "Cron: '0 */5 * * * *'"),
        ("%timerschedule%", "Cron: '0 */5 * * * *'"),
        ("0 %Minute% * * * *", "Cron: '0 */10 * * * *'"),
    ];
    for (written, want) in ok {
        let schedule = resolve_schedule(written, &settings).unwrap();
        assert_eq!(schedule.to_string(), want, "{written}");
    }
    let refused = [
        ("%Missing%", "app setting Missing is not set"),
        (
            "%Broken%",
            "app setting Broken: the schedule is not a valid cron expression: the minute field \"61\"",
        ),
        (
            "0 %Minute% %Minute% * * 9",
            "0 %Minute% %Minute% * * 9 (with app settings Minute, Minute): the schedule is not a valid cron expression: the day-of-week field \"9\"",
        ),
        ("%TimerSchedule", "the schedule has an unclosed %"),
        (
            "0 61 * * * *",
            "the schedule is not a valid cron expression",
        ),
    ];
    for (written, want) in refused {
        let err = resolve_schedule(written, &settings).unwrap_err();
        assert!(err.contains(want), "{written}: {err}");
    }
}

#[test]
fn written_schedules_are_checked_as_far_as_they_can_be() {
    assert_eq!(check_written("0 */5 * * * *"), Ok(()));
    assert_eq!(check_written("%TimerSchedule%"), Ok(()));
    assert_eq!(check_written("0 %Minute% * * * *"), Ok(()));
    let refused = [
        ("0 61 * * * *", "the minute field \"61\""),
        ("%Timer", "has an unclosed %"),
        ("%%", "has an empty %% reference"),
        ("%Bad Name%", "%Bad Name% must name an app setting"),
    ];
    for (written, want) in refused {
        let err = check_written(written).unwrap_err();
        assert!(err.contains(want), "{written}: {err}");
    }
}

#[test]
fn time_zone_comes_from_website_time_zone_or_tz() {
    let ny: Tz = "America/New_York".parse().unwrap();
    let london: Tz = "Europe/London".parse().unwrap();
    let cases: [(&[(&str, &str)], Tz); 8] = [
        (&[], Tz::UTC),
        (&[("WEBSITE_TIME_ZONE", "America/New_York")], ny),
        (&[("WEBSITE_TIME_ZONE", "america/new_york")], ny),
        (&[("website_time_zone", " America/New_York ")], ny),
        (&[("WEBSITE_TIME_ZONE", "  ")], Tz::UTC),
        (&[("TZ", "Europe/London")], london),
        (&[("TZ", ":Europe/London")], london),
        (
            &[
                ("WEBSITE_TIME_ZONE", "Europe/London"),
                ("TZ", "europe/london"),
            ],
            london,
        ),
    ];
    for (pairs, want) in cases {
        assert_eq!(time_zone(&settings(pairs)), Ok(want), "{pairs:?}");
    }
}

#[test]
fn time_zones_shoal_cannot_read_are_refused_with_what_to_write() {
    let cases: [(&[(&str, &str)], &str); 5] = [
        (
            &[("WEBSITE_TIME_ZONE", "Eastern Standard Time")],
            "app setting WEBSITE_TIME_ZONE: \"Eastern Standard Time\" is a Windows time zone ID; Shoal takes IANA names, as Azure Functions on Linux does: write \"America/New_York\"",
        ),
        (
            &[("WEBSITE_TIME_ZONE", "GMT Standard Time")],
            "write \"Europe/London\"",
        ),
        (
            &[("WEBSITE_TIME_ZONE", "Mid-Atlantic Standard Time")],
            "looks like a Windows time zone ID",
        ),
        (
            &[("TZ", "Mars/Olympus")],
            "app setting TZ: \"Mars/Olympus\" is not an IANA time zone name",
        ),
        (
            &[("WEBSITE_TIME_ZONE", "Europe/London"), ("TZ", "UTC")],
            "app settings WEBSITE_TIME_ZONE (Europe/London) and TZ (UTC) name different time zones",
        ),
    ];
    for (pairs, want) in cases {
        let err = time_zone(&settings(pairs)).unwrap_err();
        assert!(err.contains(want), "{pairs:?}: {err}");
    }
}
