//! Output names with binding expressions, end to end against Azurite with a `shoal worker`
//! process: a queue-triggered function's `out-{Id}` and `{region}-%Env%` outputs write to the
//! queues the message's id and JSON body name; a name that resolves to no valid queue fails
//! the invocation, and the message takes the poison path with its body intact.

#[path = "support/host_identity.rs"]
mod host_identity;
#[path = "../../worker/tests/worker/support.rs"]
#[allow(dead_code)]
mod support;
#[path = "support/worker_processes.rs"]
mod worker_processes;

use std::time::Duration;

use base64::Engine as _;
use serde_json::json;
use shoal_testkit::handler::Behaviour;
use support::{Harness, base64};
use worker_processes::{signal, spawn_worker, wait_exit};

const WAIT: Duration = Duration::from_secs(30);

fn decoded(text: &str) -> String {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .expect("base64, the app's messageEncoding");
    String::from_utf8(bytes).expect("UTF-8")
}

#[tokio::test]
async fn outputs_go_to_the_queues_their_expressions_name() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({
        "Outputs": {"byId": "by id", "byRegion": "by region"}
    })))
    .await?;
    let mut settings = h.storage_settings();
    settings["Env"] = json!("Prod");
    h.put_app(json!({}), json!({"appSettings": settings}))
        .await?;
    h.put_function(
        "route",
        json!([
            {"type": "queueTrigger", "direction": "in", "name": "order", "queueName": "orders"},
            {"type": "queue", "direction": "out", "name": "byId", "queueName": "out-{Id}"},
            {"type": "queue", "direction": "out", "name": "byRegion", "queueName": "{region}-%Env%"}
        ]),
    )
    .await?;
    h.enqueue("orders", &base64(r#"{"region": "EU", "total": 12}"#))
        .await?;

    let worker = spawn_worker(&h, "w-expressions");
    let requests = h.handler.wait_for(1, WAIT).await?;
    let id = requests[0].body["Metadata"]["Id"]
        .as_str()
        .expect("the message id")
        .to_owned();

    // Azure lower-cases a resolved queue name; the id is a GUID.
    let by_id = h
        .wait_for_messages(&format!("out-{}", id.to_ascii_lowercase()), 1, WAIT)
        .await?;
    assert_eq!(decoded(&by_id[0].text), "by id");
    let by_region = h.wait_for_messages("eu-prod", 1, WAIT).await?;
    assert_eq!(decoded(&by_region[0].text), "by region");
    h.wait_until_empty("orders", WAIT).await?;

    signal(worker.child(), "-TERM");
    assert!(wait_exit(worker.take(), WAIT).await.success());
    Ok(())
}

#[tokio::test]
async fn a_name_that_resolves_to_no_valid_queue_fails_into_poison() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({"Outputs": {"routed": "x"}}))).await?;
    // One attempt, so the failure goes to the poison queue at once.
    h.put_app(
        json!({"extensions": {"queues": {"maxDequeueCount": 1}}}),
        json!({}),
    )
    .await?;
    h.put_function(
        "route",
        json!([
            {"type": "queueTrigger", "direction": "in", "name": "order", "queueName": "incoming"},
            {"type": "queue", "direction": "out", "name": "routed", "queueName": "to-{region}"}
        ]),
    )
    .await?;
    let body = r#"{"region": "not a queue!"}"#;
    h.enqueue("incoming", &base64(body)).await?;

    let worker = spawn_worker(&h, "w-bad-name");
    h.handler.wait_for(1, WAIT).await?;
    let poisoned = h.wait_for_messages("incoming-poison", 1, WAIT).await?;
    assert_eq!(decoded(&poisoned[0].text), body, "the body is intact");
    h.wait_until_empty("incoming", WAIT).await?;

    signal(worker.child(), "-TERM");
    assert!(wait_exit(worker.take(), WAIT).await.success());
    Ok(())
}
