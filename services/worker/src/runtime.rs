//! The worker's runtime: keeps the set of hosted app instances in step with Postgres, runs
//! their listeners, heartbeats, and drains on shutdown.
//!
//! Reconciling is idempotent: every refresh computes the instances the worker should host and
//! their configuration fingerprints; new instances start, vanished ones stop, and changed
//! ones restart (the old listeners drain in the background while the new ones start).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use shoal_domain::workers::WorkerState;
use shoal_store::crypto::Cipher;
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;

use crate::config::WorkerConfig;
use crate::heartbeat::Heartbeats;
use crate::hosting::{self, AppInstance, HostedApp};
use crate::invoker::Invoker;
use crate::stats::StatsRegistry;
use crate::watcher::QueueWatcher;

pub struct Worker {
    config: WorkerConfig,
    pool: sqlx::PgPool,
    cipher: Cipher,
    stats: Arc<StatsRegistry>,
    watcher: Arc<QueueWatcher>,
}

/// A started worker: wait for it with [`WorkerHandle::stopped`].
pub struct WorkerHandle {
    task: JoinHandle<anyhow::Result<()>>,
}

impl WorkerHandle {
    /// Resolves once the worker has drained and written its final heartbeat.
    pub async fn stopped(self) -> anyhow::Result<()> {
        self.task.await?
    }
}

struct Hosted {
    fingerprint: u64,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl Worker {
    pub fn new(config: WorkerConfig, pool: sqlx::PgPool, cipher: Cipher) -> Worker {
        Worker {
            config,
            pool,
            cipher,
            stats: Arc::new(StatsRegistry::default()),
            watcher: Arc::new(QueueWatcher::default()),
        }
    }

    /// The statistics registry, to expose as metrics.
    pub fn stats(&self) -> Arc<StatsRegistry> {
        self.stats.clone()
    }

    /// Starts the worker; it runs until `shutdown` is cancelled, then drains.
    pub fn start(self, shutdown: CancellationToken) -> anyhow::Result<WorkerHandle> {
        let invoker = Invoker::new()?;
        Ok(WorkerHandle {
            task: tokio::spawn(self.run(invoker, shutdown)),
        })
    }

    async fn run(self, invoker: Invoker, shutdown: CancellationToken) -> anyhow::Result<()> {
        let started_at = Utc::now();
        let heartbeats = Heartbeats::start(
            self.pool.clone(),
            self.config.name.clone(),
            started_at,
            self.stats.clone(),
            self.config.heartbeat_interval,
        );
        tracing::info!(worker = self.config.name, "worker started");
        // Cancelled when the drain deadline passes: deliveries release their messages.
        let abandon = CancellationToken::new();
        let mut hosted: HashMap<AppInstance, Hosted> = HashMap::new();
        let mut retired: JoinSet<()> = JoinSet::new();
        let mut first = true;
        loop {
            if !first {
                tokio::select! {
                    _ = shutdown.cancelled() => break,
                    _ = tokio::time::sleep(self.config.refresh_interval) => {}
                }
            }
            first = false;
            while retired.try_join_next().is_some() {}
            match hosting::load(
                self.config.hosting,
                &self.pool,
                &self.cipher,
                &self.config.host_defaults,
            )
            .await
            {
                Ok(apps) => self.reconcile(apps, &mut hosted, &mut retired, &invoker, &abandon),
                Err(e) => {
                    tracing::warn!(error = %e, "reading the hosted apps failed; keeping the current ones")
                }
            }
        }

        tracing::info!(
            worker = self.config.name,
            in_flight = self.in_flight(),
            "draining: polling stopped, finishing in-flight invocations"
        );
        heartbeats.set_state(WorkerState::Draining).await;
        for (_, h) in hosted.iter() {
            h.stop.cancel();
        }
        for (_, h) in hosted.drain() {
            retired.spawn(async move {
                let _ = h.task.await;
            });
        }
        let drained = tokio::time::timeout(self.config.drain_deadline, async {
            while retired.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            tracing::warn!(
                in_flight = self.in_flight(),
                "drain deadline passed; releasing the messages still in flight"
            );
            abandon.cancel();
            while retired.join_next().await.is_some() {}
        }
        heartbeats.stop(WorkerState::Stopped).await;
        tracing::info!(worker = self.config.name, "worker stopped");
        Ok(())
    }

    fn in_flight(&self) -> u64 {
        self.stats.reports().iter().map(|r| r.in_flight).sum()
    }

    fn reconcile(
        &self,
        apps: Vec<HostedApp>,
        hosted: &mut HashMap<AppInstance, Hosted>,
        retired: &mut JoinSet<()>,
        invoker: &Invoker,
        abandon: &CancellationToken,
    ) {
        let mut wanted: HashMap<AppInstance, HostedApp> =
            apps.into_iter().map(|a| (a.instance.clone(), a)).collect();
        let gone: Vec<AppInstance> = hosted
            .iter()
            .filter(|(instance, h)| {
                wanted
                    .get(*instance)
                    .is_none_or(|app| app.fingerprint != h.fingerprint)
            })
            .map(|(instance, _)| instance.clone())
            .collect();
        for instance in gone {
            if let Some(h) = hosted.remove(&instance) {
                tracing::info!(%instance, "stopping app instance (removed, stopped or changed)");
                h.stop.cancel();
                retired.spawn(async move {
                    let _ = h.task.await;
                });
            }
        }
        for (instance, app) in wanted.drain() {
            if hosted.contains_key(&instance) {
                continue;
            }
            tracing::info!(%instance, functions = app.functions.len(), "starting app instance");
            let stop = CancellationToken::new();
            let fingerprint = app.fingerprint;
            let task = tokio::spawn(crate::hosting_task::run_app(
                app,
                self.config.clone(),
                self.stats.clone(),
                self.watcher.clone(),
                invoker.clone(),
                stop.clone(),
                abandon.clone(),
            ));
            hosted.insert(
                instance,
                Hosted {
                    fingerprint,
                    stop,
                    task,
                },
            );
        }
    }
}

/// How long heartbeats and drains wait on Postgres before giving up on one attempt.
pub(crate) const DATABASE_STEP_TIMEOUT: Duration = Duration::from_secs(5);
