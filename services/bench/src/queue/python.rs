//! The Python reference consumer (`deploy/bench/python-consumer.py`) and its virtual
//! environment: created from PyPI with the pinned `python-requirements.txt` when missing or when
//! that file changed since, then reused.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio::process::Command;

use super::process::Consumer;

pub const REQUIREMENTS: &str = "python-requirements.txt";
pub const SCRIPT: &str = "python-consumer.py";
/// A copy of the requirements the environment was built from, inside it.
const MARKER: &str = "shoal-bench-requirements.txt";

/// The environment's interpreter, after creating or updating the environment if needed.
/// The error says why the reference cannot run (no Python, no venv module, pip failed).
pub async fn ensure_venv(python: &Path, venv: &Path, scripts: &Path) -> Result<PathBuf> {
    let requirements_path = scripts.join(REQUIREMENTS);
    let requirements = std::fs::read_to_string(&requirements_path)
        .with_context(|| format!("cannot read {}", requirements_path.display()))?;
    let interpreter = venv.join("bin").join("python");
    let marker = venv.join(MARKER);
    if interpreter.is_file() && std::fs::read_to_string(&marker).ok() == Some(requirements.clone())
    {
        return Ok(interpreter);
    }
    eprintln!(
        "shoal-bench: creating {} with {} (pip, from PyPI)",
        venv.display(),
        requirements_path.display()
    );
    let _ = std::fs::remove_file(&marker);
    run(
        Command::new(python)
            .args(["-m", "venv", "--clear"])
            .arg(venv),
        &format!("{} -m venv", python.display()),
    )
    .await?;
    run(
        Command::new(&interpreter)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-input",
                "-r",
            ])
            .arg(&requirements_path),
        "pip install",
    )
    .await?;
    std::fs::write(&marker, requirements)
        .with_context(|| format!("cannot write {}", marker.display()))?;
    Ok(interpreter)
}

async fn run(command: &mut Command, what: &str) -> Result<()> {
    let output = command
        .stdin(Stdio::null())
        .output()
        .await
        .with_context(|| format!("cannot run {what}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let lines: Vec<&str> = stderr.trim().lines().collect();
        bail!(
            "{what} failed ({}): {}",
            output.status,
            lines[lines.len().saturating_sub(5)..].join(" / ")
        );
    }
    Ok(())
}

/// What the consumer is started with.
pub struct Run<'a> {
    pub connection_string: &'a str,
    pub queue: &'a str,
    pub handler: &'a str,
    /// Messages in flight at most: the pool's threads.
    pub threads: usize,
    /// Messages per receive.
    pub batch: u8,
    /// It stops by itself after this long if the bench has not stopped it before.
    pub max_run: Duration,
}

pub fn start(interpreter: &Path, scripts: &Path, run: &Run<'_>) -> Result<Consumer> {
    let mut command = Command::new(interpreter);
    command
        .arg(scripts.join(SCRIPT))
        .args(["--queue", run.queue, "--handler", run.handler])
        .args(["--threads", &run.threads.to_string()])
        .args(["--batch", &run.batch.to_string()])
        .args(["--max-seconds", &run.max_run.as_secs().to_string()])
        .env("BENCH_CONNECTION_STRING", run.connection_string);
    Consumer::spawn("the Python consumer", "python", command)
}
