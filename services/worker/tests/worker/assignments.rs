//! Assigned hosting: a worker runs exactly the app instances the scheduler's current leader
//! placed on it, reacts to changes within a second, never runs an instance another worker
//! still acts on, and stops everything when it cannot keep its lease. The tests play the
//! leader by writing the lease and assignments as the scheduler does.

use std::time::Duration;

use serde_json::json;
use shoal_store::{begin_platform, leadership, pool::PoolConfig};
use shoal_testkit::handler::{Behaviour, Recorded};
use tokio::time::Instant;

use crate::support::*;
use shoal_testkit::proxy::Proxy;

const WAIT: Duration = Duration::from_secs(10);
const PROMPTLY: Duration = Duration::from_secs(1);

async fn put_app_with_function(h: &Harness, app: &str, queue: &str) -> anyhow::Result<()> {
    h.put_app_named(app, json!({}), json!({})).await?;
    h.put_function_in(app, "work", queue_trigger(queue)).await
}

#[tokio::test]
async fn assignment_starts_and_removal_stops_listening_within_a_second() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    put_app_with_function(&h, "warmup", "warm").await?;
    put_app_with_function(&h, APP, "orders").await?;
    let leader = ("leader", h.lead("leader", None).await?);
    let worker = h.start_worker(h.assigned_worker_config("w1"))?;
    // Warm-up: the worker holds its lease and listens for changes.
    h.assign(leader, &[("warmup", 0, "w1")], &[]).await?;
    wait_listening(&worker, "warmup", 0, WAIT).await?;

    let written = Instant::now();
    h.assign(leader, &[(APP, 3, "w1")], &[]).await?;
    wait_listening(&worker, APP, 3, PROMPTLY).await?;
    assert!(written.elapsed() < PROMPTLY);
    assert_eq!(
        h.claim_holder(APP, 3).await?.as_deref(),
        Some("w1"),
        "claimed before listening"
    );

    let removed = Instant::now();
    h.assign(leader, &[], &[(APP, 3)]).await?;
    wait_not_listening(&worker, APP, PROMPTLY).await?;
    assert!(removed.elapsed() < PROMPTLY);
    let deadline = Instant::now() + WAIT;
    while h.claim_holder(APP, 3).await?.is_some() {
        anyhow::ensure!(Instant::now() < deadline, "the claim was never given back");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        listeners_of(&worker, "warmup").len(),
        1,
        "the other app runs on"
    );

    worker.shut_down().await?;
    assert_eq!(
        h.claim_holder("warmup", 0).await?,
        None,
        "released on shutdown"
    );
    Ok(())
}

#[tokio::test]
async fn assignment_of_an_older_epoch_is_not_acted_on() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    // Idle listeners poll at least every second, so a live one is seen polling.
    let every_second = json!({"extensions": {"queues": {"maxPollingInterval": "00:00:01"}}});
    for app in ["aged", "fresh", "third"] {
        h.put_app_named(app, every_second.clone(), json!({}))
            .await?;
        h.put_function_in(app, "work", queue_trigger(app)).await?;
    }
    let first = ("leader-1", h.lead("leader-1", None).await?);
    h.assign(first, &[("aged", 0, "w1")], &[]).await?;
    // A new leader takes over; until it confirms the placement, the row is of an old epoch.
    let second = ("leader-2", h.lead("leader-2", Some(first)).await?);
    assert!(second.1 > first.1);
    h.assign(second, &[("fresh", 0, "w1")], &[]).await?;

    let worker = h.start_worker(h.assigned_worker_config("w1"))?;
    wait_listening(&worker, "fresh", 0, WAIT).await?;
    // Both rows were read together and instances are claimed in name order, so "aged" would
    // have been claimed before "fresh" started.
    assert_eq!(h.claim_holder("aged", 0).await?, None);
    assert_eq!(listeners_of(&worker, "aged"), vec![]);

    // Confirmed under the current epoch, it starts.
    let mut tx = begin_platform(&h.pool).await?;
    leadership::fence(&mut tx, second.0, second.1).await?;
    shoal_store::assignments::confirm_all(&mut tx, second.1).await?;
    shoal_store::commit(tx).await?;
    wait_listening(&worker, "aged", 0, PROMPTLY).await?;

    // Instances already running from confirmed rows keep running when a newer leader has not
    // confirmed them yet; only new rows of its epoch start anything.
    let third = ("leader-3", h.lead("leader-3", Some(second)).await?);
    h.assign(third, &[("third", 0, "w1")], &[]).await?;
    wait_listening(&worker, "third", 0, PROMPTLY).await?;
    for app in ["aged", "fresh"] {
        wait_polling(&worker, app, WAIT).await?;
    }
    worker.shut_down().await?;
    Ok(())
}

/// Waits until the listener of `app` has started two more polls: it is running (a stopped
/// listener may finish one poll under way, never two).
async fn wait_polling(worker: &RunningWorker, app: &str, timeout: Duration) -> anyhow::Result<()> {
    let last_poll = || {
        worker
            .stats
            .reports()
            .into_iter()
            .find(|r| r.app == app)
            .and_then(|r| r.last_poll)
    };
    let deadline = Instant::now() + timeout;
    let mut seen = vec![last_poll()];
    while seen.len() < 3 {
        anyhow::ensure!(Instant::now() < deadline, "{app} stopped polling");
        tokio::time::sleep(Duration::from_millis(20)).await;
        let now = last_poll();
        anyhow::ensure!(now.is_some(), "{app} stopped listening");
        if seen.last() != Some(&now) {
            seen.push(now);
        }
    }
    Ok(())
}

/// The instance's invocations by `worker`, in arrival order.
fn invocations_by<'a>(requests: &'a [Recorded], worker: &str) -> Vec<&'a Recorded> {
    requests
        .iter()
        .filter(|r| r.header("x-shoal-worker") == Some(worker))
        .collect()
}

#[tokio::test]
async fn moved_instance_starts_on_its_new_worker_only_after_the_old_one_released_it()
-> anyhow::Result<()> {
    const HANDLING: Duration = Duration::from_millis(1500);
    let h = Harness::start(Behaviour::Delay(HANDLING, json!({}))).await?;
    // At most 2 + 1 in flight, so plenty are left for the new worker.
    h.put_app(
        json!({"extensions": {"queues": {"batchSize": 2, "newBatchThreshold": 1}}}),
        json!({}),
    )
    .await?;
    h.put_function("work", queue_trigger("work")).await?;
    for i in 0..12 {
        h.enqueue("work", &base64(&format!("m{i}"))).await?;
    }
    let leader = ("leader", h.lead("leader", None).await?);
    let a = h.start_worker(h.assigned_worker_config("wa"))?;
    let b = h.start_worker(h.assigned_worker_config("wb"))?;
    h.assign(leader, &[(APP, 0, "wa")], &[]).await?;
    h.handler.wait_for(2, WAIT).await?;

    // Moved while A has invocations in flight: B must wait for A's claim.
    h.assign(leader, &[(APP, 0, "wb")], &[]).await?;
    let deadline = Instant::now() + Duration::from_secs(15);
    while invocations_by(&h.handler.requests(), "wb").is_empty() {
        anyhow::ensure!(Instant::now() < deadline, "B never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let requests = h.handler.requests();
    let by_a = invocations_by(&requests, "wa");
    let by_b = invocations_by(&requests, "wb");
    assert!(!by_a.is_empty());
    assert_eq!(
        by_a.len() + by_b.len(),
        requests.len(),
        "every call names its worker"
    );
    assert!(
        requests
            .iter()
            .all(|r| r.header("x-shoal-instance") == Some("0")),
        "and the instance"
    );
    let a_last = by_a.iter().map(|r| r.at).max().expect("A invoked");
    let b_first = by_b.iter().map(|r| r.at).min().expect("B invoked");
    // The handler answers each call after HANDLING: A's last call had ended before B's first.
    assert!(
        b_first >= a_last + HANDLING,
        "B started {:?} after A's last call began",
        b_first - a_last
    );
    a.shut_down().await?;
    b.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn worker_cut_off_from_postgres_stops_before_its_lease_lapses_and_resumes()
-> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    put_app_with_function(&h, APP, "orders").await?;
    put_app_with_function(&h, "later", "later").await?;
    let proxy = Proxy::to_postgres().await?;
    let through_proxy = shoal_store::pool::connect_lazy(
        &proxy.url_through(&h.database_url)?,
        &PoolConfig {
            acquire_timeout: Duration::from_millis(500),
            ..PoolConfig::default()
        },
    )?;
    let mut config = h.assigned_worker_config("w1");
    config.lease_ttl = Duration::from_secs(2);
    config.heartbeat_interval = None; // every 500 ms
    let worker = h.start_worker_on(config, through_proxy)?;
    let leader = ("leader", h.lead("leader", None).await?);
    h.assign(leader, &[(APP, 0, "w1")], &[]).await?;
    wait_listening(&worker, APP, 0, WAIT).await?;

    let cut = Instant::now();
    proxy.cut();
    wait_not_listening(&worker, APP, Duration::from_secs(5)).await?;
    let stopped_after = cut.elapsed();
    // On the database's clock (the test's own connection still reaches it), the worker's
    // lease had not lapsed yet: nobody could have claimed its instance.
    let lease_current: bool = sqlx::query_scalar(
        "select heartbeat_at + make_interval(secs => lease_ttl_ms / 1000.0) > now()
         from workers where name = 'w1'",
    )
    .fetch_one(&h.pool)
    .await?;
    assert!(
        lease_current,
        "stopped {stopped_after:?} after the cut, after its lease lapsed"
    );
    // Nothing starts again while it cannot heartbeat, even after the lease has lapsed.
    let deadline = Instant::now() + WAIT;
    loop {
        let alive: bool = sqlx::query_scalar(
            "select heartbeat_at + make_interval(secs => lease_ttl_ms / 1000.0) > now()
             from workers where name = 'w1'",
        )
        .fetch_one(&h.pool)
        .await?;
        if !alive {
            break;
        }
        anyhow::ensure!(Instant::now() < deadline, "the lease never lapsed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(listeners_of(&worker, APP), vec![]);

    proxy.restore().await?;
    wait_listening(&worker, APP, 0, WAIT).await?;
    assert_eq!(h.claim_holder(APP, 0).await?.as_deref(), Some("w1"));
    // It listens for changes again without a restart (its periodic refresh is a minute away).
    h.assign(leader, &[("later", 0, "w1")], &[]).await?;
    wait_listening(&worker, "later", 0, Duration::from_secs(5)).await?;
    worker.shut_down().await?;
    Ok(())
}
