use std::time::Duration;

use serde_json::json;
use shoal_testkit::handler::Behaviour;

use crate::support::*;

/// With `maxPollingInterval` 1 s an idle listener's waits grow 200, 300, 500, 900 ms and then
/// stay at 1 s: over a 6-second window after the ramp it polls about six times, not the
/// dozens a fixed 100 ms poll would make.
#[tokio::test]
async fn idle_listener_backs_off_to_max_polling_interval() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    h.put_app(
        json!({"extensions": {"queues": {"maxPollingInterval": "00:00:01"}}}),
        json!({}),
    )
    .await?;
    h.put_function("idle", queue_trigger("quiet")).await?;
    h.queue("quiet").create_if_missing().await?;
    let polls = |h: &Harness| {
        h.azurite
            .requests_matching(|l| l.contains("GET /devstoreaccount1/quiet/messages"))
    };
    let worker = h.start_worker(h.worker_config("w1"))?;
    h.azurite
        .wait_for_requests(1, Duration::from_secs(10), |l| {
            l.contains("GET /devstoreaccount1/quiet/messages")
        })
        .await?;
    // Past the ramp (0.2 + 0.3 + 0.5 + 0.9 s, each ±20 %).
    tokio::time::sleep(Duration::from_secs(3)).await;
    let start = polls(&h);
    tokio::time::sleep(Duration::from_secs(6)).await;
    let in_window = polls(&h) - start;
    assert!(
        (4..=8).contains(&in_window),
        "expected about one poll a second, saw {in_window} in 6 s"
    );
    let report = &worker.stats.reports()[0];
    assert_eq!(report.current_backoff_ms, 1000);
    assert!(report.last_poll.is_some());

    // A message resets the back-off: it is picked up within about a second, not the minute
    // Azure's default would allow.
    h.enqueue("quiet", &base64("wake up")).await?;
    h.handler.wait_for(1, Duration::from_secs(3)).await?;
    worker.shut_down().await?;
    Ok(())
}
