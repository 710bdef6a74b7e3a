//! A queue-triggered function's poison queue through the API, against real Azurite and a real
//! worker: messages a failing handler poisoned are shown (bodies only to callers who may read
//! the app's settings), moved back by id or by count with their bodies intact once the handler
//! works, and processed; the wrong role gets 403, bad requests 422 with their field paths.

use std::collections::BTreeSet;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_api::identity::Role;
use shoal_connectors::{ConnectorOptions, QueueError, StorageQueues};
use shoal_store::crypto::Cipher;
use shoal_store::pool::{PoolConfig, connect_lazy};
use shoal_testkit::azurite::Azurite;
use shoal_testkit::handler::{Behaviour, RecordingHandler};
use shoal_worker::{Hosting, Worker, WorkerConfig};
use tokio_util::sync::CancellationToken;

use crate::helpers::{Fetch, TestApp, error_paths, problem};

const POISON: &str = "/v1/tenants/contoso/apps/orders/functions/process/poison";

async fn wait_for_length(queues: &StorageQueues, queue: &str, n: u64) {
    let queue = queues.queue(queue).unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let length = match queue.approximate_length().await {
            Ok(length) => length,
            Err(QueueError::QueueNotFound { .. }) => 0,
            Err(e) => panic!("{e}"),
        };
        if length == n {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} holds {length} messages, expected {n}",
            queue.name()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn text(i: usize) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(format!("order {i}"))
}

#[tokio::test]
async fn poisoned_messages_are_shown_replayed_and_processed() {
    let api = TestApp::spawn().await;
    let azurite = Azurite::start().await.unwrap();
    let handler = RecordingHandler::start(Behaviour::Status(500))
        .await
        .unwrap();
    api.put_tenant("contoso").await;
    let put = api
        .put_app(
            "contoso",
            "orders",
            &json!({
                "handler": {"url": handler.url().as_str()},
                "appSettings": {"AzureWebJobsStorage": azurite.connection_string()},
                "hostConfig": {"version": "2.0", "extensions": {"queues": {"maxDequeueCount": 1}}},
            }),
        )
        .await;
    assert_eq!(put.status(), StatusCode::CREATED, "{:?}", put.text().await);
    let put = api
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/apps/orders/functions/process",
        )
        .json(&json!({
            "bindings": [{"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "jobs"}],
            "circuitBreaker": {"enabled": false},
        }))
        .fetch()
        .await;
    assert_eq!(put.status(), StatusCode::CREATED);
    let queues = StorageQueues::from_connection_string(
        &azurite.connection_string(),
        &ConnectorOptions::default(),
    )
    .unwrap();
    let jobs = queues.queue("jobs").unwrap();
    jobs.create_if_missing().await.unwrap();
    for i in 0..3 {
        jobs.enqueue(&text(i)).await.unwrap();
    }
    let mut config = WorkerConfig::new("w1");
    config.egress = crate::helpers::loopback_egress();
    config.hosting = Hosting::AllApps;
    config.refresh_interval = Duration::from_millis(200);
    let pool = connect_lazy(&api.database_url, &PoolConfig::default()).unwrap();
    let stop = CancellationToken::new();
    let worker = Worker::new(config, pool, Cipher::new(&api.secret_key))
        .start(stop.clone())
        .unwrap();
    wait_for_length(&queues, "jobs-poison", 3).await;

    // Readers see the depth and ids, not the bodies; Contributors (settings readers) see both.
    let reader = api.token_for("contoso", Role::Reader);
    let contributor = api.token_for("contoso", Role::Contributor);
    let invoker = api.token_for("contoso", Role::FunctionInvoker);
    let seen: Value = api
        .request(Method::GET, &format!("{POISON}?top=5"), Some(&reader))
        .fetch_json()
        .await;
    assert_eq!(seen["poisonQueue"], "jobs-poison");
    assert_eq!(seen["approximateCount"], 3);
    let messages = seen["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert!(messages.iter().all(|m| m.get("body").is_none()), "{seen}");
    // Said in so many words, so a client can tell a hidden body from one a message lacks.
    assert_eq!(seen["bodiesHidden"], true, "{seen}");
    let full: Value = api
        .request(Method::GET, POISON, Some(&contributor))
        .fetch_json()
        .await;
    assert_eq!(full["bodiesHidden"], false, "{full}");
    let bodies: BTreeSet<&str> = full["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["body"].as_str().unwrap())
        .collect();
    let sent: Vec<String> = (0..3).map(text).collect();
    assert_eq!(
        bodies,
        sent.iter().map(String::as_str).collect::<BTreeSet<_>>()
    );
    let refused = api
        .request(Method::GET, POISON, Some(&invoker))
        .fetch()
        .await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    let refused = api
        .request(Method::POST, &format!("{POISON}/replay"), Some(&reader))
        .json(&json!({}))
        .fetch()
        .await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);

    // Bad requests name their fields.
    let bad = api
        .request(
            Method::POST,
            &format!("{POISON}/replay"),
            Some(&contributor),
        )
        .json(&json!({"count": 0, "messageIds": [""], "everything": true}))
        .fetch()
        .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let paths = error_paths(&problem(bad).await);
    for path in ["count", "messageIds[0]", "everything"] {
        assert!(paths.contains(&path.to_owned()), "{path} in {paths:?}");
    }
    let bad = api
        .request(Method::GET, &format!("{POISON}?top=33"), Some(&contributor))
        .fetch()
        .await;
    assert_eq!(error_paths(&problem(bad).await), ["top"]);

    // The handler works again: one message back by id, then the rest by count.
    handler.set_behaviour(Behaviour::Respond(json!({})));
    let failed = handler.count();
    let first = messages[0]["messageId"].as_str().unwrap();
    let one: Value = api
        .request(
            Method::POST,
            &format!("{POISON}/replay"),
            Some(&contributor),
        )
        .json(&json!({"messageIds": [first, "no-such-message"]}))
        .fetch_json()
        .await;
    assert_eq!(one["replayed"], 1, "{one}");
    assert_eq!(one["messageIds"], json!([first]));
    assert_eq!(one["notFound"], json!(["no-such-message"]));
    let rest: Value = api
        .request(
            Method::POST,
            &format!("{POISON}/replay"),
            Some(&contributor),
        )
        .json(&json!({"count": 10}))
        .fetch_json()
        .await;
    assert_eq!(rest["replayed"], 2, "{rest}");
    wait_for_length(&queues, "jobs", 0).await;
    wait_for_length(&queues, "jobs-poison", 0).await;
    let processed: BTreeSet<String> = handler.requests()[failed..]
        .iter()
        .filter_map(|r| r.body["Data"]["msg"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        processed,
        (0..3)
            .map(|i| format!("order {i}"))
            .collect::<BTreeSet<_>>(),
        "every replayed body reached the handler intact"
    );
    assert_eq!(
        failed, 3,
        "one failure each (maxDequeueCount 1), then poison"
    );

    let log: Value = api
        .admin(Method::GET, "/v1/tenants/contoso/auditLog?limit=100")
        .fetch_json()
        .await;
    let replays = log["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["action"] == "Shoal/apps/functions/poison/replay/action"
                && e["outcome"] == "succeeded"
        })
        .count();
    assert_eq!(replays, 2, "each replay audited: {log}");

    // A function without a queue trigger has no poison queue.
    api.admin(
        Method::PUT,
        "/v1/tenants/contoso/apps/orders/functions/hook",
    )
    .json(&json!({"bindings": [{"type": "httpTrigger", "direction": "in", "name": "req"}]}))
    .fetch()
    .await;
    let conflict = api
        .admin(
            Method::GET,
            "/v1/tenants/contoso/apps/orders/functions/hook/poison",
        )
        .fetch()
        .await;
    assert_eq!(conflict.status(), StatusCode::CONFLICT);

    stop.cancel();
    worker.stopped().await.unwrap();
}

#[tokio::test]
async fn dead_lettered_service_bus_messages_are_shown_replayed_and_processed() {
    use shoal_connectors::ServiceBusNamespace;
    use shoal_domain::service_bus_trigger::output::OutgoingMessage;
    use shoal_local_bus::{LocalBus, LocalBusConfig};

    let api = TestApp::spawn().await;
    let bus = LocalBus::start(
        LocalBusConfig::from_json(
            r#"{"UserConfig": {"Namespaces": [{"Name": "localbus", "Queues": [
                {"Name": "orders", "Properties": {"MaxDeliveryCount": 1}}]}]}}"#,
        )
        .unwrap(),
    )
    .await
    .unwrap();
    let handler = RecordingHandler::start(Behaviour::Status(500))
        .await
        .unwrap();
    api.put_tenant("contoso").await;
    let put = api
        .put_app(
            "contoso",
            "orders",
            &json!({
                "handler": {"url": handler.url().as_str()},
                "appSettings": {"OrdersBus": bus.connection_string()},
            }),
        )
        .await;
    assert_eq!(put.status(), StatusCode::CREATED);
    let put = api
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/apps/orders/functions/process",
        )
        .json(&json!({
            "bindings": [{"type": "serviceBusTrigger", "direction": "in", "name": "msg",
                          "queueName": "orders", "connection": "OrdersBus"}],
            "circuitBreaker": {"enabled": false},
        }))
        .fetch()
        .await;
    assert_eq!(put.status(), StatusCode::CREATED);
    let namespace =
        ServiceBusNamespace::from_connection_string(&bus.connection_string(), &Default::default())
            .await
            .unwrap();
    let mut sender = namespace.sender("orders").await.unwrap();
    let sent: Vec<OutgoingMessage> = ["first", "second"]
        .iter()
        .map(|text| OutgoingMessage {
            body: text.as_bytes().to_vec(),
            message_id: Some(format!("order-{text}")),
            ..OutgoingMessage::default()
        })
        .collect();
    sender.send(&sent).await.unwrap();
    let mut config = WorkerConfig::new("w1");
    config.egress = crate::helpers::loopback_egress();
    config.hosting = Hosting::AllApps;
    config.refresh_interval = Duration::from_millis(200);
    let pool = connect_lazy(&api.database_url, &PoolConfig::default()).unwrap();
    let stop = CancellationToken::new();
    let worker = Worker::new(config, pool, Cipher::new(&api.secret_key))
        .start(stop.clone())
        .unwrap();

    // MaxDeliveryCount 1: one failure each, then the broker dead-letters them.
    let contributor = api.token_for("contoso", Role::Contributor);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let shown = loop {
        let shown: Value = api
            .request(Method::GET, POISON, Some(&contributor))
            .fetch_json()
            .await;
        if shown["approximateCount"] == 2 && shown["messages"].as_array().unwrap().len() == 2 {
            break shown;
        }
        assert!(tokio::time::Instant::now() < deadline, "{shown}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(shown["triggerQueue"], "orders");
    let messages = shown["messages"].as_array().unwrap();
    let ids: BTreeSet<&str> = messages
        .iter()
        .map(|m| m["messageId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, BTreeSet::from(["order-first", "order-second"]));
    assert!(
        messages.iter().all(|m| m["deadLetterReason"].is_string()),
        "the broker's reason is shown: {shown}"
    );
    let bodies: BTreeSet<&str> = messages
        .iter()
        .map(|m| m["body"].as_str().unwrap())
        .collect();
    assert_eq!(bodies, BTreeSet::from(["first", "second"]));
    assert_eq!(shown["bodiesHidden"], false, "{shown}");
    let reader = api.token_for("contoso", Role::Reader);
    let hidden: Value = api
        .request(Method::GET, POISON, Some(&reader))
        .fetch_json()
        .await;
    assert_eq!(hidden["bodiesHidden"], true, "{hidden}");
    let listed = hidden["messages"].as_array().unwrap();
    assert!(!listed.is_empty() && listed.iter().all(|m| m.get("body").is_none()));

    handler.set_behaviour(Behaviour::Respond(json!({})));
    let failed = handler.count();
    let replayed: Value = api
        .request(
            Method::POST,
            &format!("{POISON}/replay"),
            Some(&contributor),
        )
        .json(&json!({"messageIds": ["order-second"]}))
        .fetch_json()
        .await;
    assert_eq!(replayed["replayed"], 1, "{replayed}");
    let replayed: Value = api
        .request(
            Method::POST,
            &format!("{POISON}/replay"),
            Some(&contributor),
        )
        .json(&json!({}))
        .fetch_json()
        .await;
    assert_eq!(replayed["messageIds"], json!(["order-first"]));
    let processed = handler
        .wait_for(failed + 2, Duration::from_secs(30))
        .await
        .unwrap();
    let bodies: BTreeSet<String> = processed[failed..]
        .iter()
        .filter_map(|r| r.body["Data"]["msg"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        bodies,
        BTreeSet::from(["first".to_owned(), "second".to_owned()])
    );
    let after: Value = api
        .request(Method::GET, POISON, Some(&contributor))
        .fetch_json()
        .await;
    assert_eq!(after["approximateCount"], 0, "{after}");

    sender.close().await.unwrap();
    stop.cancel();
    worker.stopped().await.unwrap();
}

#[tokio::test]
async fn the_poison_endpoints_refuse_a_storage_account_the_egress_policy_refuses() {
    // Loopback is not allowed here, and Azurite listens on it: the API must not connect.
    let api = TestApp::spawn_with(crate::helpers::Options {
        outbound: shoal_api::OutboundConfig::default(),
        ..crate::helpers::Options::default()
    })
    .await;
    let azurite = Azurite::start().await.unwrap();
    api.put_tenant("contoso").await;
    let put = api
        .put_app(
            "contoso",
            "orders",
            &json!({
                "handler": {"url": "https://handler.example.com/"},
                "appSettings": {"AzureWebJobsStorage": azurite.connection_string()},
            }),
        )
        .await;
    assert_eq!(put.status(), StatusCode::CREATED, "{:?}", put.text().await);
    let put = api
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/apps/orders/functions/process",
        )
        .json(&json!({
            "bindings": [{"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "jobs"}],
        }))
        .fetch()
        .await;
    assert_eq!(put.status(), StatusCode::CREATED);
    let contributor = api.token_for("contoso", Role::Contributor);
    for (method, path) in [
        (Method::GET, POISON.to_owned()),
        (Method::POST, format!("{POISON}/replay")),
    ] {
        let refused = api
            .request(method.clone(), &path, Some(&contributor))
            .json(&json!({}))
            .fetch()
            .await;
        assert_eq!(refused.status(), StatusCode::CONFLICT, "{method} {path}");
        let detail = problem(refused).await["detail"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            detail.contains("AzureWebJobsStorage") && detail.contains("egress policy"),
            "{detail}"
        );
    }
}
