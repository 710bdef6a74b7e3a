//! `timerTrigger`: runs the function on a schedule, as Azure Functions' timer extension does
//! (azure-webjobs-sdk-extensions, `src/WebJobs.Extensions/Extensions/Timers/TimerTriggerAttribute.cs`;
//! the script host reads the three properties `schedule`, `runOnStartup` and `useMonitor`,
//! azure-functions-host `src/WebJobs.Script/Binding/CoreExtensionsScriptBindingProvider.cs`).
//!
//! The schedule's rules (NCRONTAB with seconds or a TimeSpan, the time zone, when a status is
//! kept, occurrences, the payload) are `crate::timer_trigger`'s; this is what the binding table
//! asks of the kind. A timer has no source and no backlog: it scales on nothing, and its app
//! keeps one instance while it runs ([`BindingKind::needs_an_instance`]).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::binding_kinds::{
    BindingKind, DataShape, DataType, Finding, KindBinding, PropertiesSchema, read_typed,
};
use crate::names::BindingName;
use crate::timer_trigger::{
    Schedule, check_written, occurrences, resolve_schedule, time_zone, use_monitor,
};
use crate::validation::{Problems, join_path};

/// The trigger's `type`.
pub const TRIGGER_TYPE: &str = "timerTrigger";

pub struct Trigger;

pub const TRIGGER: Trigger = Trigger;

/// `timerTrigger`'s properties.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TriggerBinding {
    pub name: BindingName,
    /// An NCRONTAB expression with seconds (`0 */5 * * * *`), a TimeSpan (`00:05:00`), or a
    /// `%Setting%` reference to either, read in the app's `WEBSITE_TIME_ZONE`.
    // The rules: `timer_trigger::schedule`.
    pub schedule: String,
    /// Invoke once when the listener starts, besides the schedule.
    #[serde(default)]
    pub run_on_startup: bool,
    /// Keep the schedule status so an occurrence missed while down runs once when back;
    /// absent means true, and it is off for schedules that run more than once a minute.
    // The rule: `timer_trigger::use_monitor`.
    #[serde(default)]
    pub use_monitor: Option<bool>,
    /// No effect on a timer (accepted, as Azure accepts it on every binding): its value is
    /// always its schedule status. Diagnostics say so when it is set.
    #[serde(default)]
    pub data_type: Option<DataType>,
}

/// The binding data contract of `TimerTriggerBinding.CreateBindingDataContract`
/// (`src/WebJobs.Extensions/Extensions/Timers/Bindings/TimerTriggerBinding.cs`): the
/// invocation's local time as text.
const BINDING_DATA: &[(&str, DataShape)] = &[("TimerTrigger", DataShape::Text)];

impl BindingKind for Trigger {
    fn type_name(&self) -> &'static str {
        TRIGGER_TYPE
    }

    fn is_trigger(&self) -> bool {
        true
    }

    fn properties(&self) -> PropertiesSchema {
        PropertiesSchema::of::<TriggerBinding>()
    }

    fn check(
        &self,
        properties: &Map<String, Value>,
        prefix: &str,
        problems: &mut Problems,
    ) -> Option<BindingName> {
        let b: TriggerBinding = read_typed(properties, prefix, problems)?;
        // A literal schedule is parsed now; one from app settings when it is resolved.
        if let Err(message) = check_written(&b.schedule) {
            problems.push(join_path(prefix, "schedule"), message);
        }
        Some(b.name)
    }

    fn binding_data(&self) -> &'static [(&'static str, DataShape)] {
        BINDING_DATA
    }

    fn needs_an_instance(&self) -> bool {
        true
    }

    fn failed_messages(&self) -> &'static str {
        "its retry policy, then its next occurrence"
    }

    /// The schedule and time zone, resolved as the listener resolves them, whether the
    /// schedule status is kept, and the next occurrences after `now`.
    fn diagnose(
        &self,
        binding: &KindBinding,
        settings: &BTreeMap<String, String>,
        _section: Option<&Value>,
        now: DateTime<Utc>,
    ) -> Vec<(&'static str, Finding)> {
        let timer = match binding.typed::<TriggerBinding>() {
            Ok(timer) => timer,
            Err(problem) => return vec![("schedule", Finding::Error(problem))],
        };
        let mut findings = vec![("schedule", schedule_finding(&timer, settings))];
        if let (Ok(schedule), Ok(zone)) = (
            resolve_schedule(&timer.schedule, settings),
            time_zone(settings),
        ) {
            findings.push((
                "occurrences",
                Finding::Ok(next_occurrences(&schedule, zone, now)),
            ));
        }
        if let Some(data_type) = timer.data_type {
            findings.push((
                "dataType",
                Finding::Warning(format!(
                    "dataType {} has no effect: a timer's value is always its schedule status",
                    data_type.as_str()
                )),
            ));
        }
        findings
    }
}

fn schedule_finding(timer: &TriggerBinding, settings: &BTreeMap<String, String>) -> Finding {
    let schedule = match resolve_schedule(&timer.schedule, settings) {
        Ok(schedule) => schedule,
        Err(message) => return Finding::Error(message),
    };
    let zone = match time_zone(settings) {
        Ok(zone) => zone,
        Err(message) => return Finding::Error(message),
    };
    let runs = format!("runs on {schedule} in {}", zone.name());
    if use_monitor(timer.use_monitor, &schedule) {
        Finding::Ok(format!(
            "{runs}; an occurrence missed while down runs once when back"
        ))
    } else if timer.use_monitor == Some(true) {
        Finding::Warning(format!(
            "{runs}; useMonitor is true, but a schedule that runs more than once a minute is not monitored (as in Azure), so missed occurrences are not run"
        ))
    } else {
        Finding::Ok(format!(
            "{runs}; no status is kept, so missed occurrences are not run"
        ))
    }
}

/// How many coming occurrences diagnostics list.
const SHOWN_OCCURRENCES: usize = 3;

/// `next: 2026-03-10 09:30:00 +01:00, …` in the app's time zone, as the listener computes them
/// (a TimeSpan schedule counts from `now`, as from the last run).
fn next_occurrences(schedule: &Schedule, zone: Tz, now: DateTime<Utc>) -> String {
    let next: Vec<String> = occurrences(schedule, now, zone)
        .take(SHOWN_OCCURRENCES)
        .map(|at| {
            at.with_timezone(&zone)
                .format("%Y-%m-%d %H:%M:%S %:z")
                .to_string()
        })
        .collect();
    if next.is_empty() {
        "no occurrence is coming: the schedule never fires again".to_owned()
    } else {
        format!("next: {}", next.join(", "))
    }
}

/// The timer binding of `binding`, when it is one.
pub fn timer_of(binding: &KindBinding) -> Option<Result<TriggerBinding, String>> {
    (binding.kind().type_name() == TRIGGER_TYPE).then(|| binding.typed())
}
