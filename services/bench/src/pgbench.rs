//! The reference: pgbench running, on the same database and with as many clients, the SQL the
//! store executes for one request. Its throughput is what Postgres alone achieves on this
//! machine right now, so the ratio against it does not depend on the machine.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use tokio::process::Command;

pub struct Pgbench {
    pub program: PathBuf,
    pub url: String,
    /// The role the store's connections switch to (`set role`), if they do.
    pub role: Option<String>,
    pub clients: usize,
    pub threads: usize,
    pub warmup: Duration,
    pub duration: Duration,
}

impl Pgbench {
    /// A short unmeasured run (as the HTTP load has), then the measured one; returns its tps.
    /// `variables` are the script's `-D` definitions, sent as bound parameters (`-M prepared`).
    pub async fn run(&self, script: &Path, variables: &[(&str, String)]) -> Result<f64> {
        if !script.is_file() {
            bail!("pgbench script {} not found", script.display());
        }
        if !self.warmup.is_zero() {
            self.once(script, variables, self.warmup).await?;
        }
        let output = self.once(script, variables, self.duration).await?;
        tps(&output).ok_or_else(|| anyhow!("no tps line in pgbench's output:\n{output}"))
    }

    async fn once(
        &self,
        script: &Path,
        variables: &[(&str, String)],
        duration: Duration,
    ) -> Result<String> {
        // pgbench counts whole seconds.
        let seconds = duration.as_secs().max(1);
        let mut command = Command::new(&self.program);
        if let Some(role) = &self.role {
            command.env("PGOPTIONS", format!("-c role={role}"));
        }
        for (name, value) in variables {
            command.arg("-D").arg(format!("{name}={value}"));
        }
        let output = command
            .kill_on_drop(true)
            .arg("-n")
            .args(["-c", &self.clients.to_string()])
            .args(["-j", &self.threads.min(self.clients).to_string()])
            .args(["-T", &seconds.to_string()])
            .args(["-M", "prepared"])
            .arg("-f")
            .arg(script)
            .arg(&self.url)
            .output()
            .await
            .with_context(|| format!("cannot run {}", self.program.display()))?;
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        if !output.status.success() {
            bail!(
                "pgbench {} failed ({}): {}{}",
                script.display(),
                output.status,
                String::from_utf8_lossy(&output.stderr).trim(),
                stdout.trim()
            );
        }
        Ok(stdout)
    }
}

/// The figure of `tps = 21030.123456 (without initial connection time)`.
fn tps(output: &str) -> Option<f64> {
    output.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("tps = ")?;
        let (number, note) = rest.split_once(' ')?;
        note.contains("without initial connection time")
            .then(|| number.parse().ok())
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tps_reads_the_figure_without_connection_time() {
        let output = "\
transaction type: deploy/bench/pgbench-get-app.sql
number of failed transactions: 0 (0.000%)
latency average = 2.951 ms
initial connection time = 41.517 ms
tps = 21687.015339 (without initial connection time)
";
        assert_eq!(tps(output), Some(21687.015339));
    }

    #[test]
    fn tps_ignores_other_tps_lines() {
        let output = "tps = 100.0 (including connections establishing)\n";
        assert_eq!(tps(output), None);
        assert_eq!(tps(""), None);
    }
}
