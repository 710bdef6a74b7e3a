//! `shoal local-bus`: the stand-in as a process of its own, as Compose runs it. Microsoft's
//! `azure-servicebus` Python SDK sends to and receives from the queue its `--config` file
//! declares, with the connection string the process printed; SIGTERM stops it cleanly; a bad
//! file or flag is refused with the flag and the JSON path named.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const SHOAL: &str = env!("CARGO_BIN_EXE_shoal");

/// Sends one message with application properties and reads it back, printing what arrived.
const ROUND_TRIP: &str = r#"
import json, sys
from azure.servicebus import ServiceBusClient, ServiceBusMessage
client = ServiceBusClient.from_connection_string(sys.argv[1])
with client.get_queue_sender(sys.argv[2]) as sender:
    sender.send_messages(ServiceBusMessage("tea for two", application_properties={"table": 7}))
with client.get_queue_receiver(sys.argv[2], max_wait_time=10) as receiver:
    got = receiver.receive_messages(max_message_count=1, max_wait_time=10)
    for m in got:
        receiver.complete_message(m)
    def table(m):  # the SDK gives the property names as bytes or str, by version
        return {(k.decode() if isinstance(k, bytes) else k): v
                for k, v in (m.application_properties or {}).items()}.get("table")
    print(json.dumps([{"body": str(m), "table": table(m)} for m in got]))
"#;

const CONFIG: &str = r#"{"UserConfig": {
    "Namespaces": [{"Name": "compose", "Queues": [{"Name": "orders", "Properties": {"MaxDeliveryCount": 3}}]}],
    "SharedAccessPolicies": [{"Name": "app", "Key": "bG9jYWwtYnVzLXRlc3Qta2V5LW5vdC1hLXNlY3JldA==", "Rights": ["Manage", "Send", "Listen"]}]
}}"#;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn local_bus(args: &[&str]) -> Command {
    let mut command = Command::new(SHOAL);
    command
        .arg("local-bus")
        .args(args)
        .env_remove("SHOAL_LOCAL_BUS_LISTEN")
        .env_remove("SHOAL_LOCAL_BUS_CONFIG")
        .env_remove("SHOAL_LOCAL_BUS_HOST")
        .env("RUST_LOG", "warn");
    command
}

/// The running process and the lines it printed up to the management API's (the banner's last).
fn start(command: &mut Command) -> (Child, Vec<String>) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut banner = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        let last = line.trim_start().starts_with("management API");
        banner.push(line);
        if last {
            return (child, banner);
        }
    }
    let status = child.wait().unwrap();
    panic!("shoal local-bus ended ({status}) before printing its banner: {banner:?}");
}

fn printed<'a>(banner: &'a [String], label: &str) -> &'a str {
    banner
        .iter()
        .find_map(|l| l.trim_start().strip_prefix(label))
        .map(str::trim)
        .unwrap_or_else(|| panic!("`{label}` is printed: {banner:#?}"))
}

fn sigterm(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits up to `within` for the process to exit on its own.
fn exit_within(child: &mut Child, within: Duration) -> std::process::ExitStatus {
    let until = std::time::Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if std::time::Instant::now() > until {
            child.kill().unwrap();
            panic!("still running {within:?} after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test]
async fn the_sdk_round_trips_through_the_queue_of_its_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("local-bus.json");
    std::fs::write(&config, CONFIG).unwrap();
    let listen = format!("127.0.0.1:{}", free_port());
    let (mut child, banner) = start(
        local_bus(&["--listen", &listen])
            .env("SHOAL_LOCAL_BUS_CONFIG", &config)
            .env("SHOAL_LOCAL_BUS_HOST", "127.0.0.1"),
    );
    assert!(
        printed(&banner, "namespace compose:").starts_with("queues orders;"),
        "{banner:#?}"
    );
    let connection = printed(&banner, "connection string");
    assert_eq!(
        connection,
        format!(
            "Endpoint=sb://{listen};SharedAccessKeyName=app;SharedAccessKey=\
             bG9jYWwtYnVzLXRlc3Qta2V5LW5vdC1hLXNlY3JldA==;UseDevelopmentEmulator=true"
        )
    );

    let script = dir.path().join("round_trip.py");
    std::fs::write(&script, ROUND_TRIP).unwrap();
    let received = shoal_testkit::python::run_json(
        &script,
        &[connection, "orders"],
        &Default::default(),
        Duration::from_secs(60),
    )
    .await
    .unwrap();
    assert_eq!(
        received,
        serde_json::json!([{"body": "tea for two", "table": 7}])
    );

    // The management API answers on the same port under the printed address.
    let management = printed(&banner, "management API");
    assert_eq!(management, format!("http://{listen}/"));

    sigterm(&child);
    let status = exit_within(&mut child, Duration::from_secs(10));
    assert!(status.success(), "SIGTERM ends it cleanly: {status}");
}

#[test]
fn on_every_address_it_prints_the_host_it_is_told_or_localhost() {
    let port = free_port();
    for (host, expected) in [(Some("servicebus"), "servicebus"), (None, "localhost")] {
        let mut command = local_bus(&["--listen", &format!("0.0.0.0:{port}")]);
        if let Some(host) = host {
            command.args(["--host", host]);
        }
        let (mut child, banner) = start(&mut command);
        let connection = printed(&banner, "connection string");
        assert!(
            connection.starts_with(&format!(
                "Endpoint=sb://{expected}:{port};SharedAccessKeyName=RootManageSharedAccessKey;"
            )),
            "{connection}"
        );
        assert!(
            printed(&banner, "listen-only connection string")
                .contains("SharedAccessKeyName=ListenOnly;"),
            "{banner:#?}"
        );
        assert!(
            printed(&banner, "namespace localbus:").contains("queues none; topics none"),
            "{banner:#?}"
        );
        sigterm(&child);
        assert!(exit_within(&mut child, Duration::from_secs(10)).success());
    }
}

#[test]
fn bad_files_and_flags_are_refused_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("bad.json");
    std::fs::write(
        &config,
        r#"{"UserConfig": {"Namespaces": [{"Name": "n", "Queues": [{"Name": "q", "Properties": {"LockDurration": "PT1M"}}]}]}}"#,
    )
    .unwrap();
    let port = free_port().to_string();
    let listen = format!("127.0.0.1:{port}");
    let cases: [(Vec<&str>, &[&str]); 4] = [
        (
            vec!["--listen", &listen, "--config", config.to_str().unwrap()],
            &[
                "--config",
                "UserConfig.Namespaces[0].Queues[0].Properties",
                "LockDurration",
            ],
        ),
        (
            vec![
                "--listen",
                &listen,
                "--config",
                "/nonexistent/local-bus.json",
            ],
            &["--config /nonexistent/local-bus.json"],
        ),
        (
            vec!["--listen", &listen, "--host", "http://servicebus"],
            &["--host", "not a host name"],
        ),
        (vec!["--listen", &port], &["--listen"]),
    ];
    for (args, expected) in cases {
        let output = local_bus(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} is refused");
        for needle in expected {
            assert!(stderr.contains(needle), "{args:?}: `{needle}` in {stderr}");
        }
    }
}
