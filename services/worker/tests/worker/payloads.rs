//! What the handler receives and answers beyond plain text: outputs it sets that the function
//! does not declare, and message bodies that are bytes rather than text.

use std::time::Duration;

use serde_json::json;
use shoal_testkit::handler::Behaviour;

use crate::support::*;

const WAIT: Duration = Duration::from_secs(20);

/// Azure's host reads only the declared output bindings from `Outputs`; Shoal does the same
/// instead of failing the invocation (which, with `maxDequeueCount` 1, would poison the message
/// at once). The undeclared names are counted in the listener's report for diagnostics.
#[tokio::test]
async fn outputs_naming_no_output_binding_are_ignored_and_reported() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({
        "Outputs": {"done": "shipped", "receipt": {"id": 7}, "audit": "x"}
    })))
    .await?;
    h.put_app(
        json!({"extensions": {"queues": {"maxDequeueCount": 1, "messageEncoding": "none"}}}),
        json!({}),
    )
    .await?;
    h.put_function(
        "ship",
        json!([
            {"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "orders"},
            {"type": "queue", "direction": "out", "name": "done", "queueName": "shipped"}
        ]),
    )
    .await?;
    for i in 0..3 {
        h.enqueue("orders", &format!("order {i}")).await?;
    }
    let worker = h.start_worker(h.worker_config("w1"))?;

    let out = h.wait_for_messages("shipped", 3, WAIT).await?;
    assert!(
        out.iter().all(|m| m.text == "shipped"),
        "declared outputs are written"
    );
    h.wait_until_empty("orders", WAIT).await?;
    assert_eq!(
        h.handler.count(),
        3,
        "each message once: nothing was retried"
    );
    let poison = h.queue("orders-poison").approximate_length().await;
    assert!(
        matches!(
            poison,
            Err(shoal_connectors::QueueError::QueueNotFound { .. })
        ),
        "nothing was poisoned: {poison:?}"
    );
    let report = worker
        .stats
        .reports()
        .into_iter()
        .find(|r| r.function == "ship")
        .expect("a listener for ship");
    assert_eq!(
        (report.succeeded, report.failed, report.poisoned),
        (3, 0, 0)
    );
    assert_eq!(report.undeclared_outputs, 3);
    let mut names = report.undeclared_output_names.clone();
    names.sort();
    assert_eq!(names, ["audit", "receipt"]);
    worker.shut_down().await?;
    Ok(())
}

/// A base64 message whose bytes are not UTF-8, and any message of a `dataType: binary`
/// trigger, reach the handler as base64 of the bytes (the custom-handler protocol's form of
/// binary data) instead of failing into poison.
#[tokio::test]
async fn binary_bodies_reach_the_handler_as_base64() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    h.put_app(
        json!({"extensions": {"queues": {"maxDequeueCount": 1}}}),
        json!({}),
    )
    .await?;
    h.put_function("bytes", queue_trigger("raw-bytes")).await?;
    h.put_function(
        "binary",
        json!([{"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "binary-in", "dataType": "binary"}]),
    )
    .await?;
    let not_utf8 = base64_bytes(&[0xff, 0x00, 0x80, 0xfe, b'{']);
    h.enqueue("raw-bytes", &not_utf8).await?;
    h.enqueue("binary-in", &base64("hello")).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;

    let requests = h.handler.wait_for(2, WAIT).await?;
    let of = |function: &str| {
        requests
            .iter()
            .find(|r| r.function == function)
            .unwrap_or_else(|| panic!("{function} was invoked"))
    };
    let bytes = &of("bytes").body;
    assert_eq!(bytes["Data"]["msg"], not_utf8.as_str());
    assert_eq!(bytes["Metadata"]["QueueTrigger"], not_utf8.as_str());
    let binary = &of("binary").body;
    assert_eq!(
        binary["Data"]["msg"],
        base64("hello"),
        "dataType binary: the bytes, in base64, even when they are text"
    );
    h.wait_until_empty("raw-bytes", WAIT).await?;
    h.wait_until_empty("binary-in", WAIT).await?;
    for report in worker.stats.reports() {
        assert_eq!(
            (report.succeeded, report.failed, report.poisoned),
            (1, 0, 0),
            "{}",
            report.function
        );
    }
    worker.shut_down().await?;
    Ok(())
}

fn base64_bytes(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
