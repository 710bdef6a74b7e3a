//! A consumer the bench runs as its own process (`shoal worker`, the Python consumer): its
//! output goes to a log file, shown when it exits early; its CPU time is read from `/proc`.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use tokio::process::{Child, Command};

use super::cpu;
use crate::server::{log_tail, terminate};

pub struct Consumer {
    what: &'static str,
    child: Child,
    log: PathBuf,
    ticks_per_second: u64,
}

impl Consumer {
    /// Starts `command`, its stdout and stderr in `shoal-bench-<pid>-<tag>.log` in the temp dir.
    pub fn spawn(what: &'static str, tag: &str, mut command: Command) -> Result<Consumer> {
        let log =
            std::env::temp_dir().join(format!("shoal-bench-{}-{tag}.log", std::process::id()));
        let file = std::fs::File::create(&log)
            .with_context(|| format!("cannot create {}", log.display()))?;
        command
            .stdin(Stdio::null())
            .stdout(file.try_clone()?)
            .stderr(file)
            .kill_on_drop(true);
        let child = command
            .spawn()
            .with_context(|| format!("cannot start {what}"))?;
        Ok(Consumer {
            what,
            child,
            log,
            ticks_per_second: cpu::clock_ticks(),
        })
    }

    /// An error once the process has exited.
    pub fn alive(&mut self) -> Result<()> {
        match self.child.try_wait()? {
            None => Ok(()),
            Some(status) => bail!("{} exited ({status})", self.what),
        }
    }

    /// The end of what it printed so far.
    pub fn output_tail(&self) -> String {
        log_tail(&self.log)
    }

    /// User plus system CPU time it has used so far, all threads.
    pub fn cpu_time(&self) -> Result<Duration> {
        let pid = self
            .child
            .id()
            .ok_or_else(|| anyhow!("{} has exited", self.what))?;
        cpu::cpu_time(pid, self.ticks_per_second)
    }

    /// SIGKILL at once, as a crash ends a process; the log is removed.
    pub async fn kill(mut self) -> Result<()> {
        self.child
            .kill()
            .await
            .with_context(|| format!("cannot kill {}", self.what))?;
        let _ = std::fs::remove_file(&self.log);
        Ok(())
    }

    /// SIGTERM, then SIGKILL if it does not end in time; the log is removed.
    pub async fn stop(mut self) -> Result<()> {
        terminate(&mut self.child, self.what).await?;
        let _ = std::fs::remove_file(&self.log);
        Ok(())
    }
}
