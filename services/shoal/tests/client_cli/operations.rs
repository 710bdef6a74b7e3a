//! `shoal scale show`, `shoal invocations list|tail`, `shoal poison list|replay`,
//! `shoal breaker pause|resume`, `shoal send`, `shoal diagnostics` and `shoal completions`.

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use shoal_connectors::{ConnectorOptions, StorageQueues};
use shoal_store::invocation_telemetry::{self, FailureRecord, MinuteRecord};
use shoal_store::pool::{PoolConfig, connect_lazy};
use shoal_testkit::azurite::Azurite;

use super::functions::with_app;
use super::harness::{Server, User, function_file, queue_function};

/// `orders` with the queue-triggered function `ship`.
fn with_function(user: &User, storage: &str) {
    with_app(user, storage);
    let project = tempfile::tempdir().unwrap();
    let file = function_file(project.path(), "ship", &queue_function("jobs"));
    user.run(&[
        "func",
        "apply",
        "--app",
        "orders",
        "-f",
        file.to_str().unwrap(),
    ])
    .ok();
}

#[tokio::test]
async fn scale_breaker_and_diagnostics() {
    let server = Server::start().await;
    let user = User::owner_of(&server);
    with_function(&user, "UseDevelopmentStorage=true");

    let scale = user.run(&["scale", "show", "--app", "orders"]).ok();
    assert!(
        scale.stdout.contains("desired  0") && scale.stdout.contains("DECIDED"),
        "{}",
        scale.stdout
    );
    let json = user
        .run(&["scale", "show", "--app", "orders", "-o", "json"])
        .ok()
        .json();
    assert_eq!(json["currentInstances"], 0);
    assert_eq!(user.run(&["scale", "show", "--app", "nosuch"]).code, 4);

    let paused = user
        .run(&["breaker", "pause", "ship", "--app", "orders"])
        .ok();
    assert_eq!(
        paused.stdout,
        "Function ship of app orders: breaker open (paused).\n"
    );
    let resumed = user
        .run(&["breaker", "resume", "ship", "--app", "orders", "-o", "json"])
        .ok()
        .json();
    assert_eq!(resumed["state"], "closed");
    let unknown = user.run(&["breaker", "pause", "nosuch", "--app", "orders"]);
    assert_eq!(unknown.code, 4, "{unknown:#?}");

    let report = user.run(&["diagnostics", "--app", "orders"]).ok();
    assert!(
        report.stdout.starts_with("app orders: ") && report.stdout.contains("STATUS"),
        "{}",
        report.stdout
    );
    let json = user
        .run(&["diagnostics", "--app", "orders", "-o", "json"])
        .ok()
        .json();
    assert!(
        json["checks"].as_array().is_some_and(|c| !c.is_empty()),
        "{json}"
    );

    for shell in ["bash", "zsh", "fish"] {
        let script = user.run(&["completions", shell]).ok();
        assert!(
            script.stdout.contains("invocations") && script.stdout.contains("shoal"),
            "{shell}"
        );
    }
}

#[tokio::test]
async fn poison_list_and_replay_against_azurite() {
    let server = Server::start().await;
    let azurite = Azurite::start().await.unwrap();
    let user = User::owner_of(&server);
    with_function(&user, &azurite.connection_string());
    let queues = StorageQueues::from_connection_string(
        &azurite.connection_string(),
        &ConnectorOptions::default(),
    )
    .unwrap();
    // The trigger queue exists (as a worker's listener makes it) and two messages were poisoned.
    queues
        .queue("jobs")
        .unwrap()
        .create_if_missing()
        .await
        .unwrap();
    let poison = queues.queue("jobs-poison").unwrap();
    poison.create_if_missing().await.unwrap();
    for body in ["b3JkZXIgMQ==", "b3JkZXIgMg=="] {
        poison.enqueue(body).await.unwrap();
    }
    let listed = user
        .run(&["poison", "list", "ship", "--app", "orders", "-o", "json"])
        .ok()
        .json();
    assert_eq!(listed["messages"].as_array().unwrap().len(), 2, "{listed}");
    let table = user
        .run(&["poison", "list", "ship", "--app", "orders"])
        .ok();
    assert!(
        table
            .stdout
            .starts_with("jobs-poison (about 2 messages; trigger queue jobs)"),
        "{}",
        table.stdout
    );
    let id = listed["messages"][0]["messageId"].as_str().unwrap();
    let one = user
        .run(&[
            "poison",
            "replay",
            "ship",
            "--app",
            "orders",
            "--message-id",
            id,
        ])
        .ok();
    assert_eq!(one.stdout, "Replayed 1 messages.\n");
    let rest = user
        .run(&[
            "poison", "replay", "ship", "--app", "orders", "--count", "5", "-o", "json",
        ])
        .ok()
        .json();
    assert_eq!(rest["replayed"], 1);
    let bad = user.run(&[
        "poison", "replay", "ship", "--app", "orders", "--count", "0",
    ]);
    assert_eq!(bad.code, 1, "{bad:#?}");
    assert!(bad.stderr.contains("\n  count: "), "{}", bad.stderr);
    assert_eq!(
        queues
            .queue("jobs")
            .unwrap()
            .approximate_length()
            .await
            .unwrap(),
        2
    );
}

#[tokio::test]
async fn send_puts_a_test_message_on_the_trigger_queue_against_azurite() {
    let server = Server::start().await;
    let azurite = Azurite::start().await.unwrap();
    let user = User::owner_of(&server);
    with_function(&user, &azurite.connection_string());
    let queues = StorageQueues::from_connection_string(
        &azurite.connection_string(),
        &ConnectorOptions::default(),
    )
    .unwrap();
    let jobs = queues.queue("jobs").unwrap();
    jobs.create_if_missing().await.unwrap();

    let sent = user
        .run(&["send", "ship", "--app", "orders", "--body", "order 1"])
        .ok();
    assert!(
        sent.stdout
            .starts_with("Sent 12 bytes to jobs (queueTrigger of function ship); message id "),
        "{}",
        sent.stdout
    );
    let project = tempfile::tempdir().unwrap();
    let file = project.path().join("order.json");
    std::fs::write(&file, r#"{"order": 2}"#).unwrap();
    let json = user
        .run(&[
            "send",
            "ship",
            "--app",
            "orders",
            "--file",
            file.to_str().unwrap(),
            "-o",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(json["destination"], "jobs");
    let peeked = jobs.peek(32).await.unwrap();
    let texts: Vec<&str> = peeked.iter().map(|m| m.text.as_str()).collect();
    // base64, the app's default messageEncoding.
    assert_eq!(texts, ["b3JkZXIgMQ==", "eyJvcmRlciI6IDJ9"]);
    assert_eq!(peeked[1].message_id, json["messageId"].as_str().unwrap());

    // A queue message has no session: a 422 with the field's path, exit 1.
    let bad = user.run(&[
        "send",
        "ship",
        "--app",
        "orders",
        "--body",
        "x",
        "--session-id",
        "s",
    ]);
    assert_eq!(bad.code, 1, "{bad:#?}");
    assert!(bad.stderr.contains("\n  sessionId: "), "{}", bad.stderr);
    // Usage errors name the flag: no body at all, a bad --json, a --property without '='.
    let none = user.run(&["send", "ship", "--app", "orders"]);
    assert_eq!(none.code, 2, "{none:#?}");
    assert!(none.stderr.contains("--body"), "{}", none.stderr);
    let bad_json = user.run(&["send", "ship", "--app", "orders", "--json", "{"]);
    assert_eq!(bad_json.code, 2, "{bad_json:#?}");
    assert!(bad_json.stderr.contains("--json"), "{}", bad_json.stderr);
    let unknown = user.run(&["send", "nosuch", "--app", "orders", "--body", "x"]);
    assert_eq!(unknown.code, 4, "{unknown:#?}");
    // A Reader may not send: exit 3.
    let mut reader = User::new();
    reader.set("SHOAL_URL", &server.base);
    reader.set("SHOAL_TOKEN", &server.token("reader-1", "Reader"));
    let refused = reader.run(&["send", "ship", "--app", "orders", "--body", "x"]);
    assert_eq!(refused.code, 3, "{refused:#?}");
    assert_eq!(jobs.approximate_length().await.unwrap(), 2);
}

fn minute(at: DateTime<Utc>, invocations: i64, failures: i64) -> MinuteRecord {
    let mut buckets = vec![0; shoal_domain::invocation_stats::BUCKETS];
    buckets[shoal_domain::invocation_stats::bucket_of(12)] = invocations;
    MinuteRecord {
        tenant: "contoso".into(),
        app: "orders".into(),
        function: "ship".into(),
        minute: at,
        worker: "w1".into(),
        invocations,
        failures,
        duration_buckets: buckets,
    }
}

/// What a worker's telemetry flush writes (`shoal_worker::telemetry`), written the same way.
async fn flush(server: &Server, minutes: &[MinuteRecord], failures: &[FailureRecord]) {
    let pool = connect_lazy(server.db.url(), &PoolConfig::default()).unwrap();
    let mut tx = shoal_store::begin_platform(&pool).await.unwrap();
    invocation_telemetry::record(&mut tx, minutes, failures)
        .await
        .unwrap();
    shoal_store::commit(tx).await.unwrap();
    pool.close().await;
}

/// Tail's own delay: a line within 2 s of the telemetry row's write. (From a handler's answer the
/// worker's flush, every second, comes first: docs/cli.md.)
#[tokio::test]
async fn invocations_list_and_tail_show_written_telemetry_within_2_seconds() {
    let server = Server::start().await;
    let user = User::owner_of(&server);
    with_function(&user, "UseDevelopmentStorage=true");
    // One minute for both writes, so the second adds to the first whenever the test runs.
    let now = Utc::now().duration_trunc(TimeDelta::minutes(1)).unwrap();
    flush(&server, &[minute(now, 3, 0)], &[]).await;

    let mut tail = user.spawn(&[
        "invocations",
        "tail",
        "--app",
        "orders",
        "--interval-ms",
        "500",
    ]);
    let stderr = BufReader::new(tail.stderr.take().unwrap());
    let (lines_tx, lines) = std::sync::mpsc::channel::<String>();
    let stdout = BufReader::new(tail.stdout.take().unwrap());
    std::thread::spawn(move || {
        stdout
            .lines()
            .map_while(Result::ok)
            .for_each(|l| drop(lines_tx.send(l)))
    });
    // It has read what already happened once it says it follows.
    let following = stderr.lines().next().unwrap().unwrap();
    assert!(following.starts_with("Following app orders"), "{following}");

    let failed = FailureRecord {
        tenant: "contoso".into(),
        app: "orders".into(),
        function: "ship".into(),
        at: Utc::now(),
        invocation_id: uuid::Uuid::now_v7(),
        worker: "w1".into(),
        duration_ms: 40,
        error: "handler answered 500".into(),
        logs: vec!["card declined".into()],
    };
    flush(&server, &[minute(now, 2, 1)], std::slice::from_ref(&failed)).await;
    let written = Instant::now();
    let mut seen = Vec::new();
    while seen.len() < 3 {
        let left = Duration::from_secs(2).saturating_sub(written.elapsed());
        match lines.recv_timeout(left) {
            Ok(line) => seen.push(line),
            Err(_) => panic!("tail printed {seen:?} within 2 s of the write"),
        }
    }
    let _ = tail.kill();
    let _ = tail.wait();
    assert!(
        seen[0].contains("  ship  2 invocation(s), 1 failed, p50 "),
        "only the new attempts: {seen:?}"
    );
    assert!(
        seen[1].contains(&format!(
            "ship  FAILED {} after 40ms: handler answered 500",
            failed.invocation_id
        )),
        "{seen:?}"
    );
    assert_eq!(seen[2], "    card declined");

    let listed = user
        .run(&["invocations", "list", "--app", "orders", "-o", "json"])
        .ok()
        .json();
    // JSON has every minute of the window (idle ones at zero); one of them had the attempts.
    let busy: Vec<&serde_json::Value> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["invocations"] != 0)
        .collect();
    assert!(listed.as_array().unwrap().len() > 1, "{listed}");
    assert_eq!(busy.len(), 1, "{listed}");
    assert_eq!(busy[0]["invocations"], 5, "{listed}");
    assert_eq!(busy[0]["function"], "ship");
    // The table shows only the minutes with attempts: the header and that one.
    let table = user.run(&["invocations", "list", "--app", "orders"]).ok();
    assert_eq!(table.stdout.lines().count(), 2, "{}", table.stdout);
    let failures = user
        .run(&["invocations", "list", "--app", "orders", "--failed"])
        .ok();
    assert!(
        failures.stdout.starts_with("AT") && failures.stdout.contains("handler answered 500"),
        "{}",
        failures.stdout
    );
    let unknown = user.run(&[
        "invocations",
        "list",
        "--app",
        "orders",
        "--function",
        "nosuch",
    ]);
    assert_eq!(unknown.code, 4, "{unknown:#?}");
    let bad = user.run(&[
        "invocations",
        "list",
        "--app",
        "orders",
        "--minutes",
        "5000",
    ]);
    assert_eq!(bad.code, 1, "{bad:#?}");
    assert!(bad.stderr.contains("minutes"), "{}", bad.stderr);
}
