//! A test message sent to a function's trigger through the API, against the real brokers: it
//! arrives on the Storage queue (Azurite) encoded as the app reads it and a worker delivers it
//! to the handler, on the Service Bus queue (the local stand-in) with its session and
//! application properties, on the Kafka topic (tansu) with its key and headers. The egress
//! policy refuses a destination the tenant may not reach before anything connects; bad input is
//! a 422 at its field, a trigger that takes no messages a 409, a Reader 403, another tenant's
//! function 404.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_api::OutboundConfig;
use shoal_api::identity::Role;
use shoal_connectors::{ConnectorOptions, StorageQueues};
use shoal_store::crypto::Cipher;
use shoal_store::pool::{PoolConfig, connect_lazy};
use shoal_testkit::azurite::Azurite;
use shoal_testkit::handler::{Behaviour, RecordingHandler};
use shoal_worker::{Hosting, Worker, WorkerConfig};
use tokio_util::sync::CancellationToken;

use crate::helpers::{Fetch, Options, TestApp, error_paths, problem};

const SEND: &str = "/v1/tenants/contoso/apps/orders/functions/process/send";

/// A tenant `contoso` with app `orders` (`app`) and function `process` (`bindings`).
async fn function(api: &TestApp, app: Value, bindings: Value) {
    api.put_tenant("contoso").await;
    let put = api.put_app("contoso", "orders", &app).await;
    assert_eq!(put.status(), StatusCode::CREATED, "{:?}", put.text().await);
    let put = api
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/apps/orders/functions/process",
        )
        .json(&json!({"bindings": bindings, "circuitBreaker": {"enabled": false}}))
        .fetch()
        .await;
    assert_eq!(put.status(), StatusCode::CREATED, "{:?}", put.text().await);
}

/// Sends a plain test message that must be refused with 409: the problem's detail.
async fn refused_with_409(api: &TestApp, token: &str) -> String {
    let refused = send(api, token, json!({"body": "x"})).await;
    assert_eq!(refused.status(), StatusCode::CONFLICT);
    problem(refused).await["detail"]
        .as_str()
        .expect("a detail")
        .to_owned()
}

async fn send(api: &TestApp, token: &str, body: Value) -> reqwest::Response {
    api.request(Method::POST, SEND, Some(token))
        .json(&body)
        .fetch()
        .await
}

#[tokio::test]
async fn a_test_message_reaches_the_storage_queue_and_the_handler() {
    let api = TestApp::spawn().await;
    let azurite = Azurite::start().await.unwrap();
    let handler = RecordingHandler::start(Behaviour::Respond(json!({})))
        .await
        .unwrap();
    function(
        &api,
        json!({"handler": {"url": handler.url().as_str()},
               "appSettings": {"AzureWebJobsStorage": azurite.connection_string()}}),
        json!([{"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "jobs"}]),
    )
    .await;
    let contributor = api.token_for("contoso", Role::Contributor);

    // Shoal does not create the tenant's queue for a test message; it says it is missing.
    let detail = refused_with_409(&api, &contributor).await;
    assert!(detail.contains("jobs does not exist"), "{detail}");

    let queues = StorageQueues::from_connection_string(
        &azurite.connection_string(),
        &ConnectorOptions::default(),
    )
    .unwrap();
    let jobs = queues.queue("jobs").unwrap();
    jobs.create_if_missing().await.unwrap();
    let sent = send(&api, &contributor, json!({"body": {"order": 7}})).await;
    assert_eq!(sent.status(), StatusCode::ACCEPTED);
    let sent: Value = sent.json().await.unwrap();
    assert_eq!(sent["trigger"], "queueTrigger");
    assert_eq!(sent["destination"], "jobs");
    let message_id = sent["messageId"].as_str().expect("the queue's message id");

    // On the queue as the app reads it: base64 (the default messageEncoding) of the JSON.
    let peeked = jobs.peek(32).await.unwrap();
    assert_eq!(peeked.len(), 1);
    assert_eq!(peeked[0].message_id, message_id);
    use base64::Engine as _;
    assert_eq!(
        peeked[0].text,
        base64::engine::general_purpose::STANDARD.encode(r#"{"order":7}"#)
    );
    assert_eq!(sent["size"], peeked[0].text.len());

    // And a worker delivers it to the handler like any other message.
    let mut config = WorkerConfig::new("w1");
    config.egress = crate::helpers::loopback_egress();
    config.hosting = Hosting::AllApps;
    config.refresh_interval = Duration::from_millis(200);
    let pool = connect_lazy(&api.database_url, &PoolConfig::default()).unwrap();
    let stop = CancellationToken::new();
    let worker = Worker::new(config, pool, Cipher::new(&api.secret_key))
        .start(stop.clone())
        .unwrap();
    let delivered = handler.wait_for(1, Duration::from_secs(60)).await.unwrap();
    assert_eq!(delivered[0].body["Data"]["msg"], r#"{"order":7}"#);
    assert_eq!(
        delivered[0].body["Metadata"]["Id"].as_str(),
        Some(message_id),
        "{}",
        delivered[0].body
    );
    stop.cancel();
    worker.stopped().await.unwrap();

    // What a queue message cannot carry, and what it cannot hold, at their fields.
    let too_large = send(
        &api,
        &contributor,
        json!({"body": "x".repeat(48 * 1024 + 1)}),
    )
    .await;
    assert_eq!(too_large.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let too_large = problem(too_large).await;
    assert_eq!(error_paths(&too_large), ["body"]);
    assert!(
        too_large["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("65536 bytes"),
        "{too_large}"
    );
    let options = send(
        &api,
        &contributor,
        json!({"body": "x", "sessionId": "s", "key": "k", "properties": {"a": "b"}, "colour": 1}),
    )
    .await;
    assert_eq!(options.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error_paths(&problem(options).await), ["colour"]);
    let options = send(&api, &contributor, json!({"body": "x", "sessionId": "s"})).await;
    assert_eq!(error_paths(&problem(options).await), ["sessionId"]);
    let no_body = send(&api, &contributor, json!({"bodyBase64": 12})).await;
    assert_eq!(error_paths(&problem(no_body).await), ["bodyBase64"]);

    // A Reader may look, not send; another tenant's caller does not learn the function exists.
    let reader = api.token_for("contoso", Role::Reader);
    let refused = send(&api, &reader, json!({"body": "x"})).await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    api.put_tenant("fabrikam").await;
    let stranger = api.token_for("fabrikam", Role::Contributor);
    let hidden = send(&api, &stranger, json!({"body": "x"})).await;
    assert_eq!(hidden.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        jobs.approximate_length().await.unwrap(),
        0,
        "nothing else was sent"
    );

    // The send is in the audit log.
    let audit: Value = api
        .admin(Method::GET, "/v1/tenants/contoso/auditLog")
        .fetch_json()
        .await;
    assert!(
        audit.to_string().contains("functions/process/send"),
        "{audit}"
    );
}

#[tokio::test]
async fn a_test_message_reaches_the_service_bus_queue_with_its_session_and_properties() {
    use shoal_connectors::ServiceBusNamespace;
    use shoal_domain::service_bus_entity::path::EntityPath;
    use shoal_local_bus::{LocalBus, LocalBusConfig};

    let api = TestApp::spawn().await;
    let bus = LocalBus::start(
        LocalBusConfig::from_json(
            r#"{"UserConfig": {"Namespaces": [{"Name": "localbus", "Queues": [{"Name": "orders"}]}]}}"#,
        )
        .unwrap(),
    )
    .await
    .unwrap();
    function(
        &api,
        json!({"handler": {"url": "https://handler.example.com/"},
               "appSettings": {"OrdersBus": bus.connection_string()}}),
        json!([{"type": "serviceBusTrigger", "direction": "in", "name": "msg",
                "queueName": "orders", "connection": "OrdersBus"}]),
    )
    .await;
    let owner = api.token_for("contoso", Role::Owner);
    let sent = send(
        &api,
        &owner,
        json!({"body": "hello bus", "sessionId": "customer-7",
               "properties": {"source": "test", "attempt": 1}}),
    )
    .await;
    assert_eq!(sent.status(), StatusCode::ACCEPTED);
    let sent: Value = sent.json().await.unwrap();
    assert_eq!(sent["destination"], "orders");
    assert_eq!(sent["sessionId"], "customer-7");

    let namespace =
        ServiceBusNamespace::from_connection_string(&bus.connection_string(), &Default::default())
            .await
            .unwrap();
    let mut receiver = namespace
        .receiver(&EntityPath::Queue("orders".into()), 0)
        .await
        .unwrap();
    let received = receiver.receive(1, Duration::from_secs(10)).await.unwrap();
    assert_eq!(received.len(), 1);
    let message = &received[0].message;
    assert_eq!(message.body, b"hello bus");
    assert_eq!(message.message_id.as_deref(), sent["messageId"].as_str());
    assert_eq!(message.session_id.as_deref(), Some("customer-7"));
    assert_eq!(message.content_type.as_deref(), Some("text/plain"));
    assert_eq!(message.application_properties["source"], "test");
    assert_eq!(message.application_properties["attempt"], "1");
    let _ = receiver.close().await;

    // Service Bus Standard's 256 KiB, and a Kafka-only option.
    let too_large = send(&api, &owner, json!({"body": "x".repeat(256 * 1024 + 1)})).await;
    assert_eq!(too_large.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error_paths(&problem(too_large).await), ["body"]);
    let key = send(&api, &owner, json!({"body": "x", "key": "k"})).await;
    assert_eq!(error_paths(&problem(key).await), ["key"]);
    namespace.close().await;
}

#[tokio::test]
async fn a_test_message_reaches_the_kafka_topic_with_its_key_and_headers() {
    use shoal_connectors::kafka::{KafkaProperties, ReadLimits, read_from_position};
    use shoal_testkit::kafka::TansuBroker;

    let broker = TansuBroker::start().await.expect("tansu starts");
    broker.create_topic("orders", 1).await.unwrap();
    let api = TestApp::spawn().await;
    function(
        &api,
        json!({"handler": {"url": "https://handler.example.com/"},
               "appSettings": {"Brokers": broker.bootstrap()}}),
        json!([{"type": "kafkaTrigger", "direction": "in", "name": "event",
                "brokerList": "%Brokers%", "topic": "orders", "consumerGroup": "billing"}]),
    )
    .await;
    let contributor = api.token_for("contoso", Role::Contributor);
    let sent = send(
        &api,
        &contributor,
        json!({"bodyBase64": "AAH/", "key": "customer-7", "properties": {"trace": "t-1"}}),
    )
    .await;
    assert_eq!(sent.status(), StatusCode::ACCEPTED);
    let sent: Value = sent.json().await.unwrap();
    assert_eq!(sent["trigger"], "kafkaTrigger");
    assert_eq!(sent["destination"], "orders");
    assert_eq!(sent["partition"], 0);

    let mut properties = KafkaProperties::new();
    properties.set("bootstrap.servers", broker.bootstrap());
    let read = read_from_position(
        &properties,
        "send-test-reader",
        "orders",
        ReadLimits {
            max_events: 10,
            max_bytes: 1024 * 1024,
            timeout: Duration::from_secs(10),
        },
    )
    .await
    .unwrap();
    assert_eq!(read.events.len(), 1);
    let event = &read.events[0];
    assert_eq!(event.value.as_deref(), Some(&[0u8, 1, 255][..]));
    assert_eq!(event.key.as_deref(), Some(&b"customer-7"[..]));
    assert_eq!(Some(event.offset), sent["offset"].as_i64());
    assert!(
        event
            .headers
            .iter()
            .any(|(k, v)| k == "trace" && v.as_deref() == Some(&b"t-1"[..])),
        "{:?}",
        event.headers
    );
    let session = send(&api, &contributor, json!({"body": "x", "sessionId": "s"})).await;
    assert_eq!(error_paths(&problem(session).await), ["sessionId"]);
}

#[tokio::test]
async fn the_egress_policy_refuses_a_destination_before_anything_is_sent() {
    use shoal_testkit::kafka::TansuBroker;

    // Loopback is not allowed here: Azurite and tansu listen on it, and must see nothing.
    let api = TestApp::spawn_with(Options {
        outbound: OutboundConfig::default(),
        ..Options::default()
    })
    .await;
    let azurite = Azurite::start().await.unwrap();
    let broker = TansuBroker::start().await.expect("tansu starts");
    broker.create_topic("orders", 1).await.unwrap();
    function(
        &api,
        json!({"handler": {"url": "https://handler.example.com/"},
               "appSettings": {"AzureWebJobsStorage": azurite.connection_string(),
                               "Brokers": broker.bootstrap()}}),
        json!([{"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "jobs"}]),
    )
    .await;
    let queues = StorageQueues::from_connection_string(
        &azurite.connection_string(),
        &ConnectorOptions::default(),
    )
    .unwrap();
    let jobs = queues.queue("jobs").unwrap();
    jobs.create_if_missing().await.unwrap();
    let contributor = api.token_for("contoso", Role::Contributor);
    let detail = refused_with_409(&api, &contributor).await;
    assert!(detail.contains("egress policy"), "{detail}");
    assert!(detail.contains("AzureWebJobsStorage"), "{detail}");
    assert_eq!(jobs.approximate_length().await.unwrap(), 0);

    let put = api
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/apps/orders/functions/process",
        )
        .header("if-match", "*")
        .json(
            &json!({"bindings": [{"type": "kafkaTrigger", "direction": "in", "name": "event",
            "brokerList": "%Brokers%", "topic": "orders", "consumerGroup": "billing"}]}),
        )
        .fetch()
        .await;
    assert!(put.status().is_success(), "{:?}", put.text().await);
    let detail = refused_with_409(&api, &contributor).await;
    assert!(detail.contains("egress policy"), "{detail}");
}

#[tokio::test]
async fn a_trigger_without_a_queue_or_topic_takes_no_test_message() {
    let api = TestApp::spawn().await;
    function(
        &api,
        json!({"handler": {"url": "https://handler.example.com/"}}),
        json!([{"type": "httpTrigger", "direction": "in", "name": "req"},
               {"type": "http", "direction": "out", "name": "res"}]),
    )
    .await;
    let contributor = api.token_for("contoso", Role::Contributor);
    let detail = refused_with_409(&api, &contributor).await;
    assert!(
        detail.contains("POST /webhooks/contoso/orders/process"),
        "{detail}"
    );
    let unknown = api
        .request(
            Method::POST,
            "/v1/tenants/contoso/apps/orders/functions/nope/send",
            Some(&contributor),
        )
        .json(&json!({"body": "x"}))
        .fetch()
        .await;
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_subscription_s_test_message_goes_to_its_topic_and_a_session_trigger_needs_a_session() {
    use shoal_connectors::ServiceBusNamespace;
    use shoal_domain::service_bus_entity::path::EntityPath;
    use shoal_local_bus::{LocalBus, LocalBusConfig};

    let api = TestApp::spawn().await;
    let bus = LocalBus::start(
        LocalBusConfig::from_json(
            r#"{"UserConfig": {"Namespaces": [{"Name": "localbus", "Topics": [
                {"Name": "events", "Subscriptions": [{"Name": "audit"}]}]}]}}"#,
        )
        .unwrap(),
    )
    .await
    .unwrap();
    let trigger = |sessions: bool| {
        json!([{"type": "serviceBusTrigger", "direction": "in", "name": "msg",
                "topicName": "events", "subscriptionName": "audit", "connection": "Bus",
                "isSessionsEnabled": sessions}])
    };
    function(
        &api,
        json!({"handler": {"url": "https://handler.example.com/"},
               "appSettings": {"Bus": bus.connection_string()}}),
        trigger(false),
    )
    .await;
    let contributor = api.token_for("contoso", Role::Contributor);
    let sent = send(&api, &contributor, json!({"body": {"event": "created"}})).await;
    assert_eq!(sent.status(), StatusCode::ACCEPTED);
    let sent: Value = sent.json().await.unwrap();
    assert_eq!(sent["destination"], "events");

    let namespace =
        ServiceBusNamespace::from_connection_string(&bus.connection_string(), &Default::default())
            .await
            .unwrap();
    let subscription = EntityPath::Subscription {
        topic: "events".into(),
        subscription: "audit".into(),
    };
    let mut receiver = namespace.receiver(&subscription, 0).await.unwrap();
    let received = receiver.receive(1, Duration::from_secs(10)).await.unwrap();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].message.body, br#"{"event":"created"}"#);
    assert_eq!(
        received[0].message.content_type.as_deref(),
        Some("application/json")
    );
    let _ = receiver.close().await;
    namespace.close().await;

    // A trigger that reads sessions only ever receives messages with one.
    let put = api
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/apps/orders/functions/process",
        )
        .json(&json!({"bindings": trigger(true)}))
        .fetch()
        .await;
    assert!(put.status().is_success(), "{:?}", put.text().await);
    let refused = send(&api, &contributor, json!({"body": "x"})).await;
    assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let refused = problem(refused).await;
    assert_eq!(error_paths(&refused), ["sessionId"]);
    assert!(
        refused["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("isSessionsEnabled"),
        "{refused}"
    );
}
