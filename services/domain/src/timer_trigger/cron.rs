//! NCRONTAB expressions as Azure's timer trigger reads them.
//!
//! Azure hands the written schedule to NCrontab (atifaziz/NCrontab, `NCrontab/CrontabSchedule.cs`
//! and `NCrontab/CrontabFieldImpl.cs`) with seconds included unless it has exactly 5 fields
//! (azure-webjobs-sdk-extensions, `src/WebJobs.Extensions/Extensions/Timers/Scheduling/CronSchedule.cs`,
//! `HasSeconds`). Shoal reads the same language:
//!
//! * 6 fields `{second} {minute} {hour} {day} {month} {day-of-week}`, or 5 without the seconds
//!   (which then are 0), separated by spaces (only spaces: NCrontab splits on `' '`);
//! * in each field `*`, a value, a range `a-b`, a step `*/n`, `a-b/n` or `a/n` (from `a` to the
//!   field's highest value), and lists of these `a,b-c,*/n`;
//! * months and days of the week by name too, as NCrontab matches them: any leading part of the
//!   English name, any case, the first name in calendar order that starts with it (`Jan`,
//!   `january`, `Mon-Fri`; `M` is March and `T` Tuesday, as in NCrontab);
//! * days of the week 0-6 with Sunday 0 (7 is refused, as NCrontab refuses it);
//! * a day and a day of the week both restricted must *both* match (NCrontab's rule, unlike
//!   Vixie cron's either-or): `0 0 0 13 * Fri` is Friday the 13th.
//!
//! NCrontab's readings Shoal keeps: a reversed range `5-1` is `1-5`; a step larger than the
//! field is its first value only. Where Shoal departs: a step of 0 (`*/0`, which NCrontab reads
//! as 1, so every second) is refused rather than run as the busiest schedule there is; and a
//! schedule whose day and month can never meet (`0 0 0 30 2 *`), which NCrontab would place in
//! year 9999, is refused on write.

use std::fmt;

use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, NaiveTime, Timelike};

/// One field of an expression: which of its values it takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FieldKind {
    Second,
    Minute,
    Hour,
    Day,
    Month,
    DayOfWeek,
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

const DAYS_OF_WEEK: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// The fields in the order a 6-field expression writes them.
const KINDS: [FieldKind; 6] = [
    FieldKind::Second,
    FieldKind::Minute,
    FieldKind::Hour,
    FieldKind::Day,
    FieldKind::Month,
    FieldKind::DayOfWeek,
];

impl FieldKind {
    fn range(self) -> (u32, u32) {
        match self {
            FieldKind::Second | FieldKind::Minute => (0, 59),
            FieldKind::Hour => (0, 23),
            FieldKind::Day => (1, 31),
            FieldKind::Month => (1, 12),
            FieldKind::DayOfWeek => (0, 6),
        }
    }

    fn names(self) -> Option<&'static [&'static str]> {
        match self {
            FieldKind::Month => Some(&MONTHS),
            FieldKind::DayOfWeek => Some(&DAYS_OF_WEEK),
            _ => None,
        }
    }

    fn label(self) -> &'static str {
        match self {
            FieldKind::Second => "second",
            FieldKind::Minute => "minute",
            FieldKind::Hour => "hour",
            FieldKind::Day => "day",
            FieldKind::Month => "month",
            FieldKind::DayOfWeek => "day-of-week",
        }
    }

    /// What the field takes, for messages.
    fn allowed(self) -> String {
        let (min, max) = self.range();
        match self {
            FieldKind::Month => format!("{min}-{max} or a name such as Jan"),
            FieldKind::DayOfWeek => format!("{min}-{max}, Sunday is 0, or a name such as Mon"),
            _ => format!("{min}-{max}"),
        }
    }
}

/// The values one field takes, as bits (every field's values are below 64).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Field(u64);

impl Field {
    fn contains(self, value: u32) -> bool {
        value < 64 && self.0 & (1 << value) != 0
    }

    /// The smallest value at or above `from`.
    fn next(self, from: u32) -> Option<u32> {
        if from >= 64 {
            return None;
        }
        let above = self.0 & (u64::MAX << from);
        (above != 0).then(|| above.trailing_zeros())
    }

    fn first(self) -> u32 {
        self.0.trailing_zeros()
    }

    pub(super) fn count(self) -> u32 {
        self.0.count_ones()
    }

    fn is_full(self, kind: FieldKind) -> bool {
        let (min, max) = kind.range();
        (min..=max).all(|v| self.contains(v))
    }

    /// Whether two neighbouring values are both taken: NCrontab then writes the field back as a
    /// range (`1,2` as `1-2`), which is what makes Azure treat a schedule as an interval.
    fn has_neighbours(self) -> bool {
        self.0 & (self.0 >> 1) != 0
    }
}

/// A parsed NCRONTAB expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CronSchedule {
    written: String,
    /// `None` for a 5-field expression, which runs at second 0.
    seconds: Option<Field>,
    minutes: Field,
    hours: Field,
    days: Field,
    months: Field,
    days_of_week: Field,
}

impl CronSchedule {
    /// Parses 6 fields, or 5 without seconds. The error names the field and what is wrong.
    pub fn parse(expression: &str) -> Result<CronSchedule, String> {
        let tokens: Vec<&str> = expression.split(' ').filter(|t| !t.is_empty()).collect();
        let kinds: &[FieldKind] = match tokens.len() {
            6 => &KINDS,
            5 => &KINDS[1..],
            n => {
                return Err(format!(
                    "expected 6 fields \"{{second}} {{minute}} {{hour}} {{day}} {{month}} {{day-of-week}}\" (or 5, without seconds), found {n}"
                ));
            }
        };
        let mut fields = [Field(1); 6];
        let offset = 6 - kinds.len();
        for (i, (kind, token)) in kinds.iter().zip(&tokens).enumerate() {
            fields[i + offset] = parse_field(*kind, token)
                .map_err(|why| format!("the {} field \"{token}\": {why}", kind.label()))?;
        }
        let [seconds, minutes, hours, days, months, days_of_week] = fields;
        let schedule = CronSchedule {
            written: tokens.join(" "),
            seconds: (tokens.len() == 6).then_some(seconds),
            minutes,
            hours,
            days,
            months,
            days_of_week,
        };
        schedule.check_dates_meet()?;
        Ok(schedule)
    }

    /// The expression as written, its fields separated by single spaces.
    pub fn as_str(&self) -> &str {
        &self.written
    }

    pub fn has_seconds(&self) -> bool {
        self.seconds.is_some()
    }

    fn seconds(&self) -> Field {
        self.seconds.unwrap_or(Field(1))
    }

    /// Whether Azure treats the schedule as an interval rather than points in time, which
    /// decides what it does in the hour a fall-back repeats: an interval runs through both
    /// passes, a point in time runs once. Azure's rule (`CronSchedule`'s constructor): one of
    /// the second, minute or hour fields (minute or hour without seconds) has a `*`, `-` or `/`
    /// in NCrontab's expanded form, which writes a whole field as `*` and neighbouring values as
    /// a range.
    pub fn is_interval(&self) -> bool {
        let fields = [self.seconds, Some(self.minutes), Some(self.hours)];
        fields.into_iter().flatten().any(Field::has_neighbours)
    }

    /// More than one occurrence a minute: every minute, hour, day, month and day of the week,
    /// and more than one second. Azure turns schedule monitoring off for such schedules
    /// (`TimerSchedule.ShouldDisableScheduleMonitor`), which samples the minute after start-up;
    /// Shoal counts the seconds field instead, so the answer does not depend on the clock.
    pub fn is_sub_minute(&self) -> bool {
        let Some(seconds) = self.seconds else {
            return false;
        };
        self.minutes.is_full(FieldKind::Minute)
            && self.hours.is_full(FieldKind::Hour)
            && self.days.is_full(FieldKind::Day)
            && self.months.is_full(FieldKind::Month)
            && self.days_of_week.is_full(FieldKind::DayOfWeek)
            && seconds.count() > 1
    }

    /// The first local wall-clock time after `after` that the fields match, at whole seconds,
    /// as NCrontab's `GetNextOccurrence` finds it (time zones are [`super::occurrences`]'
    /// concern). `None` only past the end of the calendar.
    pub fn next_local(&self, after: NaiveDateTime) -> Option<NaiveDateTime> {
        let start = after.with_nanosecond(0)? + Duration::seconds(1);
        let mut date = start.date();
        let mut from = start.time();
        loop {
            if !self.months.contains(date.month()) {
                date = self.first_day_of_next_month(date)?;
                from = NaiveTime::MIN;
                continue;
            }
            if self.days.contains(date.day())
                && self
                    .days_of_week
                    .contains(date.weekday().num_days_from_sunday())
                && let Some(time) = self.first_time_from(from)
            {
                return Some(date.and_time(time));
            }
            date = date.succ_opt()?;
            from = NaiveTime::MIN;
        }
    }

    /// The first day of the next month the months field takes.
    fn first_day_of_next_month(&self, date: NaiveDate) -> Option<NaiveDate> {
        let (year, month) = match self.months.next(date.month() + 1) {
            Some(month) => (date.year(), month),
            None => (date.year() + 1, self.months.first()),
        };
        NaiveDate::from_ymd_opt(year, month, 1)
    }

    /// The first time of day at or after `from` that the second, minute and hour fields take.
    fn first_time_from(&self, from: NaiveTime) -> Option<NaiveTime> {
        let seconds = self.seconds();
        let mut hour = self.hours.next(from.hour())?;
        loop {
            let same_hour = hour == from.hour();
            let mut minute = self.minutes.next(if same_hour { from.minute() } else { 0 });
            while let Some(m) = minute {
                let same_minute = same_hour && m == from.minute();
                if let Some(s) = seconds.next(if same_minute { from.second() } else { 0 }) {
                    return NaiveTime::from_hms_opt(hour, m, s);
                }
                minute = self.minutes.next(m + 1);
            }
            hour = self.hours.next(hour + 1)?;
        }
    }

    /// Whether the fields match a wall-clock time (at a whole second).
    #[cfg(test)]
    pub(super) fn matches(&self, t: NaiveDateTime) -> bool {
        t.nanosecond() == 0
            && self.seconds().contains(t.second())
            && self.minutes.contains(t.minute())
            && self.hours.contains(t.hour())
            && self.days.contains(t.day())
            && self.months.contains(t.month())
            && self
                .days_of_week
                .contains(t.weekday().num_days_from_sunday())
    }

    /// Refuses a schedule no date can match: no month it takes has a day it takes.
    fn check_dates_meet(&self) -> Result<(), String> {
        const LONGEST: [u32; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
        let meet = (1..=12u32).any(|month| {
            self.months.contains(month)
                && (1..=LONGEST[month as usize - 1]).any(|day| self.days.contains(day))
        });
        if meet {
            Ok(())
        } else {
            Err(
                "never occurs: no month in the month field has a day in the day field (such as 30 in February, or 31 in April)"
                    .to_owned(),
            )
        }
    }
}

impl fmt::Display for CronSchedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.written)
    }
}

/// One field, as NCrontab's `CrontabFieldImpl.InternalParse` reads it.
pub(super) fn parse_field(kind: FieldKind, text: &str) -> Result<Field, String> {
    let mut field = Field(0);
    for part in text.split(',') {
        if part.is_empty() {
            return Err("a value in the list is empty".to_owned());
        }
        add_part(kind, part, &mut field)?;
    }
    Ok(field)
}

fn add_part(kind: FieldKind, part: &str, field: &mut Field) -> Result<(), String> {
    let (min, max) = kind.range();
    let (range, step) = match part.split_once('/') {
        Some((range, step)) if !range.is_empty() => (range, Some(parse_step(step)?)),
        _ => (part, None),
    };
    let (start, end) = if range == "*" {
        (min, max)
    } else if let Some((first, last)) = range.split_once('-').filter(|(f, _)| !f.is_empty()) {
        let (first, last) = (value(kind, first)?, value(kind, last)?);
        (first.min(last), first.max(last))
    } else {
        let single = value(kind, range)?;
        (single, if step.is_some() { max } else { single })
    };
    for bound in [start, end] {
        if bound < min || bound > max {
            return Err(format!("{bound} is out of range ({})", kind.allowed()));
        }
    }
    let step = step.unwrap_or(1);
    let mut v = start;
    while v <= end {
        field.0 |= 1 << v;
        v += step;
    }
    Ok(())
}

fn parse_step(text: &str) -> Result<u32, String> {
    match text.parse::<u32>() {
        Ok(0) => Err("a step of 0 never advances; write 1 or more".to_owned()),
        Ok(step) if text.bytes().all(|b| b.is_ascii_digit()) => Ok(step),
        _ => Err(format!("the step \"{text}\" is not a whole number")),
    }
}

/// A number, or for months and days of the week a name or its leading part.
fn value(kind: FieldKind, text: &str) -> Result<u32, String> {
    if text.is_empty() {
        return Err("a range is missing a value".to_owned());
    }
    if text.starts_with(|c: char| c.is_ascii_digit()) {
        return match text.parse::<u32>() {
            Ok(v) if text.bytes().all(|b| b.is_ascii_digit()) => Ok(v),
            _ => Err(format!("\"{text}\" is not a number")),
        };
    }
    let Some(names) = kind.names() else {
        return Err(format!(
            "\"{text}\" is not a number ({}; NCRONTAB has no ? L W or #)",
            kind.allowed()
        ));
    };
    let (min, _) = kind.range();
    names
        .iter()
        .position(|name| starts_with_ignore_case(name, text))
        .map(|i| min + i as u32)
        .ok_or_else(|| format!("\"{text}\" is not a {} ({})", kind.label(), kind.allowed()))
}

fn starts_with_ignore_case(name: &str, prefix: &str) -> bool {
    name.len() >= prefix.len()
        && name.is_char_boundary(prefix.len())
        && name[..prefix.len()].eq_ignore_ascii_case(prefix)
}
