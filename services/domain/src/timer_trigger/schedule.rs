//! A timer's `schedule`: an NCRONTAB expression or a TimeSpan, written out or in an app setting.
//!
//! Azure resolves `%Setting%` references in the whole string, then tries the text as a cron
//! expression and, failing that, as a .NET `TimeSpan`
//! (azure-webjobs-sdk-extensions, `src/WebJobs.Extensions/Extensions/Timers/Scheduling/TimerSchedule.cs`,
//! `Create`). Shoal does the same, with these departures, each about a schedule Azure would run
//! in a way nobody means:
//!
//! * a TimeSpan must be at least one second (Azure takes `00:00:00`, and negative ones, and
//!   runs them back to back);
//! * a bare number is refused: `TimeSpan.TryParse("5")` is five *days*, which is rarely what
//!   `"5"` means (the rules are [`crate::timespan::TimeSpan`]'s, which `host.json` uses too).
//!
//! Azure Functions refuses TimeSpan schedules on the Windows Consumption plan only (azure-functions-host,
//! `src/WebJobs.Script/Binding/CoreExtensionsScriptBindingProvider.cs`, `TimerTriggerScriptBinding`,
//! which there also requires 6 fields); dedicated (App Service) plans take them and 5-field
//! expressions. Shoal takes both everywhere: its listener keeps a timer's status itself, so a
//! fixed interval needs no instance kept warm to count it.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use super::cron::CronSchedule;
use crate::names::{SettingName, setting_value};
use crate::timespan::TimeSpan;

/// The shortest TimeSpan schedule: the finest a cron expression can go, too.
pub const MIN_INTERVAL: Duration = Duration::from_secs(1);

/// A parsed schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// An NCRONTAB expression, read in the app's time zone (Azure's `CronSchedule`).
    Cron(CronSchedule),
    /// A fixed interval counted from the previous occurrence, whatever the time zone
    /// (Azure's `ConstantSchedule`).
    Constant(TimeSpan),
}

impl Schedule {
    /// Parses a schedule as written (after `%Setting%` references are resolved): 6 or 5 cron
    /// fields, or a TimeSpan `[d.]hh:mm[:ss]`.
    pub fn parse(expression: &str) -> Result<Schedule, String> {
        let expression = expression.trim();
        if expression.is_empty() {
            return Err("must not be empty: write a cron expression such as \"0 */5 * * * *\" or a TimeSpan such as \"00:05:00\"".to_owned());
        }
        if expression.contains(' ') {
            return CronSchedule::parse(expression)
                .map(Schedule::Cron)
                .map_err(|why| format!("is not a valid cron expression: {why}"));
        }
        if !expression.contains(':') {
            // Azure would read a bare number as a TimeSpan of that many days.
            return Err("is neither a cron expression (6 fields such as \"0 */5 * * * *\") nor a TimeSpan (such as \"00:05:00\")".to_owned());
        }
        let interval =
            TimeSpan::parse(expression).map_err(|why| format!("is not a valid TimeSpan: {why}"))?;
        if interval.as_duration() < MIN_INTERVAL {
            return Err(format!(
                "is a TimeSpan under one second ({interval}); the shortest schedule is 00:00:01"
            ));
        }
        Ok(Schedule::Constant(interval))
    }

    /// `Schedule.AdjustForDST` of Azure's `TimerInfo`: true for cron schedules, which follow
    /// the wall clock, false for a TimeSpan, which counts elapsed time.
    pub fn adjusts_for_dst(&self) -> bool {
        matches!(self, Schedule::Cron(_))
    }

    /// Whether occurrences come more than once a minute, which turns schedule monitoring off
    /// (see [`super::use_monitor`]): a TimeSpan under a minute (`TotalMinutes < 1` in Azure),
    /// or see [`CronSchedule::is_sub_minute`].
    pub fn is_sub_minute(&self) -> bool {
        match self {
            Schedule::Cron(cron) => cron.is_sub_minute(),
            Schedule::Constant(interval) => interval.as_duration() < Duration::from_secs(60),
        }
    }
}

/// As Azure's `ToString`: `Cron: '0 */5 * * * *'`, `Constant: 00:30:00`.
impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Schedule::Cron(cron) => write!(f, "Cron: '{cron}'"),
            Schedule::Constant(interval) => write!(f, "Constant: {interval}"),
        }
    }
}

/// The schedule a timer runs on: `written` with its `%Setting%` references replaced by the
/// settings' values (Azure's `ResolveWholeString`), then parsed. Errors name the settings.
pub fn resolve_schedule(
    written: &str,
    settings: &BTreeMap<String, String>,
) -> Result<Schedule, String> {
    if !written.contains('%') {
        return Schedule::parse(written).map_err(|why| format!("the schedule {why}"));
    }
    let references = setting_references(written).map_err(|why| format!("the schedule {why}"))?;
    let resolved = substitute(written, settings)?;
    Schedule::parse(&resolved).map_err(|why| match references.as_slice() {
        [only] if written.trim() == format!("%{only}%") => {
            format!("app setting {only}: the schedule {why}")
        }
        _ => format!(
            "{written} (with app settings {}): the schedule {why}",
            references.join(", ")
        ),
    })
}

/// What can be checked of a written schedule when it is stored: a literal one is parsed; one
/// with `%Setting%` references must name valid settings (their values are checked when the
/// schedule is resolved, see [`resolve_schedule`]).
pub fn check_written(written: &str) -> Result<(), String> {
    if !written.contains('%') {
        return Schedule::parse(written).map(|_| ());
    }
    let references = setting_references(written)?;
    for name in references {
        SettingName::parse(name)
            .map_err(|why| format!("%{name}% must name an app setting: {why}"))?;
    }
    Ok(())
}

/// `written` with each `%Name%` replaced by that setting's value, left to right; values are not
/// resolved again.
fn substitute(written: &str, settings: &BTreeMap<String, String>) -> Result<String, String> {
    let mut resolved = String::with_capacity(written.len());
    let mut rest = written;
    while let Some(start) = rest.find('%') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('%') else { break };
        resolved.push_str(&rest[..start]);
        resolved.push_str(setting_value(settings, &after[..end])?);
        rest = &after[end + 1..];
    }
    resolved.push_str(rest);
    Ok(resolved)
}

/// The setting names `%Name%` references in `written`, in order; an unclosed `%` is an error.
fn setting_references(written: &str) -> Result<Vec<&str>, String> {
    let mut names = Vec::new();
    let mut rest = written;
    while let Some(start) = rest.find('%') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('%') else {
            return Err(
                "has an unclosed %: write %SettingName% to take the schedule from an app setting"
                    .to_owned(),
            );
        };
        if end == 0 {
            return Err("has an empty %% reference".to_owned());
        }
        names.push(&after[..end]);
        rest = &after[end + 1..];
    }
    Ok(names)
}
