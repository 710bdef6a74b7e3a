//! Storage queues against a real Azurite (started per test, without
//! `--skipApiVersionCheck`, so the pinned service version is checked too).

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use base64::Engine;
use chrono::{TimeDelta, Utc};
use shoal_connectors::{ConnectorOptions, Queue, QueueError, QueueMessage, StorageQueues};
use shoal_domain::connection::{ConnectionKind, ConnectionSpec, resolve};
use shoal_testkit::azurite::{ACCOUNT_KEY, ACCOUNT_NAME, Azurite};

const VISIBILITY: Duration = Duration::from_secs(30);

fn spec(pairs: &[(String, String)], connection: &str) -> ConnectionSpec {
    let settings: BTreeMap<String, String> = pairs.iter().cloned().collect();
    resolve(ConnectionKind::StorageQueue, Some(connection), &settings)
        .expect("the connection resolves")
}

fn connect_string(connection_string: &str) -> Result<StorageQueues> {
    let spec = spec(
        &[(
            "AzureWebJobsStorage".to_owned(),
            connection_string.to_owned(),
        )],
        "Storage",
    );
    Ok(StorageQueues::connect(&spec, &ConnectorOptions::default())?)
}

async fn created_queue(azurite: &Azurite, name: &str) -> Result<Queue> {
    let queue = connect_string(&azurite.connection_string())?.queue(name)?;
    queue.create_if_missing().await?;
    Ok(queue)
}

/// Receives until a message arrives or `timeout` passes.
async fn receive_one(queue: &Queue, timeout: Duration) -> Result<QueueMessage> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(message) = queue.receive(1, VISIBILITY).await?.into_iter().next() {
            return Ok(message);
        }
        if tokio::time::Instant::now() >= deadline {
            bail!("no message became visible within {timeout:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn assert_no_secrets(text: &str, secrets: &[&str]) {
    for secret in secrets {
        assert!(!text.contains(secret), "leaks a secret: {text}");
    }
    for (at, _) in text.match_indices("sig=") {
        assert!(
            text[at..].starts_with("sig=<redacted>"),
            "leaks a signature: {text}"
        );
    }
}

#[tokio::test]
async fn create_if_missing_is_idempotent() -> Result<()> {
    let azurite = Azurite::start().await?;
    let queue = connect_string(&azurite.connection_string())?.queue("orders")?;

    queue.create_if_missing().await?;
    queue.create_if_missing().await?;

    assert_eq!(queue.name(), "orders");
    assert_eq!(queue.approximate_length().await?, 0);
    let creates = |line: &str| line.contains("\"PUT /devstoreaccount1/orders?");
    azurite
        .wait_for_requests(2, Duration::from_secs(5), creates)
        .await?;
    assert_eq!(
        azurite.requests_matching(creates),
        2,
        "one request per create"
    );
    Ok(())
}

#[tokio::test]
async fn enqueued_message_is_received_with_metadata() -> Result<()> {
    let azurite = Azurite::start().await?;
    let queue = created_queue(&azurite, "orders").await?;
    let text = r#"{"order": 1, "note": "<fish & chips>"}"#;
    let before = Utc::now() - TimeDelta::seconds(5);

    queue.enqueue(text).await?;
    assert_eq!(queue.approximate_length().await?, 1);
    let received = queue.receive(32, VISIBILITY).await?;

    assert_eq!(received.len(), 1);
    let message = &received[0];
    let after = Utc::now() + TimeDelta::seconds(5);
    assert_eq!(message.text, text);
    assert_eq!(message.dequeue_count, 1);
    assert!(!message.message_id.is_empty() && !message.pop_receipt.is_empty());
    assert!(
        before <= message.insertion_time && message.insertion_time <= after,
        "{message:?}"
    );
    // The default time-to-live is seven days.
    assert_eq!(
        (message.expiration_time - message.insertion_time).num_days(),
        7,
        "{message:?}"
    );
    let invisible_for = message.next_visible_time - Utc::now();
    assert!(
        invisible_for > TimeDelta::seconds(20) && invisible_for <= TimeDelta::seconds(35),
        "{message:?}"
    );
    assert!(queue.receive(32, VISIBILITY).await?.is_empty());
    Ok(())
}

#[tokio::test]
async fn each_operation_is_one_request() -> Result<()> {
    let azurite = Azurite::start().await?;
    let queue = created_queue(&azurite, "orders").await?;
    let gets = |line: &str| line.contains("\"GET /devstoreaccount1/orders/messages?");
    let wait = Duration::from_secs(5);

    queue.receive(16, VISIBILITY).await?;
    azurite.wait_for_requests(1, wait, gets).await?;
    queue.receive(16, VISIBILITY).await?;
    azurite.wait_for_requests(2, wait, gets).await?;
    queue.enqueue("x").await?;

    // Give a stray extra request the time to show up in the log before counting.
    azurite
        .wait_for_requests(1, wait, |l| {
            l.contains("\"POST /devstoreaccount1/orders/messages?")
        })
        .await?;
    assert_eq!(azurite.requests_matching(gets), 2);
    assert_eq!(
        azurite.requests_containing("\"POST /devstoreaccount1/orders/messages?"),
        1
    );
    assert_eq!(azurite.requests_containing("comp=metadata"), 0);
    Ok(())
}

#[tokio::test]
async fn update_visibility_hides_the_message_until_the_timeout() -> Result<()> {
    let azurite = Azurite::start().await?;
    let queue = created_queue(&azurite, "orders").await?;
    queue.enqueue("retry me").await?;
    let first = receive_one(&queue, Duration::from_secs(5)).await?;

    let receipt = queue
        .update_visibility(
            &first.message_id,
            &first.pop_receipt,
            Duration::from_secs(2),
        )
        .await?;

    assert_ne!(receipt.pop_receipt, first.pop_receipt);
    let until = receipt.next_visible_time - Utc::now();
    assert!(
        until > TimeDelta::zero() && until <= TimeDelta::seconds(3),
        "{receipt:?}"
    );
    assert!(queue.receive(1, VISIBILITY).await?.is_empty(), "invisible");
    let again = receive_one(&queue, Duration::from_secs(10)).await?;
    assert_eq!(again.message_id, first.message_id);
    assert_eq!(again.dequeue_count, 2);
    assert_eq!(again.text, "retry me");
    // Both earlier receipts are stale now.
    for stale in [&first.pop_receipt, &receipt.pop_receipt] {
        match queue.delete(&first.message_id, stale).await {
            Err(QueueError::MessageNotFound { queue, message_id }) => {
                assert_eq!(
                    (queue.as_str(), message_id.as_str()),
                    ("orders", first.message_id.as_str())
                );
            }
            other => panic!("expected MessageNotFound, got {other:?}"),
        }
    }
    queue.delete(&again.message_id, &again.pop_receipt).await?;
    Ok(())
}

#[tokio::test]
async fn zero_visibility_timeout_makes_the_message_visible_at_once() -> Result<()> {
    let azurite = Azurite::start().await?;
    let queue = created_queue(&azurite, "orders").await?;
    queue.enqueue("again").await?;
    let first = receive_one(&queue, Duration::from_secs(5)).await?;

    queue
        .update_visibility(&first.message_id, &first.pop_receipt, Duration::ZERO)
        .await?;

    let again = receive_one(&queue, Duration::from_secs(5)).await?;
    assert_eq!(again.message_id, first.message_id);
    Ok(())
}

#[tokio::test]
async fn delete_removes_the_message() -> Result<()> {
    let azurite = Azurite::start().await?;
    let queue = created_queue(&azurite, "orders").await?;
    queue.enqueue("done").await?;
    let message = receive_one(&queue, Duration::from_secs(5)).await?;

    queue
        .delete(&message.message_id, &message.pop_receipt)
        .await?;

    assert_eq!(queue.approximate_length().await?, 0);
    assert!(matches!(
        queue
            .update_visibility(&message.message_id, &message.pop_receipt, Duration::ZERO)
            .await,
        Err(QueueError::MessageNotFound { .. })
    ));
    Ok(())
}

#[tokio::test]
async fn sas_connection_string_is_used_as_given() -> Result<()> {
    let azurite = Azurite::start().await?;
    let sas =
        shoal_connectors::account_sas(ACCOUNT_NAME, ACCOUNT_KEY, Utc::now() + TimeDelta::hours(1))?;
    let connection_string = format!(
        "QueueEndpoint={};SharedAccessSignature=?{sas}",
        azurite.queue_endpoint()
    );
    let queues = connect_string(&connection_string)?;
    assert!(queues.describe().contains("shared access signature"));
    let queue = queues.queue("orders")?;

    queue.create_if_missing().await?;
    queue.enqueue("via sas").await?;

    assert_eq!(
        receive_one(&queue, Duration::from_secs(5)).await?.text,
        "via sas"
    );
    Ok(())
}

#[tokio::test]
async fn wrong_account_key_is_unauthorized_without_leaking_secrets() -> Result<()> {
    let azurite = Azurite::start().await?;
    let key = base64::engine::general_purpose::STANDARD.encode([7u8; 64]);
    let connection_string = format!(
        "DefaultEndpointsProtocol=http;AccountName={ACCOUNT_NAME};AccountKey={key};QueueEndpoint={}",
        azurite.queue_endpoint()
    );
    let queues = connect_string(&connection_string)?;
    let queue = queues.queue("orders")?;

    let err = queue.create_if_missing().await.unwrap_err();

    assert!(matches!(err, QueueError::Unauthorized(_)), "{err:?}");
    assert!(!err.is_transient());
    assert_no_secrets(&format!("{err} {err:?} {}", queues.describe()), &[&key]);
    Ok(())
}

#[tokio::test]
async fn unreachable_storage_is_transient_and_redacted() -> Result<()> {
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let connection_string = format!(
        "DefaultEndpointsProtocol=http;AccountName={ACCOUNT_NAME};AccountKey={ACCOUNT_KEY};QueueEndpoint=http://127.0.0.1:{port}/{ACCOUNT_NAME}"
    );
    let queue = connect_string(&connection_string)?.queue("orders")?;

    let err = queue.receive(1, VISIBILITY).await.unwrap_err();

    assert!(matches!(err, QueueError::Unavailable(_)), "{err:?}");
    assert!(err.is_transient());
    assert_no_secrets(&format!("{err} {err:?}"), &[ACCOUNT_KEY]);
    Ok(())
}

#[tokio::test]
async fn missing_queue_is_queue_not_found() -> Result<()> {
    let azurite = Azurite::start().await?;
    let queue = connect_string(&azurite.connection_string())?.queue("nowhere")?;

    let results = [
        queue.receive(1, VISIBILITY).await.map(|_| ()),
        queue.enqueue("x").await,
        queue.approximate_length().await.map(|_| ()),
    ];

    for result in results {
        match result {
            Err(QueueError::QueueNotFound { queue }) => assert_eq!(queue, "nowhere"),
            other => panic!("expected QueueNotFound, got {other:?}"),
        }
    }
    Ok(())
}

#[tokio::test]
async fn service_bus_connection_is_refused() -> Result<()> {
    let settings = [(
        "Bus".to_owned(),
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=c2VjcmV0"
            .to_owned(),
    )];
    let settings: BTreeMap<String, String> = settings.into_iter().collect();
    let spec = resolve(ConnectionKind::ServiceBus, Some("Bus"), &settings)?;

    let result = StorageQueues::connect(&spec, &ConnectorOptions::default());

    assert!(matches!(result, Err(QueueError::InvalidConnection(_))));
    Ok(())
}

fn identity_spec(azurite: &Azurite) -> ConnectionSpec {
    spec(&azurite.client_secret_settings("Store"), "Store")
}

#[tokio::test]
async fn client_secret_identity_connection_works_over_https() -> Result<()> {
    let azurite = Azurite::start_oauth().await?;
    let options = ConnectorOptions {
        extra_root_ca_pem: Some(azurite.ca_pem().as_bytes().to_vec()),
        ..ConnectorOptions::default()
    };
    let queues = StorageQueues::connect(&identity_spec(&azurite), &options)?;
    let queue = queues.queue("orders")?;

    queue.create_if_missing().await?;
    queue.enqueue("with a token").await?;
    let message = receive_one(&queue, Duration::from_secs(5)).await?;
    queue
        .delete(&message.message_id, &message.pop_receipt)
        .await?;

    assert_eq!(message.text, "with a token");
    assert!(
        queues.describe().contains("clientsecret"),
        "{}",
        queues.describe()
    );
    // The token is cached across operations.
    assert_eq!(azurite.token_requests(), 1);
    let bearer = azurite.requests_containing("\"GET /devstoreaccount1/orders/messages?");
    assert!(bearer >= 1);
    Ok(())
}

#[tokio::test]
async fn identity_connection_without_the_ca_is_a_tls_error() -> Result<()> {
    let azurite = Azurite::start_oauth().await?;
    let queue = StorageQueues::connect(&identity_spec(&azurite), &ConnectorOptions::default())?
        .queue("orders")?;

    let err = queue.create_if_missing().await.unwrap_err();

    assert!(matches!(err, QueueError::Tls(_)), "{err:?}");
    assert_no_secrets(
        &format!("{err} {err:?}"),
        &[shoal_testkit::azurite::CLIENT_SECRET],
    );
    Ok(())
}

#[tokio::test]
async fn wrong_client_secret_is_unauthorized() -> Result<()> {
    let azurite = Azurite::start_oauth().await?;
    let mut settings = azurite.client_secret_settings("Store");
    let secret = settings
        .iter_mut()
        .find(|(k, _)| k == "Store__clientSecret")
        .context("settings have a client secret")?;
    secret.1 = "not-the-secret-at-all".to_owned();
    let options = ConnectorOptions {
        extra_root_ca_pem: Some(azurite.ca_pem().as_bytes().to_vec()),
        ..ConnectorOptions::default()
    };
    let queue = StorageQueues::connect(&spec(&settings, "Store"), &options)?.queue("orders")?;

    let err = queue.create_if_missing().await.unwrap_err();

    assert!(matches!(err, QueueError::Unauthorized(_)), "{err:?}");
    assert_no_secrets(&format!("{err} {err:?}"), &["not-the-secret-at-all"]);
    Ok(())
}
