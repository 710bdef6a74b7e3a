//! `shoal scheduler` with `shoal worker` processes against real Postgres and Azurite: target-based
//! and incremental scale-out, placement on distinct workers, scale-in after the stabilisation
//! window, a worker or the leader killed under load, Postgres restarted under load, fair
//! shares between tenants when the workers are short (`scheduling/fair_share.rs`), a
//! function's `maxConcurrency` across instances (`scheduling/concurrency.rs`), a timer's
//! occurrences across a failover and across a downtime of every worker (`scheduling/timer.rs`,
//! `scheduling/timer_downtime.rs`), a RabbitMQ worker killed with messages in hand
//! (`scheduling/rabbitmq_kill.rs`), and the leader's ticks exported as traces
//! (`scheduling/traces.rs`).
//!
//! Timings are shortened through flags (a 500 ms tick, 3 s leases, a 3 s scale-in window);
//! every wait is for a condition with a deadline.

#[path = "../../worker/tests/worker/support.rs"]
#[allow(dead_code)]
mod support;

#[path = "scheduling/concurrency.rs"]
mod concurrency;
#[path = "scheduling/fair_share.rs"]
mod fair_share;
#[path = "support/host_identity.rs"]
mod host_identity;
#[path = "scheduling/processes.rs"]
mod processes;
#[path = "scheduling/rabbitmq_kill.rs"]
mod rabbitmq_kill;
#[path = "scheduling/service_bus.rs"]
mod service_bus;
#[path = "scheduling/timer.rs"]
mod timer;
#[path = "scheduling/timer_downtime.rs"]
mod timer_downtime;
#[path = "scheduling/traces.rs"]
mod traces;

#[path = "../src/dev/postgres.rs"]
#[allow(dead_code)]
mod postgres;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::time::{Duration, Instant};

use serde_json::json;
use shoal_testkit::handler::{Behaviour, Recorded};
use support::{Harness, base64, queue_trigger};

use processes::{Cluster, Decision};

const TICK_MS: u64 = 500;
const LEASE_TTL: Duration = Duration::from_secs(3);

async fn enqueue_many(h: &Harness, queue: &str, n: usize, tag: &str) -> anyhow::Result<()> {
    let q = h.queue(queue);
    q.create_if_missing().await?;
    for chunk in (0..n).collect::<Vec<_>>().chunks(50) {
        let sends = chunk.iter().map(|i| {
            let q = q.clone();
            let text = base64(&format!("{tag}-{i}"));
            async move { q.enqueue(&text).await }
        });
        for sent in futures::future::join_all(sends).await {
            sent?;
        }
    }
    Ok(())
}

/// The app `orders` with one queue-trigger function `work` on queue `work` (`batchSize` 16).
async fn queue_app(h: &Harness, scale: serde_json::Value) -> anyhow::Result<()> {
    h.put_app(
        json!({"extensions": {"queues": {"batchSize": 16}}}),
        json!({"scale": scale}),
    )
    .await?;
    h.put_function("work", queue_trigger("work")).await
}

/// For every instance, the time span in which each worker invoked the handler for it; spans of
/// different workers for one instance must not overlap.
fn overlapping_actors(requests: &[Recorded]) -> Vec<String> {
    let mut spans: BTreeMap<(String, String), (tokio::time::Instant, tokio::time::Instant)> =
        BTreeMap::new();
    for r in requests {
        let (Some(worker), Some(instance)) =
            (r.header("x-shoal-worker"), r.header("x-shoal-instance"))
        else {
            continue;
        };
        let span = spans
            .entry((instance.to_owned(), worker.to_owned()))
            .or_insert((r.at, r.at));
        span.0 = span.0.min(r.at);
        span.1 = span.1.max(r.at);
    }
    let mut overlaps = Vec::new();
    let entries: Vec<_> = spans.iter().collect();
    for (i, ((instance_a, worker_a), a)) in entries.iter().enumerate() {
        for ((instance_b, worker_b), b) in &entries[i + 1..] {
            if instance_a == instance_b && worker_a != worker_b && a.0 <= b.1 && b.0 <= a.1 {
                overlaps.push(format!("instance {instance_a}: {worker_a} and {worker_b}"));
            }
        }
    }
    overlaps
}

fn message_texts(requests: &[Recorded]) -> HashSet<String> {
    requests
        .iter()
        .filter_map(|r| r.body["Data"]["msg"].as_str().map(str::to_owned))
        .collect()
}

fn assert_steps(decisions: &[Decision], max_step: u32) {
    for d in decisions {
        assert!(
            d.to <= d.from + max_step,
            "a decision went from {} to {} ({})",
            d.from,
            d.to,
            d.reason
        );
    }
}

#[tokio::test]
async fn a_backlog_scales_out_four_at_a_time_to_the_limit_on_distinct_workers_and_back_in()
-> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Delay(Duration::from_millis(400), json!({}))).await?;
    queue_app(&h, json!({"limit": 10})).await?;
    let mut cluster = Cluster::new(&h);
    for i in 0..10 {
        cluster.worker(&format!("w{i}"));
    }
    cluster
        .wait_for_workers(10, Duration::from_secs(30))
        .await?;
    enqueue_many(&h, "work", 1000, "m").await?;
    cluster.scheduler("s1");

    // Out: +4 per decision up to 10, one instance on each of 10 workers.
    let peak = cluster
        .wait_for_desired(10, Duration::from_secs(30))
        .await?;
    let placed = cluster
        .wait_for_placement(10, Duration::from_secs(10))
        .await?;
    let workers: BTreeSet<&String> = placed.iter().map(|(_, w)| w).collect();
    assert_eq!(workers.len(), 10, "{placed:?}");
    assert_steps(&peak, 4);
    assert_eq!(
        peak.iter().map(|d| d.to).collect::<Vec<_>>(),
        [4, 8, 10],
        "{peak:#?}"
    );
    assert!(peak[0].reason.contains("scale out"), "{}", peak[0].reason);

    // Everything is processed, then the app scales in once the window has passed.
    h.wait_until_empty("work", Duration::from_secs(60)).await?;
    let drained_at = Instant::now();
    let all = cluster.wait_for_desired(0, Duration::from_secs(30)).await?;
    assert!(
        drained_at.elapsed() >= Duration::from_secs(2),
        "scale-in waited for the stabilisation window"
    );
    assert!(all.iter().any(|d| d.to < d.from), "{all:#?}");
    cluster
        .wait_for_placement(0, Duration::from_secs(10))
        .await?;
    let texts = message_texts(&h.handler.requests());
    assert_eq!(texts.len(), 1000);
    assert!(overlapping_actors(&h.handler.requests()).is_empty());
    Ok(())
}

#[tokio::test]
async fn instances_beyond_the_live_workers_stay_unplaced() -> anyhow::Result<()> {
    // The handler holds every message, so the backlog (which counts held messages) stays.
    let h = Harness::start(Behaviour::Delay(Duration::from_secs(4), json!({}))).await?;
    queue_app(&h, json!({"limit": 10})).await?;
    let mut cluster = Cluster::new(&h);
    cluster.start_workers(3).await?;
    enqueue_many(&h, "work", 1000, "m").await?;
    cluster.scheduler("s1");
    cluster
        .wait_for_desired(10, Duration::from_secs(30))
        .await?;
    let placed = cluster
        .wait_for_placement(3, Duration::from_secs(10))
        .await?;
    let workers: BTreeSet<&String> = placed.iter().map(|(_, w)| w).collect();
    assert_eq!(
        workers.len(),
        3,
        "capped by the workers available: {placed:?}"
    );
    Ok(())
}

#[tokio::test]
async fn incremental_mode_scales_by_one_per_decision() -> anyhow::Result<()> {
    // Held messages keep the queue length at 1,000 while the oldest visible one ages, which
    // is Azure's "queue time increasing" vote.
    let h = Harness::start(Behaviour::Delay(Duration::from_secs(4), json!({}))).await?;
    h.put_app(
        json!({"extensions": {"queues": {"batchSize": 16}}}),
        json!({"scale": {"limit": 10}, "appSettings": {
            "AzureWebJobsStorage": h.azurite.connection_string(),
            "TARGET_BASED_SCALING_ENABLED": "0"}}),
    )
    .await?;
    h.put_function("work", queue_trigger("work")).await?;
    let mut cluster = Cluster::new(&h);
    cluster.start_workers(4).await?;
    enqueue_many(&h, "work", 1000, "m").await?;
    cluster.scheduler("s1");
    let decisions = cluster.wait_for_desired(3, Duration::from_secs(30)).await?;
    assert_eq!(
        decisions.iter().map(|d| (d.from, d.to)).collect::<Vec<_>>(),
        [(0, 1), (1, 2), (2, 3)],
        "{decisions:#?}"
    );
    assert!(decisions.iter().all(|d| d.mode == "incremental"));
    Ok(())
}

#[tokio::test]
async fn two_functions_scaling_out_add_their_increases() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Delay(Duration::from_secs(8), json!({}))).await?;
    h.put_app(
        json!({"extensions": {"queues": {"batchSize": 16}}}),
        json!({"scale": {"limit": 10}}),
    )
    .await?;
    h.put_function("small", queue_trigger("small")).await?;
    h.put_function("large", queue_trigger("large")).await?;
    let mut cluster = Cluster::new(&h);
    cluster.start_workers(8).await?;
    // 16 and 32 messages: targets 1 and 2, so 0 → 3 (the sum), not 2 (the larger).
    enqueue_many(&h, "small", 16, "s").await?;
    enqueue_many(&h, "large", 32, "l").await?;
    cluster.scheduler("s1");
    let first = cluster.wait_for_desired(3, Duration::from_secs(20)).await?;
    assert_eq!((first[0].from, first[0].to), (0, 3), "{first:#?}");
    // Both grow by 64: targets 5 and 6, increases 2 + 3 = 5, capped at +4.
    enqueue_many(&h, "small", 64, "s2").await?;
    enqueue_many(&h, "large", 64, "l2").await?;
    let next = cluster.wait_for_desired(7, Duration::from_secs(20)).await?;
    let step = next
        .iter()
        .find(|d| d.from == 3)
        .expect("a decision from 3");
    assert_eq!(step.to, 7, "{next:#?}");
    assert!(step.reason.contains("+4"), "{}", step.reason);
    Ok(())
}

#[tokio::test]
async fn a_killed_workers_instances_move_within_the_lease_and_nothing_is_lost() -> anyhow::Result<()>
{
    let h = Harness::start(Behaviour::Delay(Duration::from_millis(300), json!({}))).await?;
    queue_app(&h, json!({"limit": 3, "minimumInstances": 3})).await?;
    let mut cluster = Cluster::new(&h);
    cluster.start_workers(4).await?;
    cluster.scheduler("s1");
    let placed = cluster
        .wait_for_placement(3, Duration::from_secs(20))
        .await?;
    cluster.wait_for_claims(3, Duration::from_secs(10)).await?;
    enqueue_many(&h, "work", 600, "m").await?;
    h.handler.wait_for(50, Duration::from_secs(30)).await?;

    let (instance, victim) = placed[0].clone();
    cluster.kill_worker(&victim);
    let killed_at = Instant::now();
    let (moved_to, took) = cluster
        .wait_for_claim_moved(instance, &victim, Duration::from_secs(20))
        .await?;
    assert_ne!(moved_to, victim);
    let bound = LEASE_TTL + Duration::from_millis(TICK_MS) + Duration::from_millis(700);
    assert!(
        took <= bound,
        "instance {instance} running on {moved_to} {took:?} after the kill (bound {bound:?})"
    );
    eprintln!("instance moved {:?} after the kill", killed_at.elapsed());

    // Messages the dead worker held come back after the invisibility and are processed.
    h.wait_until_empty("work", Duration::from_secs(60)).await?;
    let requests = h.handler.requests();
    assert_eq!(message_texts(&requests).len(), 600);
    assert!(
        overlapping_actors(&requests).is_empty(),
        "{:?}",
        overlapping_actors(&requests)
    );
    Ok(())
}

#[tokio::test]
async fn a_standby_leads_within_the_lease_when_the_leader_is_killed() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Delay(Duration::from_millis(200), json!({}))).await?;
    queue_app(&h, json!({"limit": 3, "minimumInstances": 2})).await?;
    let mut cluster = Cluster::new(&h);
    cluster.start_workers(3).await?;
    cluster.scheduler("s1");
    let (holder, first_epoch) = cluster
        .wait_for_leader(None, Duration::from_secs(20))
        .await?;
    assert_eq!(holder, "s1");
    cluster.scheduler("s2");
    cluster
        .wait_for_placement(2, Duration::from_secs(20))
        .await?;
    enqueue_many(&h, "work", 400, "m").await?;
    h.handler.wait_for(20, Duration::from_secs(30)).await?;

    cluster.kill_scheduler("s1");
    let killed_at = Instant::now();
    let (holder, epoch) = cluster
        .wait_for_leader(Some(first_epoch), Duration::from_secs(20))
        .await?;
    let took = killed_at.elapsed();
    assert_eq!(holder, "s2");
    assert!(epoch > first_epoch);
    assert!(
        took <= LEASE_TTL + Duration::from_millis(300),
        "the standby led {took:?} after the kill"
    );
    eprintln!("standby led {took:?} after the kill with epoch {epoch}");
    // The new leader confirms the placement with its epoch and keeps scaling.
    cluster
        .wait_for_confirmed_epoch(epoch, Duration::from_secs(10))
        .await?;
    h.wait_until_empty("work", Duration::from_secs(60)).await?;
    let requests = h.handler.requests();
    assert_eq!(message_texts(&requests).len(), 400);
    assert!(overlapping_actors(&requests).is_empty());
    Ok(())
}

#[tokio::test]
async fn scheduler_and_workers_ride_out_a_postgres_restart() -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir()?;
    // When the test runs as root the server runs as `postgres`, which must reach the data dir.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))?;
    let data_dir = dir.path().join("pg");
    let server = postgres::PrivateCluster::start(&data_dir).await?;
    let admin_url = server.database_url();
    let h = Harness::start_on(
        &admin_url,
        shoal_testkit::azurite::Azurite::start().await?,
        Behaviour::Delay(Duration::from_millis(200), json!({})),
    )
    .await?;
    queue_app(&h, json!({"limit": 3, "minimumInstances": 2})).await?;
    let mut cluster = Cluster::new(&h);
    cluster.start_workers(3).await?;
    cluster.scheduler("s1");
    cluster
        .wait_for_placement(2, Duration::from_secs(20))
        .await?;
    cluster.wait_for_claims(2, Duration::from_secs(10)).await?;
    enqueue_many(&h, "work", 300, "before").await?;
    h.handler.wait_for(20, Duration::from_secs(30)).await?;

    // Restart Postgres under load; the processes are not restarted.
    server.stop().await?;
    let server = postgres::PrivateCluster::start(&data_dir).await?;
    let restarted = chrono::Utc::now();
    enqueue_many(&h, "work", 300, "after").await?;

    // The leader renews its lease and the workers heartbeat on the new server…
    cluster
        .wait_for_leader(None, Duration::from_secs(30))
        .await?;
    let pool = &h.pool;
    let beating: i64 = cluster
        .until_value(
            "three workers beating again",
            Duration::from_secs(30),
            || async move {
                let n: i64 =
                    sqlx::query_scalar("select count(*) from workers where heartbeat_at > $1")
                        .bind(restarted)
                        .fetch_one(pool)
                        .await?;
                Ok((n == 3).then_some(n))
            },
        )
        .await?;
    assert_eq!(beating, 3);
    // …the instances run again, and every message of both halves is processed.
    cluster.wait_for_claims(2, Duration::from_secs(30)).await?;
    h.wait_until_empty("work", Duration::from_secs(90)).await?;
    let texts = message_texts(&h.handler.requests());
    assert_eq!(texts.len(), 600);
    assert!(cluster.exited().is_empty(), "{:?} exited", cluster.exited());
    assert!(overlapping_actors(&h.handler.requests()).is_empty());
    drop(cluster);
    drop(h);
    server.stop().await?;
    Ok(())
}
