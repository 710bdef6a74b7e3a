//! `shoal dev` as a developer on their machine meets it.
//!
//! Polling: `shoal dev` polls with the local-development maximum polling interval (2 s, as Azure
//! Functions Core Tools do) where an app leaves `maxPollingInterval` unset, not Azure's 1 min.
//! Seen from outside: the idle demo listener's back-off, as its worker reports it in the
//! heartbeats `GET /v1/workers` shows, settles at 2 s and never exceeds it. With Azure's
//! default the back-off would pass 3 s about four seconds after the queue went idle.

use std::process::Stdio;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::Value;
use shoal_testkit::{ScratchDatabase, admin_url};

mod support {
    pub mod dev;
}

/// The local-development maximum (`HostDefaults::LOCAL_DEVELOPMENT`), in milliseconds.
const LOCAL_MAX_POLLING_MS: u64 = 2000;

/// Heartbeats showing the idle listener at the maximum before the test is satisfied: the
/// back-off has stopped growing, not merely passed through 2 s.
const SETTLED_HEARTBEATS: usize = 3;

#[tokio::test]
async fn dev_workers_poll_at_most_every_two_seconds() {
    let database = ScratchDatabase::create(&admin_url(), "shoal_dev_polling")
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dev =
        support::dev::DevProcess::start(database.url(), dir.path(), "warn", Stdio::null()).await;
    let (base, banner) = (&dev.base, &dev.banner);
    let token = support::dev::printed(banner, "export SHOAL_TOKEN=");
    let connection = support::dev::printed(banner, "connection string ");

    // One message makes the scheduler place the demo app, whose listener then goes idle.
    let queues =
        shoal_connectors::StorageQueues::from_connection_string(&connection, &Default::default())
            .unwrap();
    let input = queues.queue("demo-in").unwrap();
    input.create_if_missing().await.unwrap();
    let b64 = base64::engine::general_purpose::STANDARD;
    input.enqueue(&b64.encode("world")).await.unwrap();

    let client = reqwest::Client::new();
    let until = Instant::now() + Duration::from_secs(60);
    let mut settled = Vec::new();
    let mut seen = Vec::new();
    while settled.len() < SETTLED_HEARTBEATS {
        let workers: Value = client
            .get(format!("{base}/v1/workers"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        for worker in workers["items"].as_array().unwrap() {
            for listener in worker["listeners"].as_array().unwrap() {
                if listener["tenant"] != "demo" || listener["trigger"] != "queueTrigger" {
                    continue;
                }
                let backoff = listener["currentBackoffMs"].as_u64().unwrap();
                seen.push(backoff);
                assert!(
                    backoff <= LOCAL_MAX_POLLING_MS,
                    "a dev listener waited {backoff} ms between polls; seen {seen:?}"
                );
                let beat = worker["lastHeartbeat"].as_str().unwrap().to_owned();
                if backoff == LOCAL_MAX_POLLING_MS && !settled.contains(&beat) {
                    settled.push(beat);
                }
            }
        }
        assert!(
            Instant::now() < until,
            "the idle listener's back-off never settled at {LOCAL_MAX_POLLING_MS} ms; seen {seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// A developer's current Storage SDK sends a newer `x-ms-version` than the Azurite `shoal dev`
/// runs knows (azure-storage-queue 12.18 sends 2026-10-06); with Azurite's version check on,
/// every call of theirs against the printed connection string was a 400 "API version ... is not
/// supported by Azurite". `shoal dev` starts Azurite with `--skipApiVersionCheck`.
#[tokio::test]
async fn dev_azurite_serves_a_newer_storage_sdk() {
    /// Newer than any version Azurite 3.35 knows.
    const SDK_VERSION: &str = "2026-10-06";
    let database = ScratchDatabase::create(&admin_url(), "shoal_dev_sdk")
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dev =
        support::dev::DevProcess::start(database.url(), dir.path(), "warn", Stdio::null()).await;
    let connection = support::dev::printed(&dev.banner, "connection string ");
    let endpoint = connection
        .split(';')
        .find_map(|part| part.strip_prefix("QueueEndpoint="))
        .unwrap_or_else(|| panic!("a queue endpoint in {connection}"));
    let sas = shoal_connectors::account_sas(
        shoal_devstack::azurite::ACCOUNT_NAME,
        shoal_devstack::azurite::ACCOUNT_KEY,
        chrono::Utc::now() + chrono::Duration::hours(1),
    )
    .unwrap();
    let response = reqwest::Client::new()
        .get(format!(
            "{}/demo-in/messages?peekonly=true&{sas}",
            endpoint.trim_end_matches('/')
        ))
        .header("x-ms-version", SDK_VERSION)
        .send()
        .await
        .unwrap();
    let status = response.status();
    let body = response.text().await.unwrap();
    assert!(
        status.is_success(),
        "peeking at the demo's queue with x-ms-version {SDK_VERSION}: {status} {body}"
    );
    assert!(body.contains("<QueueMessagesList"), "{body}");
}

/// `shoal send` end to end, every part a real process or service: the CLI puts a message on the
/// demo function's trigger queue through `shoal dev`'s API (Azurite), the scheduler places the
/// app, a worker delivers the message to the demo handler, and its answer lands in `demo-out`.
#[tokio::test]
async fn a_message_sent_with_shoal_send_reaches_the_demo_handler() {
    let database = ScratchDatabase::create(&admin_url(), "shoal_dev_send")
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dev =
        support::dev::DevProcess::start(database.url(), dir.path(), "warn", Stdio::null()).await;
    let token = support::dev::printed(&dev.banner, "export SHOAL_TOKEN=");
    let connection = support::dev::printed(&dev.banner, "connection string ");

    let sent = std::process::Command::new(env!("CARGO_BIN_EXE_shoal"))
        .args([
            "send", "greet", "--app", "hello", "--body", "Ada", "-o", "json",
        ])
        .env("SHOAL_URL", &dev.base)
        .env("SHOAL_TOKEN", &token)
        .env("SHOAL_TENANT", "demo")
        .env("XDG_CONFIG_HOME", dir.path())
        .env_remove("SHOAL_PROFILE")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&sent.stdout);
    assert!(
        sent.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    let sent: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(sent["destination"], "demo-in", "{sent}");

    let queues =
        shoal_connectors::StorageQueues::from_connection_string(&connection, &Default::default())
            .unwrap();
    let output = queues.queue("demo-out").unwrap();
    let b64 = base64::engine::general_purpose::STANDARD;
    let until = Instant::now() + Duration::from_secs(90);
    loop {
        let texts: Vec<String> = output
            .peek(32)
            .await
            .unwrap_or_default()
            .into_iter()
            .map(|m| {
                b64.decode(m.text.trim())
                    .ok()
                    .and_then(|bytes| String::from_utf8(bytes).ok())
                    .unwrap_or(m.text)
            })
            .collect();
        if texts.iter().any(|t| t.contains("Hello, Ada!")) {
            break;
        }
        assert!(
            Instant::now() < until,
            "the demo handler's answer to the sent message is not in demo-out: {texts:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
