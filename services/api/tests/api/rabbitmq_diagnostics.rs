//! A RabbitMQ trigger's queues in the app's diagnostics, looked at on a real broker
//! (`deploy/local/rabbitmq.sh`); the queues are declared and filled with PyPI `pika`.

use reqwest::Method;
use serde_json::{Value, json};
use shoal_testkit::rabbitmq::{self, pika};

use crate::helpers::*;

/// The app's `entity` checks, as (key, status, detail).
async fn entity_checks(app: &TestApp) -> (bool, Vec<(Value, String, String)>) {
    let diagnostics: Value = app
        .admin(Method::GET, "/v1/tenants/contoso/apps/orders/diagnostics")
        .fetch()
        .await
        .json()
        .await
        .unwrap();
    let checks = diagnostics["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["subject"] == "entity")
        .map(|c| {
            (
                c["key"].clone(),
                c["status"].as_str().unwrap_or_default().to_owned(),
                c["detail"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    (diagnostics["healthy"] == true, checks)
}

#[tokio::test]
async fn the_trigger_queue_and_its_dead_letter_queue_are_looked_at_on_the_broker() {
    let url = rabbitmq::url().expect("a RabbitMQ broker");
    let queue = rabbitmq::queue_name("looked");
    let dead = format!("{queue}-dead");
    pika(&url, &["declare", &queue, &dead]).await.unwrap();
    pika(&url, &["publish", &queue, "2"]).await.unwrap();
    let mut trigger = rabbit_trigger(&queue);
    trigger["deadLetterQueueName"] = json!(dead);
    let app = rabbit_app(json!({"appSettings": {"Rabbit": url}}), trigger).await;

    let (healthy, checks) = entity_checks(&app).await;
    assert!(healthy, "{checks:?}");
    assert_eq!(checks.len(), 2, "{checks:?}");
    let (key, status, detail) = &checks[0];
    assert_eq!((key, status.as_str()), (&Value::Null, "ok"));
    assert!(
        detail.contains(&queue) && detail.contains("2 messages ready"),
        "{detail}"
    );
    let (key, status, detail) = &checks[1];
    assert_eq!(
        (key, status.as_str()),
        (&json!("deadLetterQueueName"), "ok")
    );
    assert!(
        detail.contains(&dead) && detail.contains("0 failed messages"),
        "{detail}"
    );
    // Looking changed nothing.
    assert_eq!(pika(&url, &["count", &queue]).await.unwrap(), 2);
}

#[tokio::test]
async fn missing_queues_are_named_and_the_trigger_queue_makes_the_app_unhealthy() {
    let url = rabbitmq::url().expect("a RabbitMQ broker");
    let queue = rabbitmq::queue_name("absent");
    let mut trigger = rabbit_trigger(&queue);
    trigger["deadLetterQueueName"] = json!(format!("{queue}-dead"));
    let app = rabbit_app(json!({"appSettings": {"Rabbit": url}}), trigger).await;

    let (healthy, checks) = entity_checks(&app).await;
    assert!(!healthy, "{checks:?}");
    let statuses: Vec<&str> = checks.iter().map(|(_, s, _)| s.as_str()).collect();
    assert_eq!(statuses, ["error", "warning"], "{checks:?}");
    assert!(checks[0].2.contains("does not exist"), "{checks:?}");
    assert!(
        checks[1].2.contains("poison routes cannot read it"),
        "{checks:?}"
    );
    for (_, _, detail) in &checks {
        assert!(!detail.contains("shoal:"), "credentials shown: {detail}");
    }
    // Nothing was declared by looking.
    let declared = pika(&url, &["count", &queue]).await;
    assert!(declared.is_err(), "{declared:?}");
}

#[tokio::test]
async fn a_broker_that_does_not_answer_is_an_error_not_a_wait() {
    // A port nothing listens on, on the loopback the tests' egress policy allows.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let queue = rabbitmq::queue_name("down");
    let app = rabbit_app(
        json!({"appSettings": {"Rabbit": format!("amqp://shoal:secret@127.0.0.1:{port}/%2f")}}),
        rabbit_trigger(&queue),
    )
    .await;
    let (healthy, checks) = entity_checks(&app).await;
    assert!(!healthy);
    assert_eq!(checks.len(), 1, "{checks:?}");
    assert_eq!(checks[0].1, "error");
    assert!(checks[0].2.contains("cannot be reached"), "{checks:?}");
    assert!(!checks[0].2.contains("secret"), "{checks:?}");
}
