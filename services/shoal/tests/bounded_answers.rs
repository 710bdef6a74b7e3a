//! A handler that answers 1 GiB cannot grow a `shoal worker` process by more than its answer
//! cap per concurrent delivery (plus a margin), and the worker keeps delivering another app's
//! messages meanwhile. The process's peak resident size (VmHWM) is read from /proc.

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
const BATCH: u64 = 4;
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
        json!({"extensions": {"queues": {"batchSize": BATCH, "maxDequeueCount": 1}}}),
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

    for i in 0..(2 * BATCH) {
        h.enqueue("flood", &base64(&format!("flood {i}"))).await?;
    }
    for i in 0..10 {
        h.enqueue("steady", &base64(&format!("during {i}"))).await?;
    }
    // Every flood delivery fails on the cap (one attempt each, then poison), and the other
    // app's messages are all delivered meanwhile.
    let poisoned = h
        .wait_for_messages("flood-poison", (2 * BATCH) as usize, WAIT)
        .await?;
    assert_eq!(poisoned.len(), (2 * BATCH) as usize);
    h.handler.wait_for(20, WAIT).await?;
    assert!(flood.connections() >= (2 * BATCH) as usize);

    let peak = peak_resident_bytes(pid);
    let grown = peak.saturating_sub(baseline);
    let bound = CAP * BATCH + MARGIN;
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
