//! A real OpenTelemetry trace receiver for tests: `python/otlp_receiver.py`, OTLP/gRPC served
//! by `grpcio` from OpenTelemetry's own protobuf definitions (PyPI `opentelemetry-proto`),
//! nothing written here but the few lines that store what it receives. Every span it receives
//! is read back as JSON (see the script for the fields).

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;

use crate::python;

pub struct OtlpReceiver {
    child: Child,
    port: u16,
    spans: tempfile::NamedTempFile,
}

impl OtlpReceiver {
    /// Starts the receiver on a free port of 127.0.0.1 and waits until it listens.
    pub async fn start() -> Result<OtlpReceiver> {
        let spans = tempfile::NamedTempFile::new()?;
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/otlp_receiver.py");
        let mut child = tokio::process::Command::new(python::interpreter())
            .arg(&script)
            .arg(spans.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", script.display()))?;
        let stdout = child.stdout.take().context("the receiver's stdout")?;
        let mut first = String::new();
        tokio::time::timeout(
            Duration::from_secs(30),
            BufReader::new(stdout).read_line(&mut first),
        )
        .await
        .context("the OTLP receiver did not say its port within 30 s")??;
        let port = serde_json::from_str::<Value>(&first)
            .ok()
            .and_then(|v| v["port"].as_u64())
            .and_then(|p| u16::try_from(p).ok())
            .with_context(|| format!("the OTLP receiver printed {first:?}, not its port"))?;
        Ok(OtlpReceiver { child, port, spans })
    }

    /// Its OTLP/gRPC endpoint, for `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every span received so far.
    pub fn spans(&self) -> Result<Vec<Value>> {
        let text = std::fs::read_to_string(self.spans.path())?;
        text.lines()
            .map(|line| serde_json::from_str(line).context("a span line"))
            .collect()
    }

    /// The spans received once `done` holds for them, waiting up to `timeout`.
    pub async fn wait_for(
        &self,
        timeout: Duration,
        done: impl Fn(&[Value]) -> bool,
    ) -> Result<Vec<Value>> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let spans = self.spans()?;
            if done(&spans) {
                return Ok(spans);
            }
            if tokio::time::Instant::now() >= deadline {
                bail!("the receiver's spans never met the condition: {spans:#?}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Stops serving (a collector gone away); its port refuses connections from then on.
    pub async fn stop(&mut self) -> Result<()> {
        self.child.kill().await?;
        Ok(())
    }
}

/// Spans by their name.
pub fn named<'a>(spans: &'a [Value], name: &str) -> Vec<&'a Value> {
    spans.iter().filter(|s| s["name"] == name).collect()
}

/// Spans by their id.
pub fn by_id(spans: &[Value]) -> HashMap<String, &Value> {
    spans
        .iter()
        .filter_map(|s| Some((s["spanId"].as_str()?.to_owned(), s)))
        .collect()
}
