//! A timer trigger on three `shoal worker` processes under `shoal scheduler`: each occurrence
//! is fired once, and a worker paused (SIGSTOP) while it holds the timer's instance fires
//! nothing the worker that took over fired when it wakes (SIGCONT).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;
use shoal_testkit::handler::{Behaviour, Recorded};

use crate::processes::Cluster;
use crate::support::Harness;

/// Each occurrence (from its `webhook-id`, `timer-<µs>`) with the workers that invoked it.
fn occurrences(requests: &[Recorded]) -> BTreeMap<i64, Vec<String>> {
    let mut seen: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for r in requests {
        let id = r.header("webhook-id").unwrap_or_default();
        let Some(micros) = id.strip_prefix("timer-").and_then(|m| m.parse().ok()) else {
            continue;
        };
        let worker = r.header("x-shoal-worker").unwrap_or_default().to_owned();
        seen.entry(micros).or_default().push(worker);
    }
    seen
}

#[tokio::test]
async fn each_occurrence_fires_once_and_a_paused_holder_fires_nothing_when_it_wakes()
-> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    h.put_app(json!({}), json!({})).await?;
    h.put_function(
        "tick",
        json!([{"type": "timerTrigger", "direction": "in", "name": "tick",
                "schedule": "*/2 * * * * *"}]),
    )
    .await?;
    let mut cluster = Cluster::new(&h);
    cluster.start_workers(3).await?;
    cluster.scheduler("s1");
    // The timer keeps its app at one instance.
    cluster
        .wait_for_placement(1, Duration::from_secs(30))
        .await?;
    h.handler.wait_for(3, Duration::from_secs(30)).await?;
    tokio::time::sleep(Duration::from_secs(20)).await;

    // Pause the worker that fires, for 15 s: the instance moves to another worker.
    let holder = h
        .handler
        .requests()
        .last()
        .and_then(|r| r.header("x-shoal-worker").map(str::to_owned))
        .expect("a worker fired");
    let before_pause = h.handler.count();
    cluster.signal_worker(&holder, "STOP");
    let (taken_by, _) = cluster
        .wait_for_claim_moved(0, &holder, Duration::from_secs(15))
        .await?;
    tokio::time::sleep(Duration::from_secs(10)).await;
    cluster.signal_worker(&holder, "CONT");
    let woke = tokio::time::Instant::now();
    tokio::time::sleep(Duration::from_secs(10)).await;

    let requests = h.handler.requests();
    let fired = occurrences(&requests);
    let twice: Vec<_> = fired.iter().filter(|(_, w)| w.len() > 1).collect();
    assert!(twice.is_empty(), "occurrences fired twice: {twice:?}");
    let after: Vec<&Recorded> = requests[before_pause..].iter().collect();
    assert!(
        after
            .iter()
            .any(|r| r.header("x-shoal-worker") == Some(taken_by.as_str())),
        "{taken_by} fired after taking over"
    );
    let woken_fired = requests
        .iter()
        .filter(|r| r.at > woke && r.header("x-shoal-worker") == Some(holder.as_str()))
        .count();
    assert_eq!(woken_fired, 0, "{holder} fired after it woke");
    // Every 2 s, apart from the failover (the paused worker's lease running out, the
    // instance moving): no gap longer than that.
    let seconds: Vec<i64> = fired.keys().map(|us| us / 1_000_000).collect();
    let gaps: Vec<i64> = seconds.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.iter().all(|g| *g >= 2), "{seconds:?}");
    assert!(
        gaps.iter().filter(|g| **g > 2).count() <= 1,
        "one gap, at the failover: {gaps:?}"
    );
    assert!(gaps.iter().all(|g| *g <= 12), "failover gap: {gaps:?}");
    assert!(cluster.exited().is_empty());
    Ok(())
}
