//! `maxConcurrency` across instances on several `shoal worker` processes: the handler never
//! sees more calls at once than the cap, the cap is used (throughput near cap / latency), and
//! a killed worker's slots come back to the others once its calls could have ended.

use std::time::{Duration, Instant};

use serde_json::json;
use shoal_testkit::handler::Behaviour;
use sqlx::Row;

use crate::processes::Cluster;
use crate::support::{APP, Harness, queue_trigger, tenant};
use crate::{enqueue_many, message_texts};

const CAP: usize = 5;
const LATENCY: Duration = Duration::from_millis(400);

/// `(worker, slots)` of every holder of the function's slots, by worker.
async fn holders(h: &Harness) -> anyhow::Result<Vec<(String, i32)>> {
    let mut tx = shoal_store::begin_tenant(&h.pool, &tenant()).await?;
    let rows = sqlx::query(
        "select worker, slots from concurrency_slots
         where app_name = $1 and function_name = 'work' order by worker",
    )
    .bind(APP)
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    rows.iter()
        .map(|r| Ok((r.try_get("worker")?, r.try_get("slots")?)))
        .collect()
}

#[tokio::test]
async fn max_concurrency_holds_across_instances_and_survives_a_killed_worker() -> anyhow::Result<()>
{
    let h = Harness::start(Behaviour::Delay(LATENCY, json!({}))).await?;
    h.put_app(
        json!({"extensions": {"queues": {"batchSize": 16, "maxPollingInterval": "00:00:01"}}}),
        json!({"scale": {"limit": 4, "minimumInstances": 4}}),
    )
    .await?;
    h.put_function_body(
        APP,
        "work",
        json!({"bindings": queue_trigger("work"), "maxConcurrency": CAP}),
    )
    .await?;
    let mut cluster = Cluster::new(&h);
    cluster.start_workers(4).await?;
    cluster.scheduler("s1");
    let placed = cluster
        .wait_for_placement(4, Duration::from_secs(20))
        .await?;
    cluster.wait_for_claims(4, Duration::from_secs(10)).await?;
    // Every instance holds its share before the messages come: 2, 1, 1, 1.
    let settled = cluster
        .until_value("the slots shared out", Duration::from_secs(20), || async {
            let now = holders(&h).await?;
            let mut shares: Vec<i32> = now.iter().map(|(_, s)| *s).collect();
            shares.sort_unstable();
            Ok((shares == [1, 1, 1, 2]).then_some(now))
        })
        .await?;
    eprintln!("slots: {settled:?}");

    // The bound holds and the cap is used: throughput within 20 % of cap / latency.
    let n = 150;
    enqueue_many(&h, "work", n, "a").await?;
    let requests = h.handler.wait_for(n, Duration::from_secs(60)).await?;
    let first = requests.iter().map(|r| r.at).min().expect("requests");
    let last = requests.iter().map(|r| r.at).max().expect("requests");
    let took = (last - first) + LATENCY;
    let ideal = LATENCY.mul_f64(n as f64 / CAP as f64);
    eprintln!(
        "{n} messages in {took:?} (ideal {ideal:?}); at most {} at once",
        h.handler.max_concurrent()
    );
    assert_eq!(
        h.handler.max_concurrent(),
        CAP,
        "the cap is reached, never passed"
    );
    assert!(
        took.as_secs_f64() <= ideal.as_secs_f64() / 0.8,
        "{n} calls of {LATENCY:?} under a cap of {CAP} took {took:?}, more than 1/0.8 of {ideal:?}"
    );

    // A killed worker's slots stay taken (its calls may still run at the handler) until its
    // lease and its calls' timeout have passed; then the others share the whole cap again.
    let victim = placed[0].1.clone();
    cluster.kill_worker(&victim);
    let killed = Instant::now();
    enqueue_many(&h, "work", n, "b").await?;
    let (regained, after) = cluster
        .until_value(
            "the killed worker's slots shared out",
            Duration::from_secs(60),
            || async {
                let now = holders(&h).await?;
                let total: i32 = now.iter().map(|(_, s)| *s).sum();
                Ok(
                    (!now.iter().any(|(w, _)| *w == victim) && total == CAP as i32)
                        .then(|| (now, killed.elapsed())),
                )
            },
        )
        .await?;
    eprintln!("after the kill: {regained:?} after {after:?}");
    // Lease 15 s + handler timeout 5 s, less the time the kill came after the last renewal.
    assert!(
        after >= Duration::from_secs(12),
        "the dead worker's slots were given away after {after:?}, before its calls could have ended"
    );
    h.wait_until_empty("work", Duration::from_secs(90)).await?;
    let requests = h.handler.wait_for(2 * n, Duration::from_secs(30)).await?;
    assert_eq!(message_texts(&requests).len(), 2 * n);
    assert_eq!(
        h.handler.max_concurrent(),
        CAP,
        "never more than the cap, kill or not"
    );
    Ok(())
}
