//! The timer trigger against real Postgres: one invocation per occurrence however many
//! instances host it (the status shared in `timer_schedules`, moved on by one of them), the
//! `TimerInfo` Azure sends, and an occurrence missed while nothing ran fired once, past due.

use std::collections::BTreeSet;
use std::time::Duration;

use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use serde_json::json;
use shoal_domain::timer_trigger::ScheduleStatus;
use shoal_store::begin_tenant;
use shoal_store::breakers::FunctionRef;
use shoal_testkit::handler::{Behaviour, Recorded};

use crate::support::*;

fn timer(schedule: &str) -> serde_json::Value {
    json!([{"type": "timerTrigger", "direction": "in", "name": "tick", "schedule": schedule}])
}

/// The occurrence each request stands for, from its idempotency key (`timer-<µs>`).
fn occurrence(request: &Recorded) -> i64 {
    let id = request.headers["webhook-id"].to_str().expect("ASCII");
    id.strip_prefix("timer-")
        .and_then(|micros| micros.parse().ok())
        .unwrap_or_else(|| panic!("not a timer's webhook-id: {id}"))
}

#[tokio::test]
async fn two_instances_fire_each_occurrence_once() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    h.put_app(json!({}), json!({})).await?;
    h.put_function("tick", timer("* * * * * *")).await?;
    let leader = ("leader", h.lead("leader", None).await?);
    h.assign(leader, &[(APP, 0, "w1"), (APP, 1, "w2")], &[])
        .await?;
    let w1 = h.start_worker(h.assigned_worker_config("w1"))?;
    let w2 = h.start_worker(h.assigned_worker_config("w2"))?;
    wait_listening(&w1, APP, 0, Duration::from_secs(20)).await?;
    wait_listening(&w2, APP, 1, Duration::from_secs(20)).await?;

    h.handler.wait_for(6, Duration::from_secs(20)).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let requests = h.handler.requests();
    let occurrences: Vec<i64> = requests.iter().map(occurrence).collect();
    let distinct: BTreeSet<i64> = occurrences.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        occurrences.len(),
        "an occurrence fired twice: {occurrences:?}"
    );
    // Every second, with none skipped between the first and the last.
    let seconds: Vec<i64> = distinct.iter().map(|us| us / 1_000_000).collect();
    for pair in seconds.windows(2) {
        assert_eq!(pair[1] - pair[0], 1, "{seconds:?}");
    }
    let body = &requests[0].body;
    assert_eq!(body["Data"]["tick"]["IsPastDue"], false);
    // Sub-minute schedules are not monitored: no status is sent, as in Azure.
    assert!(body["Data"]["tick"]["ScheduleStatus"].is_null(), "{body}");
    assert_eq!(body["Data"]["tick"]["Schedule"]["AdjustForDST"], true);
    assert_eq!(requests[0].function, "tick");
    w1.shut_down().await?;
    w2.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn an_occurrence_missed_while_nothing_ran_fires_once_past_due() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    h.put_app(json!({}), json!({})).await?;
    h.put_function("tick", timer("0 */5 * * * *")).await?;
    // The status a worker left 15 minutes ago: its next occurrence came 10 minutes ago, and two
    // more since.
    let five = TimeDelta::minutes(5);
    let last: DateTime<Utc> = Utc::now().duration_trunc(five)? - TimeDelta::minutes(15);
    let stored = ScheduleStatus {
        last: Some(last),
        next: last + five,
        last_updated: last,
    };
    let tenant = tenant();
    let mut tx = begin_tenant(&h.pool, &tenant).await?;
    let f = FunctionRef {
        tenant: &tenant,
        app: APP,
        function: "tick",
    };
    assert!(shoal_store::timer_schedules::advance(&mut tx, f, None, None, &stored).await?);
    shoal_store::commit(tx).await?;

    let worker = h.start_worker(h.worker_config("w1"))?;
    let requests = h.handler.wait_for(1, Duration::from_secs(20)).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        h.handler.count(),
        1,
        "the missed occurrences are not replayed"
    );
    let info = &requests[0].body["Data"]["tick"];
    assert_eq!(info["IsPastDue"], true, "{info}");
    let next = DateTime::parse_from_rfc3339(info["ScheduleStatus"]["Next"].as_str().unwrap())?;
    assert_eq!(next, stored.next, "the status it waited on: {info}");

    let mut tx = begin_tenant(&h.pool, &tenant).await?;
    let now = shoal_store::timer_schedules::get(&mut tx, f)
        .await?
        .unwrap();
    shoal_store::commit(tx).await?;
    assert!(now.last.unwrap() > stored.next);
    assert!(
        now.next > Utc::now(),
        "waits for the next occurrence: {now:?}"
    );
    worker.shut_down().await?;
    Ok(())
}
