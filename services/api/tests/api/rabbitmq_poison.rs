//! A RabbitMQ trigger's test message and dead-lettered messages through the API, against a
//! real broker (`deploy/local/rabbitmq.sh`); what the API wrote and left is read back with
//! PyPI `pika`, a client nobody here wrote. The messages are dead-lettered by the broker
//! itself: pika rejects them from the trigger queue, whose dead-letter exchange moves them.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_testkit::rabbitmq::{self, pika};

use crate::helpers::*;

const FUNCTION: &str = "/v1/tenants/contoso/apps/orders/functions/Take";

async fn count(url: &str, queue: &str) -> u64 {
    pika(url, &["count", queue])
        .await
        .unwrap()
        .as_u64()
        .unwrap_or(u64::MAX)
}

/// A trigger queue (`prefix-…`) dead-lettering to `<queue>-dead` on the broker, and the app whose
/// trigger names that dead-letter queue; the broker's URL and both queues.
async fn dead_letter_app(prefix: &str) -> (String, String, String, TestApp) {
    let url = rabbitmq::url().expect("a RabbitMQ broker");
    let queue = rabbitmq::queue_name(prefix);
    let dead = format!("{queue}-dead");
    pika(&url, &["declare", &queue, &dead]).await.unwrap();
    let mut trigger = rabbit_trigger(&queue);
    trigger["deadLetterQueueName"] = json!(dead);
    let app = rabbit_app(json!({"appSettings": {"Rabbit": url}}), trigger).await;
    (url, queue, dead, app)
}

#[tokio::test]
async fn a_test_message_is_published_to_the_trigger_queue_with_its_headers() {
    let url = rabbitmq::url().expect("a RabbitMQ broker");
    let queue = rabbitmq::queue_name("sent");
    pika(&url, &["declare", &queue]).await.unwrap();
    let app = rabbit_app(
        json!({"appSettings": {"Rabbit": url}}),
        rabbit_trigger(&queue),
    )
    .await;

    let answer = app
        .admin(Method::POST, &format!("{FUNCTION}/send"))
        .json(&json!({"body": {"n": 1}, "properties": {"region": "eu", "tries": 2}}))
        .fetch()
        .await;
    assert_eq!(answer.status(), StatusCode::ACCEPTED);
    let sent: Value = answer.json().await.unwrap();
    assert_eq!(sent["trigger"], "rabbitMQTrigger");
    assert_eq!(sent["destination"], queue.as_str());
    assert_eq!(sent["size"], 7);
    let got = pika(&url, &["get", &queue, "1", "10"]).await.unwrap();
    assert_eq!(got[0]["body"], r#"{"n":1}"#);
    assert_eq!(got[0]["messageId"], sent["messageId"]);
    assert_eq!(got[0]["headers"], json!({"region": "eu", "tries": "2"}));

    // Options a RabbitMQ message does not carry are refused by name.
    let refused = app
        .admin(Method::POST, &format!("{FUNCTION}/send"))
        .json(&json!({"body": "x", "sessionId": "s", "key": "k"}))
        .fetch()
        .await;
    assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let problem: Value = refused.json().await.unwrap();
    let paths: Vec<&str> = problem["errors"]
        .as_array()
        .map(|e| e.iter().filter_map(|e| e["path"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(paths, ["sessionId", "key"], "{problem}");
}

#[tokio::test]
async fn a_queue_that_does_not_exist_gets_no_test_message_and_a_trigger_without_dead_letter_queue_no_poison()
 {
    let url = rabbitmq::url().expect("a RabbitMQ broker");
    let queue = rabbitmq::queue_name("missing");
    let app = rabbit_app(
        json!({"appSettings": {"Rabbit": url}}),
        rabbit_trigger(&queue),
    )
    .await;
    let answer = app
        .admin(Method::POST, &format!("{FUNCTION}/send"))
        .json(&json!({"body": "x"}))
        .fetch()
        .await;
    assert_eq!(answer.status(), StatusCode::CONFLICT);
    let problem: Value = answer.json().await.unwrap();
    let detail = problem["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("does not exist"), "{problem}");
    assert!(!detail.contains("shoal:"), "credentials shown: {problem}");

    let poison = app
        .admin(Method::GET, &format!("{FUNCTION}/poison"))
        .fetch()
        .await;
    assert_eq!(poison.status(), StatusCode::CONFLICT);
    let problem: Value = poison.json().await.unwrap();
    assert!(
        problem["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("deadLetterQueueName"),
        "{problem}"
    );
}

#[tokio::test]
async fn dead_lettered_messages_are_listed_untouched_and_replayed_without_their_failure_counts() {
    let (url, queue, dead, app) = dead_letter_app("orders").await;
    pika(&url, &["publish-failed", &queue, "3", "failed"])
        .await
        .unwrap();
    assert_eq!(pika(&url, &["reject", &queue, "3"]).await.unwrap(), 3);

    let poison: Value = app
        .admin(Method::GET, &format!("{FUNCTION}/poison?top=10"))
        .fetch_json()
        .await;
    assert_eq!(poison["triggerQueue"], queue.as_str(), "{poison}");
    assert_eq!(poison["poisonQueue"], dead.as_str());
    assert_eq!(poison["approximateCount"], 3);
    let messages = poison["messages"].as_array().cloned().unwrap_or_default();
    let ids: Vec<&str> = messages
        .iter()
        .filter_map(|m| m["messageId"].as_str())
        .collect();
    assert_eq!(ids, ["failed-0", "failed-1", "failed-2"], "oldest first");
    assert_eq!(messages[0]["body"], "failed-0");
    assert_eq!(
        messages[0]["dequeueCount"], 5,
        "four requeues and the rejection"
    );
    assert_eq!(messages[0]["deadLetterReason"], "rejected");
    // A peek: everything is still there, in order.
    assert_eq!(count(&url, &dead).await, 3);

    let replay = |body: Value| {
        app.admin(Method::POST, &format!("{FUNCTION}/poison/replay"))
            .json(&body)
            .fetch_json()
    };
    let one = replay(json!({"messageIds": ["failed-1", "nope"]})).await;
    assert_eq!(one["replayed"], 1, "{one}");
    assert_eq!(one["messageIds"], json!(["failed-1"]));
    assert_eq!(one["notFound"], json!(["nope"]));
    let moved = pika(&url, &["get", &queue, "1", "10"]).await.unwrap();
    assert_eq!(moved[0]["body"], "failed-1");
    assert_eq!(moved[0]["messageId"], "failed-1");
    // A fresh start: neither Shoal's requeue count nor the broker's x-death comes along.
    assert_eq!(moved[0]["headers"], json!({}), "{moved}");
    assert_eq!(count(&url, &dead).await, 2);

    let rest = replay(json!({})).await;
    assert_eq!(rest["replayed"], 2, "{rest}");
    assert_eq!(rest["messageIds"], json!(["failed-0", "failed-2"]));
    assert_eq!(count(&url, &dead).await, 0);
    assert_eq!(count(&url, &queue).await, 2);
    let audit: Value = app
        .admin(Method::GET, "/v1/tenants/contoso/auditLog")
        .fetch_json()
        .await;
    assert!(
        audit.to_string().contains("functions/Take/poison/replay"),
        "{audit}"
    );
}

#[tokio::test]
async fn a_large_dead_lettered_body_is_named_by_its_size_and_replayed_whole() {
    let (url, queue, dead, app) = dead_letter_app("large").await;
    pika(&url, &["publish-sized", &dead, "large", "307200"])
        .await
        .unwrap();

    let poison: Value = app
        .admin(Method::GET, &format!("{FUNCTION}/poison"))
        .fetch_json()
        .await;
    let shown = poison["messages"][0]["body"].as_str().unwrap_or_default();
    assert!(
        shown.starts_with("(not shown: 307200 bytes"),
        "{}",
        &shown[..shown.len().min(200)]
    );
    let replayed: Value = app
        .admin(Method::POST, &format!("{FUNCTION}/poison/replay"))
        .json(&json!({}))
        .fetch_json()
        .await;
    assert_eq!(replayed["messageIds"], json!(["large"]), "{replayed}");
    let moved = pika(&url, &["get", &queue, "1", "10"]).await.unwrap();
    assert_eq!(moved[0]["size"], 307_200, "replayed whole");
    assert_eq!(count(&url, &dead).await, 0);
}
