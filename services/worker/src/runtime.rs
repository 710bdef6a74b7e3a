//! The worker's runtime: keeps the set of hosted app instances in step with Postgres, runs
//! their listeners, heartbeats, and drains on shutdown.
//!
//! Reconciling is idempotent: every pass computes the instances the worker should host and
//! their configuration fingerprints; new instances start, vanished ones stop, and changed
//! ones restart (the old listeners drain in the background while the new ones start). A pass
//! runs when Postgres announces a change (see `notifications.rs`), when the lease is gained or
//! lost, when an instance has drained, every `claim_retry` (250 ms) while a claim, a release or a failed read
//! is outstanding, and every `refresh_interval` regardless.

use std::collections::HashSet;
use std::sync::Arc;

use chrono::Utc;
use shoal_domain::workers::WorkerState;
use shoal_invoker::Invoker;
use shoal_issuer::FederationSigner;
use shoal_store::crypto::Cipher;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::app_instance::Services;
use crate::breaker::{self, Breakers};
use crate::config::{Hosting, WorkerConfig};
use crate::error::{DatabaseError, WorkerError};
use crate::heartbeat::Heartbeats;
use crate::hosted_apps::{self, Wanted};
use crate::lease::Lease;
use crate::notifications::{self, Interest, Wake};
use crate::stats::StatsRegistry;
use crate::supervisor::Supervisor;
use crate::watcher::WriteWatcher;
use shoal_store::invocation_recorder::Flusher;

pub struct Worker {
    config: WorkerConfig,
    pool: sqlx::PgPool,
    cipher: Cipher,
    stats: Arc<StatsRegistry>,
    watcher: Arc<WriteWatcher>,
}

/// A started worker: wait for it with [`WorkerHandle::stopped`].
pub struct WorkerHandle {
    task: JoinHandle<anyhow::Result<()>>,
}

impl WorkerHandle {
    /// Resolves once the worker has drained, given its claims back and written its final
    /// heartbeat.
    pub async fn stopped(self) -> anyhow::Result<()> {
        self.task.await?
    }
}

impl Worker {
    pub fn new(mut config: WorkerConfig, pool: sqlx::PgPool, cipher: Cipher) -> Worker {
        if let Some(public_url) = &config.public_url {
            let signer = FederationSigner::new(public_url, pool.clone(), cipher.clone());
            config.connector.assertions = Some(Arc::new(signer));
        }
        let stats = Arc::new(StatsRegistry::new(config.invocation_telemetry));
        Worker {
            config,
            pool,
            cipher,
            stats,
            watcher: Arc::new(WriteWatcher::default()),
        }
    }

    /// The statistics registry, to expose as metrics.
    pub fn stats(&self) -> Arc<StatsRegistry> {
        self.stats.clone()
    }

    /// Starts the worker; it runs until `shutdown` is cancelled, then drains.
    pub fn start(self, shutdown: CancellationToken) -> anyhow::Result<WorkerHandle> {
        self.config.validate().map_err(anyhow::Error::msg)?;
        let invoker = Invoker::new(self.config.egress.clone())
            .with_max_response_bytes(self.config.max_response_bytes);
        Ok(WorkerHandle {
            task: tokio::spawn(self.run(invoker, shutdown)),
        })
    }

    async fn run(self, invoker: Invoker, shutdown: CancellationToken) -> anyhow::Result<()> {
        let config = &self.config;
        // Cancelled when the drain deadline passes: deliveries release their messages.
        let abandon = CancellationToken::new();
        let (lease, guard) = match config.hosting {
            Hosting::Assigned => {
                let (lease, guard) =
                    Lease::fenced(config.lease_ttl, config.lease_valid_for(), abandon.clone());
                (lease, Some(guard))
            }
            Hosting::AllApps => (Lease::unfenced(abandon.clone()), None),
        };
        let heartbeats = Heartbeats::start(
            self.pool.clone(),
            config,
            Utc::now(),
            self.stats.clone(),
            lease.clone(),
        );
        let telemetry = self
            .stats
            .telemetry()
            .map(|telemetry| Flusher::start(self.pool.clone(), config.name.clone(), telemetry));
        let wake = Arc::new(Wake::default());
        let interest = Arc::new(match config.hosting {
            Hosting::Assigned => Interest::apps(HashSet::new()),
            Hosting::AllApps => Interest::every_app(),
        });
        let breakers = Arc::new(Breakers::default());
        let listening = notifications::listen(
            self.pool.clone(),
            config.name.clone(),
            config.database_step_timeout,
            interest.clone(),
            wake.clone(),
            breakers.clone(),
        );
        // Stopped after the drain: the breakers' last failures and probe outcomes still count.
        let breaker_sync_stop = CancellationToken::new();
        let breaker_sync = tokio::spawn(
            breaker::sync::Sync {
                breakers: breakers.clone(),
                pool: self.pool.clone(),
                worker: config.name.clone(),
                tick: config.breaker_tick,
                invoker: invoker.clone(),
            }
            .run(breaker_sync_stop.clone()),
        );
        tracing::info!(worker = config.name, hosting = ?config.hosting, "worker started");

        let mut instances = Supervisor::new(
            config.clone(),
            self.pool.clone(),
            Services {
                stats: self.stats.clone(),
                watcher: self.watcher.clone(),
                breakers,
                invoker,
                pool: self.pool.clone(),
            },
        );
        let mut lease_changes = lease.subscribe();
        let mut refresh = tokio::time::interval(config.refresh_interval);
        refresh.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut wanted: Vec<Wanted> = Vec::new();
        // The lease period in which `wanted` was last read: after the lease was lost, nothing
        // starts again before a fresh read.
        let mut loaded_in: Option<u64> = None;
        let mut retry_soon = false;
        let mut load_failed = false;
        loop {
            let mut reload = load_failed;
            tokio::select! {
                biased;
                _ = shutdown.cancelled() => break,
                instance = instances.next_drained() => instances.drained(instance),
                changed = lease_changes.changed() => {
                    if changed.is_err() {
                        break;
                    }
                    reload |= lease_changes.borrow_and_update().is_some();
                }
                _ = wake.woken() => reload |= wake.take_reload(),
                _ = refresh.tick() => reload = true,
                _ = tokio::time::sleep(config.claim_retry), if retry_soon || load_failed => {}
            }
            let held = lease.held();
            if reload {
                let load = hosted_apps::load(
                    config.hosting,
                    &config.name,
                    &self.pool,
                    &self.cipher,
                    &config.host_defaults,
                );
                tokio::select! {
                    _ = shutdown.cancelled() => break,
                    loaded = tokio::time::timeout(config.load_timeout, load) => {
                        let failure = match loaded {
                            Ok(Ok(loaded)) => {
                                interest.set(loaded.assigned_apps);
                                wanted = loaded.wanted;
                                loaded_in = held.as_ref().map(|h| h.generation);
                                None
                            }
                            Ok(Err(e)) => Some(DatabaseError::from(e)),
                            Err(_) => Some(DatabaseError::TimedOut(config.load_timeout)),
                        };
                        let failure = failure.map(WorkerError::LoadHostedApps);
                        if let Some(error) = &failure {
                            self.stats.errors().count(error);
                        }
                        // Retried soon; logged once per streak of failures.
                        match failure {
                            None => load_failed = false,
                            Some(error) if !std::mem::replace(&mut load_failed, true) => {
                                tracing::warn!(%error, "reading the hosted apps failed; keeping the current ones and retrying");
                            }
                            Some(error) => tracing::debug!(%error, "reading the hosted apps failed again"),
                        }
                    }
                }
            }
            let held = held.filter(|h| loaded_in == Some(h.generation));
            retry_soon = instances.reconcile(&wanted, held.as_ref()).await;
        }

        tracing::info!(
            worker = config.name,
            in_flight = instances.in_flight(),
            "draining: polling stopped, finishing in-flight invocations"
        );
        listening.abort();
        heartbeats.set_state(WorkerState::Draining).await;
        instances.drain_all(config.drain_deadline, &abandon).await;
        instances.release_everything().await;
        breaker_sync_stop.cancel();
        let _ = breaker_sync.await;
        if let Some(telemetry) = telemetry {
            telemetry.stop().await;
        }
        heartbeats.stop(WorkerState::Stopped).await;
        if let Some(guard) = guard {
            guard.abort();
        }
        tracing::info!(worker = config.name, "worker stopped");
        Ok(())
    }
}
