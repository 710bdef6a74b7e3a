//! Owns the app instances running on this worker: their tasks (started with
//! `app_instance::run_app`), the drains of stopped ones, and (in assigned mode) the claims
//! that keep any instance from being acted on by two workers at once. It applies the
//! decisions of `plan.rs`; it decides nothing about what should run.
//!
//! An instance's claim is taken before its listeners start and given back only after they have
//! drained; a claim another worker still holds leaves the instance pending, retried on every
//! wake-up. A restart on the same worker (the app's configuration changed) keeps the claim:
//! the old listeners drain while the new ones run, on this worker only. Releases that fail are
//! retried until they succeed or the process stops.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use futures::future::BoxFuture;
use shoal_store::{StoreError, Tx, assignments};
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;

use crate::app_instance::Services;
use crate::config::WorkerConfig;
use crate::error::{DatabaseError, WorkerError};
use crate::hosted_apps::{AppInstance, HostedApp, Wanted};
use crate::lease::Held;
use crate::plan::{self, Intent, Observed};
use crate::stats::StatsRegistry;

pub struct Supervisor {
    config: WorkerConfig,
    pool: sqlx::PgPool,
    stats: Arc<StatsRegistry>,
    services: Services,
    /// Assigned mode: instances are claimed before they start.
    claims: bool,
    /// Claims a previous run under this name left behind have been given back (nothing is
    /// claimed before, or the clean-up would drop fresh claims too).
    cleaned_up: bool,
    hosted: HashMap<AppInstance, Hosted>,
    /// Stopped instances whose listeners are still draining; each yields its instance.
    draining: JoinSet<AppInstance>,
    /// How many generations of each instance are draining (a restart adds one).
    draining_count: HashMap<AppInstance, usize>,
    /// Drained instances whose claim is still to be given back.
    to_release: BTreeSet<AppInstance>,
    /// Supervisor whose claim another worker holds (logged once each).
    refused: HashSet<AppInstance>,
    /// Claim steps are failing (Postgres away): retries log at debug level until one succeeds.
    failing: bool,
}

struct Hosted {
    fingerprint: u64,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl Supervisor {
    pub fn new(config: WorkerConfig, pool: sqlx::PgPool, services: Services) -> Supervisor {
        let claims = config.hosting == crate::config::Hosting::Assigned;
        Supervisor {
            config,
            pool,
            stats: services.stats.clone(),
            services,
            claims,
            cleaned_up: !claims,
            hosted: HashMap::new(),
            draining: JoinSet::new(),
            draining_count: HashMap::new(),
            to_release: BTreeSet::new(),
            refused: HashSet::new(),
            failing: false,
        }
    }

    /// Brings the running instances in line with `wanted` under the lease period `held` (None:
    /// the lease is lost, or not yet confirmed by a fresh read, and every instance stops).
    /// Returns whether something is left to retry soon (a claim or a release).
    pub async fn reconcile(&mut self, wanted: &[Wanted], held: Option<&Held>) -> bool {
        let intents: Vec<Intent<'_>> = wanted
            .iter()
            .map(|w| Intent {
                instance: &w.app.instance,
                fingerprint: w.app.fingerprint,
                may_start: w.may_start,
            })
            .collect();
        let observed: HashMap<AppInstance, Observed> = self
            .hosted
            .iter()
            .map(|(instance, h)| {
                let observed = Observed {
                    fingerprint: h.fingerprint,
                    lease_lost: h.stop.is_cancelled(),
                };
                (instance.clone(), observed)
            })
            .collect();
        let plan = plan::plan(&intents, &observed, held.is_some());
        for (instance, reason) in &plan.stop {
            tracing::info!(%instance, %reason, "stopping app instance");
            self.retire(instance.clone());
        }
        for instance in &plan.restart {
            tracing::info!(%instance, reason = "configuration changed", "stopping app instance");
            self.retire(instance.clone());
        }
        let mut pending = false;
        if self.claims && !self.cleaned_up {
            self.cleaned_up = self.release_all().await;
        }
        if let Some(held) = held {
            let by_instance: HashMap<&AppInstance, &Wanted> =
                wanted.iter().map(|w| (&w.app.instance, w)).collect();
            for instance in plan.starting() {
                let Some(w) = by_instance.get(instance) else {
                    continue;
                };
                if held.stop.is_cancelled() {
                    break;
                }
                if self.claims && !self.claim(instance).await {
                    pending = true;
                    continue;
                }
                if held.stop.is_cancelled() {
                    // The lease was lost while claiming: give the claim back after all.
                    self.to_release.insert(instance.clone());
                    break;
                }
                self.start(w.app.clone(), held);
            }
        }
        self.release_drained().await;
        pending || !self.to_release.is_empty() || !self.cleaned_up
    }

    fn retire(&mut self, instance: AppInstance) {
        let Some(h) = self.hosted.remove(&instance) else {
            return;
        };
        h.stop.cancel();
        *self.draining_count.entry(instance.clone()).or_default() += 1;
        self.draining.spawn(async move {
            // A panicked app task has stopped all the same.
            let _ = h.task.await;
            instance
        });
    }

    fn start(&mut self, app: HostedApp, held: &Held) {
        let instance = app.instance.clone();
        tracing::info!(%instance, functions = app.functions.len(), "starting app instance");
        let stop = held.stop.child_token();
        let fingerprint = app.fingerprint;
        let task = tokio::spawn(crate::app_instance::run_app(
            app,
            self.config.clone(),
            self.services.clone(),
            stop.clone(),
            held.abandon.clone(),
        ));
        self.hosted.insert(
            instance,
            Hosted {
                fingerprint,
                stop,
                task,
            },
        );
    }

    /// Resolves when a stopped instance's listeners have drained (never while none drain).
    pub async fn next_drained(&mut self) -> AppInstance {
        loop {
            match self.draining.join_next().await {
                Some(Ok(instance)) => return instance,
                Some(Err(_)) => continue,
                None => std::future::pending::<()>().await,
            }
        }
    }

    /// Books a drained instance: its claim is given back unless it runs here again.
    pub fn drained(&mut self, instance: AppInstance) {
        let remaining = match self.draining_count.get_mut(&instance) {
            Some(n) => {
                *n -= 1;
                *n
            }
            None => 0,
        };
        if remaining == 0 {
            self.draining_count.remove(&instance);
            if self.claims && !self.hosted.contains_key(&instance) {
                self.to_release.insert(instance);
            }
        }
    }

    /// Stops every instance and waits for their listeners to drain, abandoning in-flight
    /// deliveries (releasing their messages) when `deadline` passes first.
    pub async fn drain_all(&mut self, deadline: std::time::Duration, abandon: &CancellationToken) {
        let all: Vec<AppInstance> = self.hosted.keys().cloned().collect();
        for instance in all {
            self.retire(instance);
        }
        let drained = tokio::time::timeout(deadline, async {
            while self.draining.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            tracing::warn!(
                in_flight = self.in_flight(),
                "drain deadline passed; releasing the messages still in flight"
            );
            abandon.cancel();
            while self.draining.join_next().await.is_some() {}
        }
        self.draining_count.clear();
    }

    pub fn in_flight(&self) -> u64 {
        self.stats.reports().iter().map(|r| r.in_flight).sum()
    }

    /// After the drain: gives back every claim, retrying for a few seconds. If Postgres stays
    /// away, the final `stopped` heartbeat or the lapsing lease frees them as well.
    pub async fn release_everything(&mut self) {
        if !self.claims {
            return;
        }
        let until = tokio::time::Instant::now() + self.config.database_step_timeout;
        while !self.release_all().await {
            if tokio::time::Instant::now() >= until {
                tracing::warn!(
                    "could not give the instance claims back; they lapse with the lease"
                );
                return;
            }
            tokio::time::sleep(self.config.claim_retry).await;
        }
    }

    async fn claim(&mut self, instance: &AppInstance) -> bool {
        let key = instance.key();
        let worker = self.config.name.clone();
        let result = self
            .step(move |tx| Box::pin(async move { assignments::claim(tx, &key, &worker).await }))
            .await;
        match result {
            Ok(true) => {
                self.refused.remove(instance);
                self.to_release.remove(instance);
                true
            }
            Ok(false) => {
                if self.refused.insert(instance.clone()) {
                    tracing::info!(%instance, "another worker still holds the instance; waiting for it to release it");
                }
                false
            }
            Err(e) => {
                let e = WorkerError::Claim(e);
                self.failed(&e, instance, "claiming the instance failed; retrying");
                false
            }
        }
    }

    async fn release_drained(&mut self) {
        let releasable: Vec<AppInstance> = self
            .to_release
            .iter()
            .filter(|i| !self.hosted.contains_key(*i) && !self.draining_count.contains_key(*i))
            .cloned()
            .collect();
        for instance in releasable {
            let key = instance.key();
            let worker = self.config.name.clone();
            let result = self
                .step(move |tx| {
                    Box::pin(async move { assignments::release(tx, &key, &worker).await })
                })
                .await;
            match result {
                Ok(()) => {
                    tracing::debug!(%instance, "claim given back");
                    self.to_release.remove(&instance);
                }
                Err(e) => {
                    let e = WorkerError::Release(e);
                    self.failed(&e, &instance, "giving the claim back failed; retrying");
                }
            }
        }
    }

    async fn release_all(&mut self) -> bool {
        let worker = self.config.name.clone();
        match self
            .step(move |tx| Box::pin(async move { assignments::release_all(tx, &worker).await }))
            .await
        {
            Ok(()) => true,
            Err(e) => {
                let e = WorkerError::Release(e);
                self.stats.errors().count(&e);
                if !std::mem::replace(&mut self.failing, true) {
                    tracing::warn!(error = %e, "giving back this worker's claims failed; retrying");
                }
                false
            }
        }
    }

    fn failed(&mut self, error: &WorkerError, instance: &AppInstance, what: &str) {
        self.stats.errors().count(error);
        if std::mem::replace(&mut self.failing, true) {
            tracing::debug!(%instance, error = %error, "{what}");
        } else {
            tracing::warn!(%instance, error = %error, "{what}");
        }
    }

    /// One short platform transaction, bounded by the step timeout (shorter for short leases).
    async fn step<T>(
        &mut self,
        op: impl for<'t> FnOnce(&'t mut Tx) -> BoxFuture<'t, Result<T, StoreError>>,
    ) -> Result<T, DatabaseError> {
        let run = async {
            let mut tx = shoal_store::begin_platform(&self.pool).await?;
            let value = op(&mut tx).await?;
            shoal_store::commit(tx).await?;
            Ok::<_, StoreError>(value)
        };
        let timeout = self
            .config
            .database_step_timeout
            .min(self.config.lease_ttl / 2);
        let result = match tokio::time::timeout(timeout, run).await {
            Ok(result) => result.map_err(DatabaseError::from),
            Err(_) => Err(DatabaseError::TimedOut(timeout)),
        };
        if result.is_ok() && std::mem::replace(&mut self.failing, false) {
            tracing::info!("claims can be taken and given back again");
        }
        result
    }
}
