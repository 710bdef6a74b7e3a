use std::time::Duration;

use chrono::{DurationRound, TimeDelta, Utc};

use serde_json::json;
use shoal_domain::workers::WorkerState;
use shoal_store::{begin_platform, page::PageRequest, workers};
use shoal_testkit::handler::Behaviour;

use crate::support::*;

async fn worker_rows(h: &Harness) -> anyhow::Result<Vec<workers::WorkerRecord>> {
    let mut tx = begin_platform(&h.pool).await?;
    let page = workers::list(
        &mut tx,
        &PageRequest {
            limit: 10,
            after: None,
        },
    )
    .await?;
    shoal_store::commit(tx).await?;
    Ok(page.items)
}

#[tokio::test]
async fn heartbeats_carry_listener_statistics_and_metrics_show_them() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    h.put_app(json!({}), json!({})).await?;
    h.put_function("count", queue_trigger("counted")).await?;
    // A function whose connection does not resolve: reported, not listening.
    h.put_function(
        "broken",
        json!([{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "xyz", "connection": "Missing"}]),
    )
    .await?;
    for i in 0..3 {
        h.enqueue("counted", &base64(&format!("m{i}"))).await?;
    }
    let worker = h.start_worker(h.worker_config("w-observed"))?;
    h.handler.wait_for(3, Duration::from_secs(20)).await?;

    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let row = loop {
        let rows = worker_rows(&h).await?;
        if let Some(row) = rows.into_iter().find(|r| r.name == "w-observed")
            && row
                .listeners
                .iter()
                .any(|l| l.function == "count" && l.succeeded == 3)
        {
            break row;
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "no heartbeat with the statistics"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(row.state, WorkerState::Running);
    assert!(row.alive);
    assert_eq!(
        (row.capacity, row.lease_ttl),
        (100, Duration::from_secs(10)),
        "the defaults the scheduler places by"
    );
    // What a listener holds at once, which the scheduler counts a RabbitMQ instance as taking.
    let mut tx = begin_platform(&h.pool).await?;
    let live = workers::live(&mut tx).await?;
    shoal_store::commit(tx).await?;
    let observed = live.iter().find(|w| w.name == "w-observed").unwrap();
    assert_eq!(
        observed.hold_limit,
        Some(h.worker_config("w-observed").held_messages())
    );
    assert_eq!(observed.hold_limit, Some(32), "at the default limits");
    let count = row
        .listeners
        .iter()
        .find(|l| l.function == "count")
        .unwrap();
    assert_eq!(
        (
            count.tenant.as_str(),
            count.app.as_str(),
            count.source.as_str()
        ),
        (TENANT, APP, "counted")
    );
    assert_eq!(
        (
            count.received,
            count.failed,
            count.poisoned,
            count.in_flight
        ),
        (3, 0, 0, 0)
    );
    assert_eq!(count.status, "listening");
    let broken = row
        .listeners
        .iter()
        .find(|l| l.function == "broken")
        .unwrap();
    assert!(
        broken.status.starts_with("stopped:") && broken.status.contains("AzureWebJobsMissing"),
        "{}",
        broken.status
    );

    // The same statistics as Prometheus series.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    let stop = tokio_util::sync::CancellationToken::new();
    let server = tokio::spawn(shoal_worker::server::serve(
        listener,
        worker.stats.clone(),
        Vec::new(),
        stop.clone(),
    ));
    let text = reqwest::get(format!("http://127.0.0.1:{port}/metrics"))
        .await?
        .text()
        .await?;
    let line = text
        .lines()
        .find(|l| {
            l.starts_with("shoal_listener_messages_succeeded_total{")
                && l.contains("function=\"count\"")
        })
        .unwrap_or_else(|| panic!("no succeeded series in\n{text}"));
    assert!(line.ends_with(" 3"), "{line}");
    assert!(text.contains("shoal_listener_backoff_seconds{"));
    stop.cancel();
    server.await??;

    worker.shut_down().await?;
    let rows = worker_rows(&h).await?;
    assert_eq!(
        rows[0].state,
        WorkerState::Stopped,
        "the last heartbeat says it stopped cleanly"
    );
    Ok(())
}

#[tokio::test]
async fn shutdown_lets_in_flight_invocations_finish() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Delay(Duration::from_secs(2), json!({}))).await?;
    h.put_app(json!({}), json!({})).await?;
    h.put_function("slow", queue_trigger("drain")).await?;
    for i in 0..3 {
        h.enqueue("drain", &base64(&format!("m{i}"))).await?;
    }
    let worker = h.start_worker(h.worker_config("w1"))?;
    h.handler.wait_for(3, Duration::from_secs(20)).await?;
    let stats = worker.stats.clone();
    worker.shut_down().await?;
    // All three finished and were deleted before the worker stopped; nothing was released.
    assert_eq!(h.queue("drain").approximate_length().await?, 0);
    assert_eq!(h.handler.count(), 3);
    assert!(
        stats.reports().is_empty(),
        "listeners unregistered after the drain"
    );
    Ok(())
}

#[tokio::test]
async fn drain_deadline_releases_unfinished_messages_at_once() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Hang).await?;
    h.put_app(
        json!({}),
        json!({"handler": {"url": h.handler.url().as_str(), "timeoutSeconds": 600}}),
    )
    .await?;
    h.put_function("stuck", queue_trigger("stuck")).await?;
    h.enqueue("stuck", &base64("m")).await?;
    let mut config = h.worker_config("w1");
    config.drain_deadline = Duration::from_millis(500);
    let worker = h.start_worker(config)?;
    h.handler.wait_for(1, Duration::from_secs(20)).await?;
    worker.shut_down().await?;
    // Released with visibility 0, not left invisible for ten minutes.
    let again = h.queue("stuck").receive(1, Duration::from_secs(30)).await?;
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].dequeue_count, 2);
    Ok(())
}

#[tokio::test]
async fn handler_attempts_are_recorded_as_invocation_telemetry() -> anyhow::Result<()> {
    use shoal_store::invocation_telemetry;
    let h = Harness::start(Behaviour::Status(500)).await?;
    h.put_app(json!({}), json!({})).await?;
    h.put_function("ship", queue_trigger("refused")).await?;
    h.enqueue("refused", &base64("m")).await?;
    let _worker = h.start_worker(h.worker_config("w-telemetry"))?;
    h.handler.wait_for(1, Duration::from_secs(20)).await?;

    // Written by the worker's next flush (every second), not on the dispatch path.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let mut tx = shoal_store::begin_tenant(&h.pool, &tenant()).await?;
        let (first, last) = last_ten_minutes();
        let minutes =
            invocation_telemetry::minutes(&mut tx, &tenant(), APP, "ship", first, last).await?;
        let failures = invocation_telemetry::failures(&mut tx, &tenant(), APP, "ship", 10).await?;
        shoal_store::commit(tx).await?;
        let invocations: i64 = minutes.iter().map(|m| m.invocations).sum();
        let failed: i64 = minutes.iter().map(|m| m.failures).sum();
        if failed >= 1 && !failures.is_empty() {
            assert_eq!(invocations, failed, "every attempt failed");
            let buckets: i64 = minutes.iter().flat_map(|m| &m.duration_buckets).sum();
            assert_eq!(
                buckets, invocations,
                "each attempt's duration is in the histogram"
            );
            assert_eq!(failures[0].worker, "w-telemetry");
            assert!(failures[0].error.contains("500"), "{}", failures[0].error);
            break;
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "no invocation telemetry: {minutes:?} {failures:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Ok(())
}

#[tokio::test]
async fn every_attempt_goes_to_the_invocation_log_grouped_by_message() -> anyhow::Result<()> {
    use shoal_store::invocation_log::{Search, Status};
    let h = Harness::start(Behaviour::Status(500)).await?;
    h.put_app(json!({}), json!({})).await?;
    h.put_function("ship", queue_trigger("logged")).await?;
    h.enqueue("logged", &base64("{\"order\":42}")).await?;
    let _worker = h.start_worker(h.worker_config("w-log"))?;
    h.handler.wait_for(2, Duration::from_secs(30)).await?;

    // Redelivered by the queue (DequeueCount 2), still one invocation: its webhook-id is the
    // message's.
    let search = Search {
        limit: 10,
        ..Search::default()
    };
    let page = logged_until(&h, "ship", &search, |page| {
        page.items.first().is_some_and(|i| i.attempts.len() >= 2)
    })
    .await?;
    assert_eq!(page.items.len(), 1, "{page:?}");
    let inv = &page.items[0];
    assert_eq!(inv.status, Status::Failed);
    assert!(inv.message_id.is_some());
    assert_eq!(inv.payload_preview.as_deref(), Some("{\"order\":42}"));
    let counts: Vec<Option<i64>> = inv.attempts.iter().map(|a| a.delivery_count).collect();
    assert_eq!(counts[..2], [Some(1), Some(2)]);
    let first = &inv.attempts[0];
    assert_eq!(first.worker, "w-log");
    assert!(
        first.error.as_deref().is_some_and(|e| e.contains("500")),
        "{first:?}"
    );
    // Each attempt keeps the trace context its handler call carried: the `traceparent`'s
    // trace id and span id, in the order the handler received them.
    let sent: Vec<String> = h
        .handler
        .requests()
        .iter()
        .map(|r| {
            r.headers
                .get("traceparent")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    let kept: Vec<String> = inv
        .attempts
        .iter()
        .map(|a| {
            let t = a.trace.as_ref().expect("every new attempt has its trace");
            format!("00-{}-{}-", t.trace_id, t.span_id)
        })
        .collect();
    for (n, kept) in kept.iter().enumerate() {
        assert!(
            sent.get(n).is_some_and(|s| s.starts_with(kept.as_str())),
            "attempt {n} recorded {kept}, the handler got {sent:?}"
        );
    }
    Ok(())
}

/// The function's invocation log, read until `ready` says it shows what the test waits for
/// (the worker writes it once a second), for at most 20 s.
async fn logged_until(
    h: &Harness,
    function: &str,
    search: &shoal_store::invocation_log::Search,
    ready: impl Fn(&shoal_store::invocation_log::SearchPage) -> bool,
) -> anyhow::Result<shoal_store::invocation_log::SearchPage> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let mut tx = shoal_store::begin_tenant(&h.pool, &tenant()).await?;
        let page =
            shoal_store::invocation_log::search(&mut tx, &tenant(), APP, function, search).await?;
        shoal_store::commit(tx).await?;
        if ready(&page) {
            return Ok(page);
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "not in the invocation log: {page:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn a_worker_with_invocation_telemetry_off_records_none() -> anyhow::Result<()> {
    use shoal_store::invocation_telemetry;
    let h = Harness::start(Behaviour::Status(500)).await?;
    h.put_app(json!({}), json!({})).await?;
    h.put_function("ship", queue_trigger("untracked")).await?;
    for i in 0..3 {
        h.enqueue("untracked", &base64(&format!("m{i}"))).await?;
    }
    let mut config = h.worker_config("w-quiet");
    config.invocation_telemetry = false;
    let worker = h.start_worker(config)?;
    h.handler.wait_for(3, Duration::from_secs(20)).await?;
    // The attempts were made and counted as failed by the listener, whose counters stay on.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let failed: u64 = worker.stats.reports().iter().map(|r| r.failed).sum();
        if failed >= 3 {
            break;
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "the listener counted {failed} failures"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A worker flushes its telemetry once more when it stops: after this, it has written
    // everything it ever would.
    worker.shut_down().await?;

    let mut tx = shoal_store::begin_tenant(&h.pool, &tenant()).await?;
    let (first, last) = last_ten_minutes();
    let minutes =
        invocation_telemetry::minutes(&mut tx, &tenant(), APP, "ship", first, last).await?;
    let failures = invocation_telemetry::failures(&mut tx, &tenant(), APP, "ship", 10).await?;
    shoal_store::commit(tx).await?;
    // The series has every minute of the window; none of them counts an attempt.
    assert!(
        minutes
            .iter()
            .all(|m| m.invocations == 0 && m.failures == 0),
        "{minutes:?}"
    );
    assert!(failures.is_empty(), "{failures:?}");
    Ok(())
}

/// The last ten minutes, as the minute starts the store's series runs between.
fn last_ten_minutes() -> (chrono::DateTime<Utc>, chrono::DateTime<Utc>) {
    let last = Utc::now()
        .duration_trunc(TimeDelta::minutes(1))
        .expect("a minute divides the time");
    (last - TimeDelta::minutes(9), last)
}

#[tokio::test]
async fn a_successful_invocation_is_logged_with_the_handlers_logs() -> anyhow::Result<()> {
    use shoal_store::invocation_log::{Search, Status};
    let h = Harness::start(Behaviour::Respond(json!({"Logs": ["shipped order 42"]}))).await?;
    h.put_app(json!({}), json!({})).await?;
    h.put_function("ship", queue_trigger("fine")).await?;
    h.enqueue("fine", &base64("order 42")).await?;
    let _worker = h.start_worker(h.worker_config("w-ok"))?;
    h.handler.wait_for(1, Duration::from_secs(20)).await?;

    let search = Search {
        status: Some(Status::Succeeded),
        limit: 10,
        ..Search::default()
    };
    let page = logged_until(&h, "ship", &search, |page| !page.items.is_empty()).await?;
    let inv = &page.items[0];
    assert_eq!(inv.payload_preview.as_deref(), Some("order 42"));
    assert_eq!(inv.attempts.len(), 1);
    let attempt = &inv.attempts[0];
    assert_eq!(attempt.logs, ["shipped order 42"]);
    assert_eq!((attempt.retry_count, attempt.delivery_count), (0, Some(1)));
    assert_eq!(attempt.error, None);
    assert_eq!(attempt.worker, "w-ok");
    Ok(())
}
