//! `shoal worker` as a process with a Service Bus trigger: killed with SIGKILL mid-invocation,
//! nothing is lost — the message's lock expires, the broker delivers it again (DeliveryCount
//! 2) and another worker completes it.

#[path = "../../worker/tests/worker/service_bus_support.rs"]
#[allow(dead_code)]
mod service_bus_support;
#[path = "../../worker/tests/worker/support.rs"]
#[allow(dead_code)]
mod support;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::json;
use shoal_testkit::handler::Behaviour;

use service_bus_support::{Bus, namespace, put_app, queue, queue_entity, trigger};
use support::Harness;

const SHOAL: &str = env!("CARGO_BIN_EXE_shoal");

/// A worker process, killed (and reaped) if the test ends early.
struct WorkerProcess(Option<Child>);

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn spawn_worker(h: &Harness, name: &str) -> WorkerProcess {
    let child = Command::new(SHOAL)
        .args([
            "worker",
            "--name",
            name,
            "--listen",
            "127.0.0.1:0",
            "--all-apps",
        ])
        .env("DATABASE_URL", &h.database_url)
        .env("SHOAL_SECRET_KEY", h.secret_key.to_base64())
        .env("SHOAL_TEST_REFRESH_MS", "200")
        .env("SHOAL_TEST_HEARTBEAT_MS", "200")
        .env("SHOAL_EGRESS_ALLOW", shoal_testkit::EGRESS_ALLOW_LOOPBACK)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("shoal worker starts");
    WorkerProcess(Some(child))
}

async fn kill_and_reap(mut worker: WorkerProcess) -> anyhow::Result<()> {
    let mut child = worker.0.take().expect("running");
    // Reaped even if the kill fails (it has exited already, say).
    let killed = child.kill();
    tokio::task::spawn_blocking(move || child.wait()).await??;
    Ok(killed?)
}

#[tokio::test]
async fn sigkill_mid_invocation_loses_nothing() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    // The shortest lock Service Bus allows (5 s), so the killed worker's message comes back
    // quickly.
    let bus = Bus::start(namespace(
        json!([queue_entity("orders", json!({"LockDuration": "PT5S"}))]),
        json!([]),
    ))
    .await?;
    // The first delivery never returns: the worker is killed while it waits.
    h.handler.script(vec![Behaviour::Hang]);
    put_app(&h, &bus, json!({})).await?;
    h.put_function("crashy", trigger(json!({"queueName": "orders"})))
        .await?;
    bus.send_text("orders", &["survives"]).await?;

    let first = spawn_worker(&h, "w-killed");
    h.handler.wait_for(1, Duration::from_secs(30)).await?;
    kill_and_reap(first).await?;

    let second = spawn_worker(&h, "w-survivor");
    let requests = h.handler.wait_for(2, Duration::from_secs(30)).await?;
    let (a, b) = (&requests[0], &requests[1]);
    assert_eq!(
        a.body["Metadata"]["MessageId"], b.body["Metadata"]["MessageId"],
        "the same message"
    );
    assert_eq!(b.body["Metadata"]["DeliveryCount"], 2);
    assert_eq!(b.body["Data"]["msg"], "survives");
    assert!(
        b.at - a.at >= Duration::from_millis(4500),
        "delivered again only once the lock expired"
    );
    // Completed by the second worker: nothing left, not delivered a third time.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !bus.is_empty(&queue("orders")).await? {
        anyhow::ensure!(tokio::time::Instant::now() < deadline, "orders not empty");
    }
    // No third delivery: the lock period passes without the message coming back.
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(h.handler.count(), 2);
    kill_and_reap(second).await?;
    Ok(())
}
