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
    // Past the ramp (0.2 + 0.3 + 0.5 + 0.9 s, each ±20 %): the wait has reached the maximum.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while worker.stats.reports().first().map(|r| r.current_backoff_ms) != Some(1000) {
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "the back-off never reached 1 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let start = polls(&h);
    // The measurement window: polls are counted over a fixed span of time.
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

/// A function writing to the queue another function of this worker listens to wakes that
/// listener at once, as Azure's host does, instead of leaving the message for its back-off.
#[tokio::test]
async fn output_to_a_watched_queue_wakes_its_listener() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({"Outputs": {"next": "step two"}}))).await?;
    // The first function's app polls at least every 200 ms; the second's backs off to a minute.
    h.put_app_named(
        "eager",
        json!({"extensions": {"queues": {"maxPollingInterval": "00:00:00.200"}}}),
        json!({}),
    )
    .await?;
    h.put_function_in(
        "eager",
        "first",
        json!([
            {"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "stage-one"},
            {"type": "queue", "direction": "out", "name": "next", "queueName": "stage-two"}
        ]),
    )
    .await?;
    h.put_app_named(
        "patient",
        json!({"extensions": {"queues": {"maxPollingInterval": "00:01:00"}}}),
        json!({}),
    )
    .await?;
    h.put_function_in("patient", "second", queue_trigger("stage-two"))
        .await?;
    h.queue("stage-one").create_if_missing().await?;
    h.queue("stage-two").create_if_missing().await?;
    let worker = h.start_worker(h.worker_config("w1"))?;

    // Wait until the second listener has just polled with a back-off of at least 3 s: its next
    // poll of its own accord is then at least 2.5 s away.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let reports = worker.stats.reports();
        if let Some(second) = reports.iter().find(|r| r.function == "second")
            && second.current_backoff_ms >= 3000
            && second
                .last_poll
                .is_some_and(|t| chrono::Utc::now() - t < chrono::TimeDelta::milliseconds(500))
        {
            break;
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "the back-off never grew"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let sent = tokio::time::Instant::now();
    h.queue("stage-one").enqueue(&base64("step one")).await?;
    let requests = h.handler.wait_for(2, Duration::from_secs(70)).await?;
    let second = requests
        .iter()
        .find(|r| r.function == "second")
        .expect("second ran");
    let delay = second.at - sent;
    assert!(
        delay < Duration::from_millis(2000),
        "the second function ran {delay:?} after the first message was sent; without the wake-up it waits out its back-off"
    );
    worker.shut_down().await?;
    Ok(())
}
