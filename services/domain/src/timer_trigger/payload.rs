//! The request body of a timer-triggered invocation.
//!
//! Azure's host hands a custom handler each input as `JObject.FromObject(value)`
//! (azure-functions-host, `src/WebJobs.Script/Workers/MessageExtensions/ScriptInvocationContextExtensions.cs`,
//! `GetHttpScriptInvocationContextValue`), so `Data.<binding>` is the `TimerInfo`
//! (azure-webjobs-sdk-extensions, `src/WebJobs.Extensions/Extensions/Timers/TimerInfo.cs`) as
//! Json.NET writes it: its public properties in order,
//!
//! ```json
//! {"Schedule": {"AdjustForDST": true},
//!  "ScheduleStatus": {"Last": "2024-03-09T09:30:00-05:00", "Next": "2024-03-10T09:30:00-04:00",
//!                     "LastUpdated": "2024-03-09T09:30:00-05:00"},
//!  "IsPastDue": false}
//! ```
//!
//! `ScheduleStatus` is `null` when the schedule is not monitored. Its dates are local times of
//! the host's zone (`DateTime`s of kind `Local`), which Json.NET writes as ISO 8601 with the
//! zone's offset and up to seven fraction digits, trailing zeros dropped; Shoal writes them in
//! the app's time zone the same way. A `Last` that was never set is .NET's default date,
//! `0001-01-01T00:00:00`, written with the offset `+00:00`.
//!
//! `Metadata` holds the binding data: `TimerTrigger` (Azure's `TimerTriggerBinding` contract,
//! the invocation's local time as `DateTime.ToString()` writes it in the invariant culture,
//! `MM/dd/yyyy HH:mm:ss`; Azure's host leaves it out of a custom handler's `Metadata`, Shoal
//! keeps it, as it keeps `QueueTrigger`, so output names can use it) and `sys`.

use chrono::{DateTime, SecondsFormat, Utc};
use chrono_tz::Tz;
use serde_json::{Map, Value, json};

use super::schedule::Schedule;
use super::status::ScheduleStatus;

/// One timer invocation, as the listener decided it.
#[derive(Clone, Copy, Debug)]
pub struct TimerInvocation<'a> {
    /// The trigger binding's name (`Data.<name>`).
    pub binding: &'a str,
    pub function: &'a str,
    pub schedule: &'a Schedule,
    /// The status the listener waited on, as it was before this invocation; `None` when the
    /// schedule is not monitored.
    pub status: Option<&'a ScheduleStatus>,
    pub is_past_due: bool,
    /// The app's time zone, which the dates are written in.
    pub tz: Tz,
    pub now: DateTime<Utc>,
    /// `sys.RandGuid`, supplied by the caller to keep this pure.
    pub rand_guid: &'a str,
}

/// The request body `{"Data": {<binding>: <TimerInfo>}, "Metadata": {...}}`.
pub fn timer_payload(invocation: &TimerInvocation<'_>) -> Value {
    let tz = invocation.tz;
    let status = invocation.status.map_or(Value::Null, |status| {
        json!({
            "Last": status.last.map_or_else(|| NEVER.to_owned(), |t| local_time(t, tz)),
            "Next": local_time(status.next, tz),
            "LastUpdated": local_time(status.last_updated, tz),
        })
    });
    let mut data = Map::new();
    data.insert(
        invocation.binding.to_owned(),
        json!({
            "Schedule": {"AdjustForDST": invocation.schedule.adjusts_for_dst()},
            "ScheduleStatus": status,
            "IsPastDue": invocation.is_past_due,
        }),
    );
    json!({
        "Data": data,
        "Metadata": {
            "TimerTrigger": invocation.now.with_timezone(&tz).format("%m/%d/%Y %H:%M:%S").to_string(),
            "sys": {
                "MethodName": invocation.function,
                "UtcNow": invocation.now.to_rfc3339_opts(SecondsFormat::AutoSi, true),
                "RandGuid": invocation.rand_guid,
            }
        }
    })
}

/// .NET's `default(DateTime)`, which Azure's `Last` holds before the first invocation.
const NEVER: &str = "0001-01-01T00:00:00+00:00";

/// A `DateTime` of kind `Local` as Json.NET writes it: `yyyy-MM-ddTHH:mm:ss.FFFFFFFzzz`.
fn local_time(t: DateTime<Utc>, tz: Tz) -> String {
    let local = t.with_timezone(&tz);
    let ticks = local.timestamp_subsec_nanos() / 100;
    let fraction = if ticks == 0 {
        String::new()
    } else {
        format!(".{ticks:07}").trim_end_matches('0').to_owned()
    };
    format!(
        "{}{fraction}{}",
        local.format("%Y-%m-%dT%H:%M:%S"),
        local.format("%:z")
    )
}
