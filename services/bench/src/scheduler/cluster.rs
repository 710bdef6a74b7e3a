//! The `shoal scheduler` and `shoal worker` processes of (c) and (d), and what the bench sees
//! of them through Postgres: the lease, live workers, assignments (the scheduler's intent) and
//! instance claims (a worker about to listen, or listening).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use http::{Method, StatusCode};
use sqlx::postgres::PgPoolOptions;

use crate::http::Connection;
use crate::queue::process::Consumer;
use crate::server::{ShoalBin, free_addr};

/// How often conditions are polled: the resolution of the measured times.
pub const POLL: Duration = Duration::from_millis(10);

/// Processes of one run; every one is stopped by [`Cluster::stop`] or killed when dropped.
pub struct Cluster<'a> {
    shoal: &'a ShoalBin,
    database_url: String,
    scheduler: Option<(Consumer, SocketAddr)>,
    workers: BTreeMap<String, Consumer>,
}

impl<'a> Cluster<'a> {
    pub fn new(shoal: &'a ShoalBin, database_url: &str) -> Cluster<'a> {
        Cluster {
            shoal,
            database_url: database_url.to_owned(),
            scheduler: None,
            workers: BTreeMap::new(),
        }
    }

    pub fn start_scheduler(&mut self, tick: Duration, scale_in_window: Duration) -> Result<()> {
        let listen = free_addr()?;
        let mut command = self.shoal.command(&self.database_url);
        command.args(["scheduler", "--name", "shoal-bench"]);
        command.args(["--tick", &millis_arg(tick)]);
        command.args(["--scale-in-window", &millis_arg(scale_in_window)]);
        command.args(["--listen", &listen.to_string()]);
        let process = Consumer::spawn("shoal scheduler", "scheduler", command)?;
        self.scheduler = Some((process, listen));
        Ok(())
    }

    pub fn start_worker(&mut self, name: &str, lease_ttl: Duration) -> Result<()> {
        let mut command = self.shoal.command(&self.database_url);
        command.args(["worker", "--name", name]);
        command.args(["--lease-ttl", &millis_arg(lease_ttl)]);
        command.args(["--listen", &free_addr()?.to_string()]);
        let process = Consumer::spawn("shoal worker", name, command)?;
        self.workers.insert(name.to_owned(), process);
        Ok(())
    }

    /// SIGKILL, as a crash or an OOM kill ends a worker: no drain, no released claims.
    pub async fn kill_worker(&mut self, name: &str) -> Result<()> {
        let worker = self
            .workers
            .remove(name)
            .ok_or_else(|| anyhow!("no worker {name} to kill"))?;
        worker.kill().await
    }

    /// An error naming the first process that exited by itself.
    pub fn alive(&mut self) -> Result<()> {
        if let Some((scheduler, _)) = &mut self.scheduler {
            scheduler.alive()?;
        }
        for (name, worker) in &mut self.workers {
            worker.alive().with_context(|| format!("worker {name}"))?;
        }
        Ok(())
    }

    /// The ends of every process's output, for an error.
    pub fn output_tails(&self) -> String {
        let mut tails = String::new();
        if let Some((scheduler, _)) = &self.scheduler {
            tails.push_str(&format!("shoal scheduler:\n{}\n", scheduler.output_tail()));
        }
        for (name, worker) in &self.workers {
            tails.push_str(&format!("worker {name}:\n{}\n", worker.output_tail()));
        }
        tails
    }

    /// Whether the scheduler leads and has finished a tick, from its `/metrics`.
    pub async fn scheduler_ticked(&self) -> Result<bool> {
        let Some((_, addr)) = &self.scheduler else {
            return Ok(false);
        };
        let Ok(mut connection) = Connection::open(*addr, None).await else {
            return Ok(false);
        };
        let (status, body) = connection.send(Method::GET, "/metrics", None).await?;
        if status != StatusCode::OK {
            return Ok(false);
        }
        let text = String::from_utf8_lossy(&body);
        let gauge = |name: &str| -> f64 {
            text.lines()
                .find_map(|line| line.strip_prefix(name)?.trim().parse().ok())
                .unwrap_or(0.0)
        };
        Ok(gauge("shoal_scheduler_leader ") > 0.0
            && gauge("shoal_scheduler_last_tick_seconds ") > 0.0)
    }

    /// SIGTERM to the scheduler, then to every worker (each drains); killed if it does not end.
    pub async fn stop(mut self) -> Result<()> {
        let mut outcome = Ok(());
        if let Some((scheduler, _)) = self.scheduler.take() {
            outcome = outcome.and(scheduler.stop().await);
        }
        for (_, worker) in std::mem::take(&mut self.workers) {
            outcome = outcome.and(worker.stop().await);
        }
        outcome
    }

    /// Polls `probe` every [`POLL`] until it yields a value, failing after `timeout` or as
    /// soon as a process exits.
    pub async fn until<T>(
        &mut self,
        what: &str,
        timeout: Duration,
        mut probe: impl AsyncFnMut(&Cluster<'a>) -> Result<Option<T>>,
    ) -> Result<T> {
        let deadline = Instant::now() + timeout;
        loop {
            self.alive()?;
            if let Some(value) = probe(self).await? {
                return Ok(value);
            }
            if Instant::now() >= deadline {
                bail!("timed out after {timeout:?} waiting for {what}");
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

/// `1500ms`: the CLI's duration syntax.
fn millis_arg(duration: Duration) -> String {
    format!("{}ms", duration.as_millis())
}

/// What the bench reads of the cluster's state, as the database owner (no tenant needed).
pub struct Observer {
    pool: sqlx::PgPool,
}

/// `(instance, worker)` pairs.
pub type Placed = Vec<(i32, String)>;

impl Observer {
    pub async fn connect(database_url: &str) -> Result<Observer> {
        let pool = PgPoolOptions::new()
            .max_connections(2)
            .connect(database_url)
            .await?;
        Ok(Observer { pool })
    }

    pub async fn close(self) {
        self.pool.close().await;
    }

    pub async fn live_workers(&self) -> Result<i64> {
        Ok(sqlx::query_scalar(
            "select count(*) from workers where state = 'running'
             and heartbeat_at + make_interval(secs => lease_ttl_ms / 1000.0) > now()",
        )
        .fetch_one(&self.pool)
        .await?)
    }

    /// The app's assignments, by instance.
    pub async fn assignments(&self, tenant: &str, app: &str) -> Result<Placed> {
        Ok(sqlx::query_as(
            "select instance, worker from assignments where tenant_id = $1 and app_name = $2
             order by instance",
        )
        .bind(tenant)
        .bind(app)
        .fetch_all(&self.pool)
        .await?)
    }

    /// The app's claims, by instance.
    pub async fn claims(&self, tenant: &str, app: &str) -> Result<Placed> {
        Ok(sqlx::query_as(
            "select instance, worker from instance_claims where tenant_id = $1 and app_name = $2
             order by instance",
        )
        .bind(tenant)
        .bind(app)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Claims held by the worker each instance is assigned to: instances listening where the
    /// scheduler wants them.
    pub async fn claimed_as_assigned(&self, tenant: &str, app: &str) -> Result<Placed> {
        Ok(sqlx::query_as(
            "select c.instance, c.worker from instance_claims c
             join assignments a using (tenant_id, app_name, instance)
             where c.worker = a.worker and c.tenant_id = $1 and c.app_name = $2
             order by c.instance",
        )
        .bind(tenant)
        .bind(app)
        .fetch_all(&self.pool)
        .await?)
    }

    /// The app's desired instances (none before its first change).
    pub async fn desired(&self, tenant: &str, app: &str) -> Result<Option<i32>> {
        Ok(sqlx::query_scalar(
            "select desired from app_scale where tenant_id = $1 and app_name = $2",
        )
        .bind(tenant)
        .bind(app)
        .fetch_optional(&self.pool)
        .await?)
    }
}
