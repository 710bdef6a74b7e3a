//! A handler that answers 1 GiB cannot grow a `shoal worker` process by more than its answer
//! cap (plus 50 MiB), and the worker keeps delivering another app's messages meanwhile. The
//! flooding app takes one message at a time (`batchSize` 1), so what is measured is one
//! answer's cost; the process's peak resident size (VmHWM) is read from /proc.

#[path = "support/host_identity.rs"]
mod host_identity;
#[path = "../../worker/tests/worker/support.rs"]
#[allow(dead_code)]
mod support;
#[path = "support/worker_processes.rs"]
#[allow(dead_code)]
mod worker_processes;

use std::time::Duration;

use serde_json::json;
use shoal_testkit::flood::{FloodingHandler, Framing};
use shoal_testkit::handler::Behaviour;
use support::{Harness, base64, queue_trigger};
use worker_processes::spawn_worker_env;

const WAIT: Duration = Duration::from_secs(120);
const CAP: u64 = 8 * 1024 * 1024;
const FLOODS: u64 = 3;
const MARGIN: u64 = 50 * 1024 * 1024;

fn peak_resident_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("VmHWM in /proc/pid/status");
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("a number of kB");
    kib * 1024
}

#[tokio::test]
async fn a_gigabyte_answer_grows_the_worker_by_no_more_than_the_cap() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    let flood = FloodingHandler::start(1 << 30, Framing::Chunked).await?;
    h.put_app(json!({}), json!({})).await?;
    h.put_function("steady", queue_trigger("steady")).await?;
    h.put_app_named(
        "flood",
        json!({"extensions": {"queues": {"batchSize": 1, "maxDequeueCount": 1}}}),
        json!({"handler": {"url": flood.url().as_str(), "timeoutSeconds": 60}}),
    )
    .await?;
    h.put_function_in("flood", "drink", queue_trigger("flood"))
        .await?;
    let cap = CAP.to_string();
    let worker = spawn_worker_env(
        &h,
        "w-bounded",
        &["--all-apps"],
        &[("SHOAL_MAX_RESPONSE_BYTES", &cap)],
    );
    let pid = worker.child().id();

    // Warm: the other app's deliveries flow, and that is the baseline.
    for i in 0..10 {
        h.enqueue("steady", &base64(&format!("warm {i}"))).await?;
    }
    h.handler.wait_for(10, WAIT).await?;
    let baseline = peak_resident_bytes(pid);

    for i in 0..FLOODS {
        h.enqueue("flood", &base64(&format!("flood {i}"))).await?;
    }
    for i in 0..10 {
        h.enqueue("steady", &base64(&format!("during {i}"))).await?;
    }
    // Every flood delivery fails on the cap (one attempt each, then poison), and the other
    // app's messages are all delivered meanwhile.
    let poisoned = h
        .wait_for_messages("flood-poison", FLOODS as usize, WAIT)
        .await?;
    assert_eq!(poisoned.len(), FLOODS as usize);
    h.handler.wait_for(20, WAIT).await?;
    assert!(flood.connections() >= FLOODS as usize);

    let peak = peak_resident_bytes(pid);
    let grown = peak.saturating_sub(baseline);
    let bound = CAP + MARGIN;
    eprintln!(
        "worker peak {} MiB, grown {} MiB over the baseline (bound {} MiB)",
        peak >> 20,
        grown >> 20,
        bound >> 20
    );
    assert!(
        grown <= bound,
        "the worker grew by {} MiB (peak {} MiB), more than {} MiB",
        grown >> 20,
        peak >> 20,
        bound >> 20
    );
    assert!(worker.child().id() == pid);
    Ok(())
}

/// A `shoal serve` process, killed and reaped when dropped.
struct ApiProcess(std::process::Child);

impl Drop for ApiProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `shoal serve` on the harness's database, allowing loopback, with the answer cap.
fn spawn_api(h: &Harness, port: u16) -> ApiProcess {
    let child = std::process::Command::new(worker_processes::SHOAL)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .env("DATABASE_URL", &h.database_url)
        .env("SHOAL_SECRET_KEY", h.secret_key.to_base64())
        .env("SHOAL_EGRESS_ALLOW", shoal_testkit::EGRESS_ALLOW_LOOPBACK)
        .env("SHOAL_MAX_RESPONSE_BYTES", CAP.to_string())
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("shoal serve starts");
    ApiProcess(child)
}

fn token(h: &Harness, args: &[&str]) -> String {
    let output = std::process::Command::new(worker_processes::SHOAL)
        .arg("token")
        .args(args)
        .env("DATABASE_URL", &h.database_url)
        .env("SHOAL_SECRET_KEY", h.secret_key.to_base64())
        .output()
        .expect("shoal token runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

#[tokio::test]
async fn a_gigabyte_forwarded_answer_grows_the_api_by_no_more_than_the_cap() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    let flood = FloodingHandler::start(1 << 30, Framing::Chunked).await?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let api = spawn_api(&h, port);
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let deadline = std::time::Instant::now() + WAIT;
    while http
        .get(format!("{base}/readyz"))
        .send()
        .await
        .map(|r| r.status().is_success())
        .ok()
        != Some(true)
    {
        anyhow::ensure!(
            std::time::Instant::now() < deadline,
            "the API did not become ready"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let admin = token(&h, &["--subject", "ops", "--platform-admin"]);
    let app = json!({
        "handler": {"url": flood.url().as_str(), "timeoutSeconds": 60},
        "hostConfig": {"version": "2.0", "customHandler": {
            "description": {"defaultExecutablePath": "handler"},
            "enableForwardingHttpRequest": true
        }}
    });
    let created = http
        .put(format!("{base}/v1/tenants/contoso/apps/flood"))
        .bearer_auth(&admin)
        .json(&app)
        .send()
        .await?;
    anyhow::ensure!(created.status().is_success(), "{}", created.text().await?);
    let function = json!({"bindings": [
        {"type": "httpTrigger", "direction": "in", "name": "req", "methods": ["get"]},
        {"type": "http", "direction": "out", "name": "res"}
    ]});
    let created = http
        .put(format!(
            "{base}/v1/tenants/contoso/apps/flood/functions/drink"
        ))
        .bearer_auth(&admin)
        .json(&function)
        .send()
        .await?;
    anyhow::ensure!(created.status().is_success(), "{}", created.text().await?);
    let invoker = token(
        &h,
        &[
            "--subject",
            "caller",
            "--tenant",
            "contoso",
            "--role",
            "Function Invoker",
        ],
    );
    let call = || {
        http.get(format!("{base}/webhooks/contoso/flood/drink"))
            .bearer_auth(&invoker)
            .send()
    };
    // The baseline: after start-up and the writes above, before any answer was read.
    let baseline = peak_resident_bytes(api.0.id());
    for _ in 0..3 {
        let response = call().await?;
        assert_eq!(response.status(), reqwest::StatusCode::BAD_GATEWAY);
        let body = response.text().await?;
        assert!(body.contains(&format!("more than {CAP} bytes")), "{body}");
    }
    let peak = peak_resident_bytes(api.0.id());
    let grown = peak.saturating_sub(baseline);
    let bound = CAP + MARGIN;
    eprintln!(
        "API peak {} MiB, grown {} MiB over the baseline (bound {} MiB)",
        peak >> 20,
        grown >> 20,
        bound >> 20
    );
    assert!(
        http.get(format!("{base}/healthz"))
            .send()
            .await?
            .status()
            .is_success()
    );
    drop(api);
    assert!(
        grown <= bound,
        "the API grew by {} MiB, more than {} MiB",
        grown >> 20,
        bound >> 20
    );
    Ok(())
}
