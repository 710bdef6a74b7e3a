//! The issue's own case: a handler down for a minute while 200 queue messages and 200 Service
//! Bus messages arrive, with the breaker's default settings. Once it is back, every message is
//! processed exactly once with its dequeue or delivery count still 1, and nothing is poisoned or
//! dead-lettered.

use std::time::{Duration, Instant};

use serde_json::json;
use shoal_domain::circuit_breaker::{BreakerCause, BreakerState};
use shoal_testkit::handler::{Behaviour, RecordingHandler};

use crate::service_bus_support::{Bus, namespace, queue, queue_entity, trigger};
use crate::support::{APP, Harness, base64, queue_trigger};
use crate::worker_processes::spawn_worker;
use crate::{FUNCTION, by_message, poisoned, wait_for_state};

const WAVES: usize = 10;
const PER_WAVE: usize = 20;
const WAVE_EVERY: Duration = Duration::from_secs(6);

#[tokio::test]
async fn a_minute_long_outage_under_load_costs_no_message() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    let (port, down) = RecordingHandler::closed_port().await?;
    let bus = Bus::start(namespace(
        json!([queue_entity("orders", json!({"MaxDeliveryCount": 3}))]),
        json!([]),
    ))
    .await?;
    h.put_app(
        json!({"extensions": {"queues": {"maxDequeueCount": 2}}}),
        json!({
            "handler": {"url": down.as_str(), "timeoutSeconds": 5},
            "appSettings": {
                "AzureWebJobsStorage": h.azurite.connection_string(),
                "AzureWebJobsServiceBus": bus.connection_string(),
            }
        }),
    )
    .await?;
    h.put_function_body(APP, FUNCTION, json!({"bindings": queue_trigger("jobs")}))
        .await?;
    h.put_function_body(
        APP,
        "orders",
        json!({"bindings": trigger(json!({"queueName": "orders"}))}),
    )
    .await?;
    h.queue("jobs").create_if_missing().await?;
    let _worker = spawn_worker(&h, "w-under-load");

    // The messages arrive in waves across the minute the handler is down.
    let down_since = Instant::now();
    for wave in 0..WAVES {
        for i in 0..PER_WAVE {
            h.enqueue("jobs", &base64(&format!("q-{wave}-{i}"))).await?;
        }
        let texts: Vec<String> = (0..PER_WAVE).map(|i| format!("sb-{wave}-{i}")).collect();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        bus.send_text("orders", &texts).await?;
        tokio::time::sleep(WAVE_EVERY).await;
    }
    let opened = wait_for_state(&h, BreakerState::Open, Duration::from_secs(5)).await?;
    assert_eq!(opened.cause, Some(BreakerCause::HandlerUnreachable));
    eprintln!("handler down for {:?}", down_since.elapsed());

    let handler = RecordingHandler::start_on(port, Behaviour::Respond(json!({}))).await?;
    let total = 2 * WAVES * PER_WAVE;
    handler.wait_for(total, Duration::from_secs(90)).await?;
    h.wait_until_empty("jobs", Duration::from_secs(30)).await?;
    let deadline = Instant::now() + Duration::from_secs(30);
    while !bus.is_empty(&queue("orders")).await? {
        anyhow::ensure!(Instant::now() < deadline, "orders not empty");
    }
    // Nothing comes back later: every message was settled after its one invocation.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let requests = handler.requests();
    let by = by_message(&requests);
    assert_eq!(by.len(), total, "every message reached the handler");
    for (text, calls) in &by {
        assert_eq!(calls.len(), 1, "{text} processed exactly once");
        let count = if text.starts_with("q-") {
            "DequeueCount"
        } else {
            "DeliveryCount"
        };
        assert_eq!(
            calls[0].body["Metadata"][count], 1,
            "{text}: the outage raised its {count}"
        );
    }
    assert_eq!(poisoned(&h, "jobs").await?, 0, "nothing poisoned");
    let mut dead = bus.client.dead_letter_receiver(&queue("orders")).await?;
    let dead_letters = dead.receive(10, Duration::from_millis(500)).await?;
    assert!(dead_letters.is_empty(), "nothing dead-lettered");
    Ok(())
}
