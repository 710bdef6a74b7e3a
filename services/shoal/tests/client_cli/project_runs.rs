//! The imported sample project runs end to end: `shoal app import` writes it into a real stack
//! (`serve`, `scheduler` and `worker` processes on Postgres) with the project's connection
//! settings pointed at Azurite and the local Service Bus stand-in; a message on the storage
//! queue, one on the Service Bus queue, a call through the webhook ingress and the timer each
//! reach the handler as the function they belong to, with their payload.

use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};
use shoal_connectors::{ConnectorOptions, ServiceBusNamespace, StorageQueues};
use shoal_domain::service_bus_trigger::OutgoingMessage;
use shoal_local_bus::{LocalBus, LocalBusConfig};
use shoal_testkit::azurite::Azurite;
use shoal_testkit::handler::{Behaviour, Recorded, RecordingHandler};

use super::harness::{Server, TENANT, User};
use super::project::{path, sample_copy};

/// How long each function may take to be invoked once its event is there (listeners start
/// after the scheduler has placed the app on the worker).
const WAIT: Duration = Duration::from_secs(60);

/// The handler: the HTTP function answers `pong`; the others return nothing.
fn answer(request: &Value) -> Value {
    if request["Data"]["req"].is_object() {
        json!({"ReturnValue": {"statusCode": "200", "body": "pong"}})
    } else {
        json!({})
    }
}

/// The first request the handler saw for `function`.
async fn invocation_of(handler: &RecordingHandler, function: &str) -> Recorded {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let requests = handler.requests();
        if let Some(request) = requests.iter().find(|r| r.function == function) {
            return request.clone();
        }
        let seen: Vec<&str> = requests.iter().map(|r| r.function.as_str()).collect();
        assert!(
            tokio::time::Instant::now() < deadline,
            "{function} was not invoked within {WAIT:?}; the handler saw {seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The sample's `local.settings.json` with its connections pointed at the running emulators,
/// as a user edits it to run the project locally.
fn point_connections_at(project: &std::path::Path, storage: &str, service_bus: &str) {
    let file = project.join("local.settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    settings["Values"]["AzureWebJobsStorage"] = json!(storage);
    settings["Values"]["ServiceBusConnection"] = json!(service_bus);
    std::fs::write(&file, serde_json::to_string_pretty(&settings).unwrap()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_imported_samples_queue_service_bus_http_and_timer_functions_run() {
    let server = Server::start().await;
    let azurite = Azurite::start().await.unwrap();
    let namespace = json!({"UserConfig": {"Namespaces": [{"Name": "sample",
        "Queues": [{"Name": "myqueue", "Properties": {}}], "Topics": []}]}});
    let bus = LocalBus::start(LocalBusConfig::from_json(&namespace.to_string()).unwrap())
        .await
        .unwrap();
    let handler = RecordingHandler::start(Behaviour::RespondBy(answer))
        .await
        .unwrap();

    let (_keep, project) = sample_copy();
    point_connections_at(
        &project,
        &azurite.connection_string(),
        &bus.connection_string(),
    );
    // The sample's timer fires every five minutes; every two seconds keeps the wait short.
    let timer_file = project.join("TimerTrigger/function.json");
    let timer = std::fs::read_to_string(&timer_file).unwrap();
    assert!(timer.contains("0 */5 * * * *"), "{timer}");
    std::fs::write(&timer_file, timer.replace("0 */5 * * * *", "*/2 * * * * *")).unwrap();

    let user = User::owner_of(&server);
    user.run(&[
        "app",
        "import",
        path(&project),
        "--app",
        "shop",
        "--handler-url",
        handler.url().as_str(),
    ])
    .ok();
    let _roles = server.start_roles();

    // A producer's message on each queue, with the emulators' own connection strings.
    let queues = StorageQueues::from_connection_string(
        &azurite.connection_string(),
        &ConnectorOptions::default(),
    )
    .unwrap();
    let queue = queues.queue("test-input-custom").unwrap();
    queue.create_if_missing().await.unwrap();
    let encoded = base64::engine::general_purpose::STANDARD.encode("order 1001");
    queue.enqueue(&encoded).await.unwrap();
    let namespace = ServiceBusNamespace::from_connection_string(
        &bus.connection_string(),
        &ConnectorOptions::default(),
    )
    .await
    .unwrap();
    let mut sender = namespace.sender("myqueue").await.unwrap();
    sender
        .send(&[OutgoingMessage {
            body: b"order 1002".to_vec(),
            ..OutgoingMessage::default()
        }])
        .await
        .unwrap();
    sender.close().await.unwrap();

    let queued = invocation_of(&handler, "QueueTrigger").await;
    assert_eq!(
        queued.body["Data"]["myQueueItem"], "order 1001",
        "{}",
        queued.body
    );
    let bused = invocation_of(&handler, "ServiceBusTrigger").await;
    assert_eq!(
        bused.body["Data"]["myQueueItem"], "order 1002",
        "{}",
        bused.body
    );
    assert_eq!(bused.body["Metadata"]["DeliveryCount"], 1, "{}", bused.body);
    let ticked = invocation_of(&handler, "TimerTrigger").await;
    let info = &ticked.body["Data"]["pollingTrigger"];
    assert!(
        info["IsPastDue"].is_boolean() && info["Schedule"].is_object(),
        "a TimerInfo: {}",
        ticked.body
    );

    // The HTTP function, through the webhook ingress, to a caller allowed to invoke it.
    let invoker = server.token("caller", "Function Invoker");
    let response = reqwest::Client::new()
        .post(format!(
            "{}/webhooks/{TENANT}/shop/HttpTrigger",
            server.base
        ))
        .bearer_auth(&invoker)
        .body("ping")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "pong");
    let called = invocation_of(&handler, "HttpTrigger").await;
    assert_eq!(
        called.body["Data"]["req"]["Method"], "POST",
        "{}",
        called.body
    );
    assert_eq!(
        called.body["Data"]["req"]["Body"], "ping",
        "{}",
        called.body
    );

    // Nothing reached the handler as a function the project does not run (its blob function).
    for request in handler.requests() {
        assert!(
            [
                "QueueTrigger",
                "ServiceBusTrigger",
                "TimerTrigger",
                "HttpTrigger"
            ]
            .contains(&request.function.as_str()),
            "{}: {}",
            request.function,
            request.body
        );
    }
}
