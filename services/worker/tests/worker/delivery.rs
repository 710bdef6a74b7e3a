use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::json;
use shoal_testkit::handler::Behaviour;

use crate::support::*;

const WAIT: Duration = Duration::from_secs(20);

fn time(v: &serde_json::Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(v.as_str().expect("a time string"))
        .expect("RFC 3339")
        .with_timezone(&Utc)
}

#[tokio::test]
async fn delivers_message_with_metadata_signature_and_writes_output() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({
        "Outputs": {"done": {"order": 42, "status": "shipped"}},
        "Logs": ["handled order 42"],
        "ReturnValue": null
    })))
    .await?;
    h.put_app(json!({}), json!({})).await?;
    h.put_function(
        "ship",
        json!([
            {"type": "queueTrigger", "direction": "in", "name": "order", "queueName": "orders"},
            {"type": "queue", "direction": "out", "name": "done", "queueName": "shipped"}
        ]),
    )
    .await?;
    let text = r#"{"order": 42, "note": "ünïcødé"}"#;
    h.enqueue("orders", &base64(text)).await?;
    let before = Utc::now();
    let worker = h.start_worker(h.worker_config("w1"))?;

    let requests = h.handler.wait_for(1, WAIT).await?;
    let request = &requests[0];
    assert_eq!(request.function, "ship");
    let body = &request.body;
    assert_eq!(body["Data"]["order"], text, "decoded from base64");
    let meta = &body["Metadata"];
    assert_eq!(meta["QueueTrigger"], text);
    assert_eq!(meta["DequeueCount"], 1);
    assert_eq!(meta["sys"]["MethodName"], "ship");
    let id = meta["Id"].as_str().expect("Id");
    assert!(!id.is_empty());
    assert!(!meta["PopReceipt"].as_str().expect("PopReceipt").is_empty());
    let inserted = time(&meta["InsertionTime"]);
    let expires = time(&meta["ExpirationTime"]);
    let next_visible = time(&meta["NextVisibleTime"]);
    assert!(inserted <= Utc::now() && inserted >= before - chrono::TimeDelta::seconds(60));
    assert_eq!(
        expires - inserted,
        chrono::TimeDelta::days(7),
        "Azure's default time to live"
    );
    // Received invisible for the 10-minute invisibility.
    let invisible_for = next_visible - Utc::now();
    assert!(
        invisible_for > chrono::TimeDelta::minutes(9),
        "{invisible_for}"
    );

    // Standard Webhooks headers, verifiable with the secret the app's owner can read.
    assert_eq!(
        request.header("webhook-id"),
        Some(id),
        "webhook-id is the message id"
    );
    let timestamp: i64 = request
        .header("webhook-timestamp")
        .expect("timestamp")
        .parse()?;
    assert!((Utc::now().timestamp() - timestamp).abs() < 60);
    assert_eq!(request.header("x-shoal-worker"), Some("w1"));
    assert_eq!(request.header("x-shoal-instance"), Some("0"));
    let signature = request.header("webhook-signature").expect("signature");
    assert!(
        h.secret()
            .await?
            .verify(id, timestamp, &request.raw, signature)
    );
    let invocation = request
        .header("x-shoal-invocation-id")
        .expect("invocation id");
    uuid::Uuid::parse_str(invocation)?;

    // The output binding is written (base64, the app's encoding) and the trigger is deleted.
    let out = h.wait_for_messages("shipped", 1, WAIT).await?;
    assert_eq!(out.len(), 1);
    let written: serde_json::Value = serde_json::from_slice(&base64_decode(&out[0].text))?;
    assert_eq!(written, json!({"order": 42, "status": "shipped"}));
    h.wait_until_empty("orders", WAIT).await?;
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn none_encoding_passes_the_body_verbatim_and_return_value_feeds_return_binding()
-> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({"ReturnValue": ["a", {"b": 2}]}))).await?;
    h.put_app(
        json!({"extensions": {"queues": {"messageEncoding": "none"}}}),
        json!({}),
    )
    .await?;
    h.put_function(
        "echo",
        json!([
            {"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "plain"},
            {"type": "queue", "direction": "out", "name": "$return", "queueName": "echoed"}
        ]),
    )
    .await?;
    h.enqueue("plain", "not base64 at all!").await?;
    let worker = h.start_worker(h.worker_config("w1"))?;
    let requests = h.handler.wait_for(1, WAIT).await?;
    assert_eq!(requests[0].body["Data"]["msg"], "not base64 at all!");
    let mut out: Vec<String> = h
        .wait_for_messages("echoed", 2, WAIT)
        .await?
        .into_iter()
        .map(|m| m.text)
        .collect();
    out.sort();
    assert_eq!(
        out,
        vec!["a".to_owned(), "{\"b\":2}".to_owned()],
        "one message per array element, not encoded"
    );
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn concurrency_stays_within_batch_size_plus_threshold() -> anyhow::Result<()> {
    // Varying handler times, so in-flight work drains one message at a time.
    let h = Harness::start(Behaviour::RandomDelay(
        Duration::from_millis(50)..Duration::from_millis(600),
        json!({}),
    ))
    .await?;
    h.put_app(
        json!({"extensions": {"queues": {"batchSize": 4, "newBatchThreshold": 2, "messageEncoding": "none"}}}),
        json!({}),
    )
    .await?;
    h.put_function("slow", queue_trigger("work")).await?;
    for i in 0..40 {
        h.enqueue("work", &format!("job {i}")).await?;
    }
    let worker = h.start_worker(h.worker_config("w1"))?;
    h.handler.wait_for(40, Duration::from_secs(60)).await?;
    h.wait_until_empty("work", WAIT).await?;
    let max = h.handler.max_concurrent();
    assert!(
        max <= 6,
        "at most batchSize + newBatchThreshold = 6 at once, saw {max}"
    );
    assert!(
        max >= 5,
        "the next batch is fetched at the threshold, so more than one batch runs at once; saw {max}"
    );
    assert_eq!(
        h.handler.overlapping_deliveries(),
        0,
        "never the same message twice at once"
    );
    assert_eq!(h.handler.count(), 40, "each message exactly once");
    worker.shut_down().await?;
    Ok(())
}

/// Two functions of one app, each with `batchSize` 2 + `newBatchThreshold` 1 = 3: each fills
/// its own three slots at the same time (6 at once), so the limit is per function, not shared.
/// Per function the first message is quick and the rest slow: the quick one frees a slot, the
/// next batch of two is fetched at the threshold, and three slow ones then run together.
#[tokio::test]
async fn each_function_has_its_own_batch_size_plus_threshold() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::DelayBy(
        |body| {
            if body["Data"]["msg"]
                .as_str()
                .is_some_and(|m| m.starts_with("quick"))
            {
                Duration::ZERO
            } else {
                Duration::from_secs(4)
            }
        },
        json!({}),
    ))
    .await?;
    h.put_app(
        json!({"extensions": {"queues": {"batchSize": 2, "newBatchThreshold": 1, "messageEncoding": "none"}}}),
        json!({"handler": {"url": h.handler.url().as_str(), "timeoutSeconds": 30}}),
    )
    .await?;
    h.put_function("first", queue_trigger("first-work")).await?;
    h.put_function("second", queue_trigger("second-work"))
        .await?;
    for queue in ["first-work", "second-work"] {
        h.enqueue(queue, "quick").await?;
        for i in 0..5 {
            h.enqueue(queue, &format!("slow {i}")).await?;
        }
    }
    let worker = h.start_worker(h.worker_config("w1"))?;

    let deadline = tokio::time::Instant::now() + WAIT;
    while h.handler.running_of("first") + h.handler.running_of("second") < 6 {
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "never both at their limit: first {} running, second {}",
            h.handler.running_of("first"),
            h.handler.running_of("second")
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    h.handler.wait_for(12, Duration::from_secs(60)).await?;
    h.wait_until_empty("first-work", WAIT).await?;
    h.wait_until_empty("second-work", WAIT).await?;
    for function in ["first", "second"] {
        assert_eq!(
            h.handler.max_concurrent_of(function),
            3,
            "{function}: batchSize + newBatchThreshold"
        );
    }
    assert_eq!(h.handler.max_concurrent(), 6);
    assert_eq!(h.handler.count(), 12, "each message exactly once");
    worker.shut_down().await?;
    Ok(())
}

fn base64_decode(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .expect("base64")
}

/// A function whose trigger nothing in Shoal runs (cosmosDBTrigger) gets no listener and no
/// statistics line beside the app's running functions: a "stopped" line would turn the whole
/// app's health into an error for a function that, as its diagnostics say, runs nowhere.
#[tokio::test]
async fn a_trigger_nothing_runs_gets_no_listener_line_beside_running_ones() -> anyhow::Result<()> {
    use crate::service_bus_support::wait_for_line;
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    h.put_app(json!({}), json!({})).await?;
    h.put_function("ship", queue_trigger("orders")).await?;
    h.put_function_body(
        APP,
        "changes",
        json!({"bindings": [{"type": "cosmosDBTrigger", "direction": "in", "name": "docs",
            "databaseName": "db", "containerName": "items", "connection": "Cosmos"}]}),
    )
    .await?;
    let worker = h.start_worker(h.worker_config("w1"))?;
    wait_for_line(&worker, "ship", |r| r.status == "listening").await?;
    let functions: Vec<String> = worker
        .stats
        .reports()
        .into_iter()
        .map(|r| format!("{}: {}", r.function, r.status))
        .collect();
    assert_eq!(functions, vec!["ship: listening".to_owned()]);
    worker.shut_down().await?;
    Ok(())
}

/// A queue name is resolved as Azure's queue extension resolves it: `%Setting%` references
/// anywhere in it (`INameResolver.ResolveWholeString`), then lower-cased
/// (`QueueTriggerAttributeBindingProvider.NormalizeAndValidate`): `Jobs-%Env%` with `Env`
/// = `Blue` listens to `jobs-blue`, and an output written `Receipts-%Env%` writes to
/// `receipts-blue`.
#[tokio::test]
async fn queue_names_take_settings_anywhere_and_any_case() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({"Outputs": {"receipt": "done"}}))).await?;
    let mut settings = h.storage_settings();
    settings["Env"] = json!("Blue");
    h.put_app(json!({}), json!({"appSettings": settings}))
        .await?;
    h.put_function(
        "ship",
        json!([
            {"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "Jobs-%Env%"},
            {"type": "queue", "direction": "out", "name": "receipt", "queueName": "Receipts-%Env%"}
        ]),
    )
    .await?;
    h.enqueue("jobs-blue", &base64("job")).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;
    let receipts = h.wait_for_messages("receipts-blue", 1, WAIT).await?;
    assert_eq!(receipts.len(), 1);
    let request = &h.handler.requests()[0];
    assert_eq!(request.body["Data"]["msg"], "job");
    worker.shut_down().await?;
    Ok(())
}
