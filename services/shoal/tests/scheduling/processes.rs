//! Scheduler and worker processes for the scheduling tests, and the waits that observe them
//! through Postgres.

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::bail;
use sqlx::Row;

use crate::host_identity::HostIdentity;
use crate::support::{APP, Harness, TENANT};
use crate::{LEASE_TTL, TICK_MS};

const SHOAL: &str = env!("CARGO_BIN_EXE_shoal");

/// A decision as stored.
#[derive(Debug, Clone)]
pub struct Decision {
    pub from: u32,
    pub to: u32,
    pub mode: String,
    pub reason: String,
}

/// Processes of one test, killed (and reaped) when it ends. Every process runs with a host
/// identity in its environment that no tenant is opted in to: one that asked it for a token
/// fails the test.
pub struct Cluster<'h> {
    h: &'h Harness,
    host: HostIdentity,
    database_url: String,
    processes: BTreeMap<String, Child>,
    pub scale_in_window: &'static str,
    /// How long received messages stay invisible: short where a test kills a worker and waits
    /// for its messages to come back, long enough elsewhere that a busy machine does not see
    /// messages come back while they are still being processed.
    pub invisibility_ms: &'static str,
}

impl Drop for Cluster<'_> {
    fn drop(&mut self) {
        for (_, mut child) in std::mem::take(&mut self.processes) {
            let _ = child.kill();
            let _ = child.wait();
        }
        if !std::thread::panicking() {
            assert_eq!(
                self.host.requests(),
                0,
                "a scheduler or worker used its host's identity for a tenant"
            );
        }
    }
}

impl<'h> Cluster<'h> {
    pub fn new(h: &'h Harness) -> Cluster<'h> {
        Cluster::on(h, h.database_url.clone())
    }

    /// Processes that reach Postgres at `database_url` (another route to the harness's data).
    pub fn on(h: &'h Harness, database_url: String) -> Cluster<'h> {
        Cluster {
            h,
            host: HostIdentity::start(),
            database_url,
            processes: BTreeMap::new(),
            scale_in_window: "3s",
            invisibility_ms: "15000",
        }
    }

    fn spawn(&mut self, key: String, args: &[&str]) {
        let listen = if args.contains(&"--listen") {
            &[][..]
        } else {
            &["--listen", "127.0.0.1:0"][..]
        };
        let child = Command::new(SHOAL)
            .args(args)
            .args(listen)
            .env("DATABASE_URL", &self.database_url)
            .env("SHOAL_SECRET_KEY", self.h.secret_key.to_base64())
            .env("SHOAL_TEST_INVISIBILITY_MS", self.invisibility_ms)
            .env("RUST_LOG", "warn")
            .env("SHOAL_EGRESS_ALLOW", shoal_testkit::EGRESS_ALLOW_LOOPBACK)
            .envs(self.host.env())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("shoal starts");
        self.processes.insert(key, child);
    }

    pub fn worker(&mut self, name: &str) {
        let ttl = format!("{}ms", LEASE_TTL.as_millis());
        self.spawn(
            format!("worker/{name}"),
            &["worker", "--name", name, "--lease-ttl", &ttl],
        );
    }

    /// Starts workers `w0`… and waits until all of them heartbeat.
    pub async fn start_workers(&mut self, n: usize) -> anyhow::Result<()> {
        for i in 0..n {
            self.worker(&format!("w{i}"));
        }
        self.wait_for_workers(i64::try_from(n)?, Duration::from_secs(30))
            .await
    }

    /// A worker that runs at most `capacity` app instances.
    pub fn worker_with_capacity(&mut self, name: &str, capacity: u32) {
        let ttl = format!("{}ms", LEASE_TTL.as_millis());
        let capacity = capacity.to_string();
        self.spawn(
            format!("worker/{name}"),
            &[
                "worker",
                "--name",
                name,
                "--lease-ttl",
                &ttl,
                "--capacity",
                &capacity,
            ],
        );
    }

    pub fn scheduler(&mut self, name: &str) {
        self.scheduler_with(name, &[]);
    }

    /// A scheduler with extra flags (e.g. `--listen` for a test that reads its `/metrics`).
    pub fn scheduler_with(&mut self, name: &str, extra: &[&str]) {
        let tick = format!("{TICK_MS}ms");
        let ttl = format!("{}ms", LEASE_TTL.as_millis());
        let window = self.scale_in_window;
        self.spawn(
            format!("scheduler/{name}"),
            &[
                "scheduler",
                "--name",
                name,
                "--tick",
                &tick,
                "--lease-ttl",
                &ttl,
                "--scale-in-window",
                window,
            ]
            .iter()
            .chain(extra)
            .copied()
            .collect::<Vec<_>>(),
        );
    }

    fn kill(&mut self, key: &str) {
        let mut child = self.processes.remove(key).expect("a running process");
        child.kill().expect("SIGKILL");
        let _ = child.wait();
    }

    /// Sends `signal` (`STOP`, `CONT`) to worker `name`: a paused process keeps its sockets
    /// and state, and wakes where it stopped.
    pub fn signal_worker(&self, name: &str, signal: &str) {
        let child = &self.processes[&format!("worker/{name}")];
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -{signal} {name}");
    }

    pub fn kill_worker(&mut self, name: &str) {
        self.kill(&format!("worker/{name}"));
    }

    pub fn kill_scheduler(&mut self, name: &str) {
        self.kill(&format!("scheduler/{name}"));
    }

    /// The processes that exited on their own.
    pub fn exited(&mut self) -> Vec<String> {
        self.processes
            .iter_mut()
            .filter_map(|(key, child)| match child.try_wait() {
                Ok(None) => None,
                _ => Some(key.clone()),
            })
            .collect()
    }

    /// Polls `probe` every 100 ms until it yields a value or `timeout` passes.
    pub async fn until_value<T, F, Fut>(
        &self,
        what: &str,
        timeout: Duration,
        probe: F,
    ) -> anyhow::Result<T>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = anyhow::Result<Option<T>>>,
    {
        self.until(what, timeout, probe).await
    }

    async fn until<T, F, Fut>(
        &self,
        what: &str,
        timeout: Duration,
        mut probe: F,
    ) -> anyhow::Result<T>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = anyhow::Result<Option<T>>>,
    {
        let deadline = Instant::now() + timeout;
        loop {
            match probe().await {
                Ok(Some(value)) => return Ok(value),
                Ok(None) => {}
                // Postgres restarting: keep waiting.
                Err(e) if Instant::now() < deadline => tracing_note(&e),
                Err(e) => return Err(e),
            }
            if Instant::now() >= deadline {
                bail!("timed out after {timeout:?} waiting for {what}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub async fn wait_for_workers(&self, n: i64, timeout: Duration) -> anyhow::Result<()> {
        let pool = &self.h.pool;
        self.until(&format!("{n} live workers"), timeout, || async move {
            let live: i64 = sqlx::query_scalar(
                "select count(*) from workers where state = 'running'
                 and heartbeat_at + make_interval(secs => lease_ttl_ms / 1000.0) > now()",
            )
            .fetch_one(pool)
            .await?;
            Ok((live == n).then_some(()))
        })
        .await
    }

    pub async fn decisions(&self) -> anyhow::Result<Vec<Decision>> {
        let rows = sqlx::query(
            "select from_count, to_count, mode, reason from scale_decisions
             where tenant_id = $1 and app_name = $2 order by id",
        )
        .bind(TENANT)
        .bind(APP)
        .fetch_all(&self.h.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(Decision {
                    from: u32::try_from(r.try_get::<i32, _>("from_count")?)?,
                    to: u32::try_from(r.try_get::<i32, _>("to_count")?)?,
                    mode: r.try_get("mode")?,
                    reason: r.try_get("reason")?,
                })
            })
            .collect()
    }

    /// Waits until the app's desired instances are `n`; returns every decision so far.
    pub async fn wait_for_desired(
        &self,
        n: i32,
        timeout: Duration,
    ) -> anyhow::Result<Vec<Decision>> {
        let pool = &self.h.pool;
        self.until(&format!("{n} desired instances"), timeout, || async move {
            let desired: Option<i32> = sqlx::query_scalar(
                "select desired from app_scale where tenant_id = $1 and app_name = $2",
            )
            .bind(TENANT)
            .bind(APP)
            .fetch_optional(pool)
            .await?;
            Ok((desired == Some(n)).then_some(()))
        })
        .await?;
        self.decisions().await
    }

    /// Waits until the app has exactly `n` placed instances; returns `(instance, worker)`.
    pub async fn wait_for_placement(
        &self,
        n: usize,
        timeout: Duration,
    ) -> anyhow::Result<Vec<(i32, String)>> {
        let pool = &self.h.pool;
        self.until(&format!("{n} placed instances"), timeout, || async move {
            let rows: Vec<(i32, String)> = sqlx::query_as(
                "select instance, worker from assignments where tenant_id = $1 and app_name = $2
                 order by instance",
            )
            .bind(TENANT)
            .bind(APP)
            .fetch_all(pool)
            .await?;
            Ok((rows.len() == n).then_some(rows))
        })
        .await
    }

    /// Waits until `n` of the app's instances are claimed, each by its assigned worker.
    pub async fn wait_for_claims(&self, n: i64, timeout: Duration) -> anyhow::Result<()> {
        let pool = &self.h.pool;
        self.until(&format!("{n} claimed instances"), timeout, || async move {
            let claimed: i64 = sqlx::query_scalar(
                "select count(*) from instance_claims c join assignments a using (tenant_id, app_name, instance)
                 where c.worker = a.worker and a.tenant_id = $1 and a.app_name = $2",
            )
            .bind(TENANT)
            .bind(APP)
            .fetch_one(pool)
            .await?;
            Ok((claimed == n).then_some(()))
        })
        .await
    }

    /// Waits until `instance` is claimed by a worker other than `from`; returns it and how long
    /// that took from the call.
    pub async fn wait_for_claim_moved(
        &self,
        instance: i32,
        from: &str,
        timeout: Duration,
    ) -> anyhow::Result<(String, Duration)> {
        let started = Instant::now();
        let pool = &self.h.pool;
        let worker = self
            .until(
                &format!("instance {instance} claimed elsewhere"),
                timeout,
                || async move {
                    let holder: Option<String> = sqlx::query_scalar(
                        "select worker from instance_claims
                     where tenant_id = $1 and app_name = $2 and instance = $3",
                    )
                    .bind(TENANT)
                    .bind(APP)
                    .bind(instance)
                    .fetch_optional(pool)
                    .await?;
                    Ok(holder.filter(|w| w != from))
                },
            )
            .await?;
        Ok((worker, started.elapsed()))
    }

    /// Waits for a leader with a current lease and an epoch above `after`.
    pub async fn wait_for_leader(
        &self,
        after: Option<i64>,
        timeout: Duration,
    ) -> anyhow::Result<(String, i64)> {
        let pool = &self.h.pool;
        self.until("a leader", timeout, || async move {
            let row: (Option<String>, i64, bool) = sqlx::query_as(
                "select holder, epoch, expires_at > now() from scheduler_lease where singleton",
            )
            .fetch_one(pool)
            .await?;
            Ok(match row {
                (Some(holder), epoch, true) if after.is_none_or(|a| epoch > a) => {
                    Some((holder, epoch))
                }
                _ => None,
            })
        })
        .await
    }

    /// Waits until every assignment carries `epoch`.
    pub async fn wait_for_confirmed_epoch(
        &self,
        epoch: i64,
        timeout: Duration,
    ) -> anyhow::Result<()> {
        let pool = &self.h.pool;
        self.until(
            &format!("assignments of epoch {epoch}"),
            timeout,
            || async move {
                let stale: i64 =
                    sqlx::query_scalar("select count(*) from assignments where epoch <> $1")
                        .bind(epoch)
                        .fetch_one(pool)
                        .await?;
                Ok((stale == 0).then_some(()))
            },
        )
        .await
    }
}

fn tracing_note(e: &anyhow::Error) {
    eprintln!("(still waiting: {e})");
}
