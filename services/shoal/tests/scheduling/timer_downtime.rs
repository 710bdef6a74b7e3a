//! A timer whose every worker is SIGKILLed: after 10 s with no worker, the first invocation
//! once workers are back says `IsPastDue: true` (monitored schedule), the occurrences missed
//! meanwhile are not replayed one by one, and the schedule goes on from there; an unmonitored
//! schedule (`*/2 * * * * *`) skips what it missed instead.
//!
//! What Shoal follows is Azure's timer listener (azure-webjobs-sdk-extensions,
//! `src/WebJobs.Extensions/Extensions/Timers/Listener/TimerListener.cs`, `StartAsync` and
//! `InvokeJobFunction`): on start it reads the stored `ScheduleStatus`; when its `Next` has passed
//! (`ScheduleMonitor.CheckPastDueAsync`) it invokes the function once, straight away, with
//! `IsPastDue` and the status as it was stored, then counts `Next` from that invocation — the
//! missed occurrences in between are not run. Shoal's rules are `shoal_domain::timer_trigger::status`;
//! docs/triggers.md, "Missed occurrences".

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Timelike, Utc};
use serde_json::json;
use shoal_domain::timer_trigger::ScheduleStatus;
use shoal_store::breakers::FunctionRef;
use shoal_store::{begin_tenant, timer_schedules};
use shoal_testkit::handler::{Behaviour, Recorded};
use tokio::time::Instant;

use crate::processes::Cluster;
use crate::support::{APP, Harness, tenant};

const WORKERS: [&str; 3] = ["w0", "w1", "w2"];
const DOWN: Duration = Duration::from_secs(10);

/// Every 2 s, with schedule monitoring on. `*/2 * * * * *` would not do: Azure turns monitoring
/// off for a schedule restricted in its seconds only (`TimerSchedule.ShouldDisableScheduleMonitor`,
/// more than one occurrence a minute), and Shoal with it (`CronSchedule::is_sub_minute`), so
/// what such a timer misses is skipped and nothing is ever past due. Restricting the hour field
/// keeps monitoring on in both ("if any of the minute or higher fields contain non-wildcard
/// expressions the schedule can be longer than 1 minute"); the hour left out is 12 hours from
/// now, so the test never runs into it.
fn every_two_seconds_monitored() -> String {
    let skipped = (Utc::now().hour() + 12) % 24;
    let hours: Vec<String> = (0..24)
        .filter(|h| *h != skipped)
        .map(|h| h.to_string())
        .collect();
    format!("*/2 * {} * * *", hours.join(","))
}

/// The `TimerInfo` the handler was sent (`Data.tick`).
fn timer_info(r: &Recorded) -> &serde_json::Value {
    &r.body["Data"]["tick"]
}

fn is_past_due(r: &Recorded) -> bool {
    timer_info(r)["IsPastDue"] == json!(true)
}

/// The occurrence a request fired, from its `webhook-id` (`timer-<µs since the epoch>`).
fn occurrence(r: &Recorded) -> Option<DateTime<Utc>> {
    let micros = r
        .header("webhook-id")?
        .strip_prefix("timer-")?
        .parse()
        .ok()?;
    DateTime::from_timestamp_micros(micros)
}

/// A `ScheduleStatus` date as the handler gets it (ISO 8601 with the zone's offset).
fn status_time(r: &Recorded, field: &str) -> Option<DateTime<Utc>> {
    let text = timer_info(r)["ScheduleStatus"][field].as_str()?;
    Some(DateTime::parse_from_rfc3339(text).ok()?.to_utc())
}

/// The timer `tick` on `schedule`, run on three workers until it fired three times; then every
/// worker SIGKILLed, [`DOWN`] with none, and the same workers back until it fired `after` more
/// times.
struct Downtime {
    requests: Vec<Recorded>,
    /// How many requests came before the kill.
    fired_before: usize,
    /// The status stored when the workers died.
    stored: ScheduleStatus,
    back_at: Instant,
    back_at_utc: DateTime<Utc>,
    /// The schedule's occurrences from the stored `Next` until the workers were back.
    missed: usize,
}

async fn through_downtime(h: &Harness, schedule: &str, after: usize) -> anyhow::Result<Downtime> {
    h.put_app(json!({}), json!({})).await?;
    h.put_function(
        "tick",
        json!([{"type": "timerTrigger", "direction": "in", "name": "tick",
                "schedule": schedule}]),
    )
    .await?;
    let mut cluster = Cluster::new(h);
    cluster.start_workers(WORKERS.len()).await?;
    cluster.scheduler("s1");
    cluster
        .wait_for_placement(1, Duration::from_secs(30))
        .await?;
    h.handler.wait_for(3, Duration::from_secs(30)).await?;

    // Every worker dies at once; the scheduler keeps running.
    for name in WORKERS {
        cluster.kill_worker(name);
    }
    let down_at = Instant::now();
    let fired_before = h.handler.count();
    let stored = {
        let tenant = tenant();
        let mut tx = begin_tenant(&h.pool, &tenant).await?;
        let f = FunctionRef {
            tenant: &tenant,
            app: APP,
            function: "tick",
        };
        let status = timer_schedules::get(&mut tx, f).await?;
        shoal_store::commit(tx).await?;
        status.expect("a status is stored once the timer has fired")
    };
    // The downtime is what the test is about: nothing can be waited for, since nothing runs.
    tokio::time::sleep(DOWN).await;
    let back_at = Instant::now();
    let back_at_utc = Utc::now();
    assert_eq!(
        h.handler.count(),
        fired_before,
        "an occurrence fired with every worker down"
    );
    let missed = (stored.next.timestamp()..back_at_utc.timestamp())
        .filter(|s| s % 2 == 0)
        .count();
    assert!(missed >= 4, "{missed} occurrences missed");

    // The same workers come back (same names, new processes).
    for name in WORKERS {
        cluster.worker(name);
    }
    cluster
        .wait_for_workers(i64::try_from(WORKERS.len())?, Duration::from_secs(30))
        .await?;
    let requests = h
        .handler
        .wait_for(fired_before + after, Duration::from_secs(30))
        .await?;
    eprintln!(
        "{missed} occurrences missed in {:?} down; first invocation {:?} after the restart",
        back_at - down_at,
        requests[fired_before].at - back_at
    );
    assert!(cluster.exited().is_empty(), "{:?} exited", cluster.exited());
    Ok(Downtime {
        requests,
        fired_before,
        stored,
        back_at,
        back_at_utc,
        missed,
    })
}

/// Asserts that the requests after the restart are scheduled occurrences every 2 s after
/// `since`, and that no occurrence fired twice over the whole run.
fn assert_on_schedule_after(d: &Downtime, later: &[&Recorded], since: DateTime<Utc>) {
    let mut seconds = Vec::new();
    for r in later {
        assert!(!is_past_due(r), "{}", timer_info(r));
        let at = occurrence(r).expect("a scheduled occurrence's webhook-id");
        assert!(
            at > since,
            "a missed occurrence ({at}) was fired after the restart"
        );
        assert_eq!(at.timestamp_subsec_micros(), 0, "on the schedule: {at}");
        assert_eq!(at.timestamp() % 2, 0, "on the schedule: {at}");
        seconds.push(at.timestamp());
    }
    let gaps: Vec<i64> = seconds.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.iter().all(|g| *g == 2), "{seconds:?}");
    let mut fired: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &d.requests {
        *fired
            .entry(r.header("webhook-id").unwrap_or_default())
            .or_default() += 1;
    }
    let twice: Vec<_> = fired.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "occurrences fired twice: {twice:?}");
}

#[tokio::test]
async fn after_every_worker_was_down_the_first_occurrence_is_past_due_and_the_missed_are_not_replayed()
-> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    let d = through_downtime(&h, &every_two_seconds_monitored(), 4).await?;
    let (before, after) = d.requests.split_at(d.fired_before);
    // Monitored: the handler is sent the status, and nothing is past due while workers run.
    assert!(
        before
            .iter()
            .all(|r| timer_info(r)["ScheduleStatus"].is_object() && !is_past_due(r)),
        "{:?}",
        before.iter().map(timer_info).collect::<Vec<_>>()
    );
    assert!(after.iter().all(|r| r.at > d.back_at));

    let first = &after[0];
    assert!(
        is_past_due(first),
        "the first invocation after the downtime: {}",
        timer_info(first)
    );
    // It carries the status as it was stored before the downtime, as Azure's `TimerInfo` does.
    assert_eq!(
        status_time(first, "Next"),
        Some(d.stored.next),
        "{}",
        timer_info(first)
    );
    assert_eq!(status_time(first, "Last"), d.stored.last);
    // One past-due invocation stands for all the missed occurrences.
    let past_due = d.requests.iter().filter(|r| is_past_due(r)).count();
    assert_eq!(past_due, 1, "{} occurrences were missed", d.missed);
    // None of the missed occurrences is fired as itself; the later ones are on time, the first
    // of them counted from the past-due invocation (its `Last`).
    let later: Vec<&Recorded> = after[1..].iter().collect();
    assert_on_schedule_after(&d, &later, d.back_at_utc);
    let past_due_at = occurrence(first).expect("the past-due invocation's webhook-id");
    assert_eq!(
        status_time(later[0], "Last"),
        Some(past_due_at),
        "{} after {}",
        timer_info(later[0]),
        timer_info(first)
    );
    Ok(())
}

/// The contrast: `*/2 * * * * *` runs more than once a minute, so it is not monitored (Azure's
/// `ShouldDisableScheduleMonitor`, docs/triggers.md): the handler gets no status, what the fleet
/// missed is skipped rather than run late, and the schedule starts again from the restart.
#[tokio::test]
async fn an_unmonitored_timer_skips_what_it_missed_while_every_worker_was_down()
-> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    let d = through_downtime(&h, "*/2 * * * * *", 3).await?;
    assert!(
        d.requests
            .iter()
            .all(|r| timer_info(r)["ScheduleStatus"].is_null() && !is_past_due(r)),
        "{:?}",
        d.requests.iter().map(timer_info).collect::<Vec<_>>()
    );
    let after: Vec<&Recorded> = d.requests[d.fired_before..].iter().collect();
    assert!(after.iter().all(|r| r.at > d.back_at));
    assert_on_schedule_after(&d, &after, d.back_at_utc);
    Ok(())
}
