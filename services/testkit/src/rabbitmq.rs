//! A real RabbitMQ broker for tests: `SHOAL_RABBITMQ_URL`, else this checkout's private broker
//! (`deploy/local/rabbitmq.sh`, started from Debian's rabbitmq-server on free ports the first
//! time a test asks). Tests share it and keep apart by queue names of their own
//! ([`queue_name`]). Clients nobody here wrote read and write it in the tests: PyPI `pika`,
//! through [`pika`].

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::python;

/// The broker's AMQP URL (`amqp://user:password@127.0.0.1:port/%2f`).
pub fn url() -> Result<String> {
    if let Ok(url) = std::env::var("SHOAL_RABBITMQ_URL")
        && !url.is_empty()
    {
        return Ok(url);
    }
    let script = python::repo_root().join("deploy/local/rabbitmq.sh");
    let output = std::process::Command::new(&script)
        .output()
        .with_context(|| format!("running {}", script.display()))?;
    if !output.status.success() {
        bail!(
            "{} failed: {}",
            script.display(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(String::from_utf8(output.stdout)?.trim().to_owned())
}

/// A queue name no other test uses.
pub fn queue_name(prefix: &str) -> String {
    format!("{prefix}-{:016x}", rand::random::<u64>())
}

/// Runs `rabbit.py` (next to this crate's tests: `tests/python/rabbit.py`) with pika against
/// `url`: `declare`, `publish`, `get`, `count`, `consumers` (see the script); its JSON answer.
pub async fn pika(url: &str, args: &[&str]) -> Result<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/rabbit.py");
    let env = HashMap::from([("RABBITMQ_URL".to_owned(), url.to_owned())]);
    python::run_json(&script, args, &env, Duration::from_secs(60)).await
}
