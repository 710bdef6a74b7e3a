//! `shoal dev` runs the local Service Bus stand-in and the demo's Service Bus function: the two
//! Python commands its banner prints (send an order with Microsoft's SDK, read the receipts)
//! work as printed, and the receipt the handler wrote through the `serviceBus` output binding
//! arrives on `demo-receipts`.

use std::process::Stdio;
use std::time::{Duration, Instant};

use shoal_testkit::{ScratchDatabase, admin_url};

mod support {
    pub mod dev;
}

/// The shell command the banner prints between the line ending in `after` and the next blank
/// line (continuation lines included).
fn command_after(banner: &str, after: &str) -> String {
    let mut lines = banner
        .lines()
        .skip_while(|l| !l.trim_end().ends_with(after));
    lines
        .next()
        .unwrap_or_else(|| panic!("`{after}` is printed: {banner}"));
    let command: Vec<&str> = lines
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| !l.trim().is_empty())
        .collect();
    assert!(!command.is_empty(), "a command follows `{after}`: {banner}");
    command.join("\n")
}

/// Runs a printed command from the repository root, where `make dev` runs, with the SDK
/// interpreter the tests use standing in for `.shoal/python/bin/python`.
fn run(command: &str) -> std::process::Output {
    let python = shoal_testkit::python::interpreter();
    let command = command.replace(".shoal/python/bin/python", &python.display().to_string());
    std::process::Command::new("bash")
        .args(["-c", &command])
        .current_dir(shoal_testkit::python::repo_root())
        .output()
        .expect("bash runs")
}

#[tokio::test]
async fn dev_demo_takes_orders_from_the_local_service_bus() {
    let database = ScratchDatabase::create(&admin_url(), "shoal_dev_service_bus")
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dev =
        support::dev::DevProcess::start(database.url(), dir.path(), "warn", Stdio::null()).await;
    let banner = &dev.banner;
    let connection = support::dev::printed(banner, "connection string Endpoint=sb://");
    assert!(
        connection.ends_with("UseDevelopmentEmulator=true"),
        "{connection}"
    );

    let send = command_after(banner, "e.g. Python:");
    let sent = run(&send);
    assert!(
        sent.status.success(),
        "the printed send command works: {}",
        String::from_utf8_lossy(&sent.stderr)
    );

    // The scheduler places the app from the queue's active message count; the receipt follows.
    let read = command_after(banner, "and read the receipts:");
    let until = Instant::now() + Duration::from_secs(90);
    let receipt = loop {
        let out = run(&read);
        assert!(
            out.status.success(),
            "the printed read command works: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        if !text.is_empty() {
            break text;
        }
        assert!(Instant::now() < until, "no receipt on demo-receipts");
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let receipt: serde_json::Value = serde_json::from_str(&receipt).expect("the receipt is JSON");
    assert_eq!(receipt["received"]["item"], "tea", "{receipt}");
    assert_eq!(receipt["function"], "orders", "{receipt}");
}
