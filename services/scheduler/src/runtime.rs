//! The scheduler's loop: hold or wait for the lease, and tick while leading.
//!
//! A leader renews its lease every tick. Its local view of the lease starts when it *sent* the
//! renewal (the database stamps it later), so the leader never believes in a lease the database
//! has let lapse; and every write is fenced anyway. A standby reads when the lease lapses and
//! tries again right then, so a leader that died is replaced within the lease TTL.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry::KeyValue;
use opentelemetry::global::BoxedSpan;
use opentelemetry::trace::SpanKind;
use shoal_egress::EgressMetrics;
use shoal_issuer::FederationSigner;
use shoal_store::crypto::Cipher;
use shoal_store::{StoreError, begin_platform, leadership};
use shoal_trace_export::span;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::catalog::Catalog;
use crate::config::SchedulerConfig;
use crate::error::{ErrorCounter, SchedulerError};
use crate::tick::{self, Leader, TickContext, TickReport};
use crate::trigger_metrics::MetricReader;

/// What the scheduler exports about itself (see `server`).
#[derive(Debug, Default)]
pub struct SchedulerStatus {
    pub leading: AtomicBool,
    pub epoch: AtomicI64,
    pub total_desired: AtomicU64,
    pub unplaced: AtomicU64,
    pub last_tick_micros: AtomicU64,
    pub ticks: AtomicU64,
    pub errors: ErrorCounter,
    /// `shoal_egress_refusals_total`: reads of tenants' sources the egress policy refused.
    pub egress: EgressMetrics,
    /// Per tenant with instances wanted, as of the last tick: `(tenant, desired, placed)`,
    /// by tenant. Empty while not leading.
    pub tenants: Mutex<Vec<(String, u64, u64)>>,
}

impl SchedulerStatus {
    fn set_tenants(&self, tenants: Vec<(String, u64, u64)>) {
        // A panic elsewhere while holding the lock leaves plain data: keep using it.
        *self.tenants.lock().unwrap_or_else(|e| e.into_inner()) = tenants;
    }

    fn stop_leading(&self) {
        self.leading.store(false, Ordering::Relaxed);
        self.set_tenants(Vec::new());
    }
}

pub struct Scheduler {
    config: SchedulerConfig,
    pool: sqlx::PgPool,
    cipher: Cipher,
    status: Arc<SchedulerStatus>,
}

pub struct SchedulerHandle {
    task: JoinHandle<()>,
}

impl SchedulerHandle {
    /// Resolves once the scheduler has stopped (and released its lease if it led).
    pub async fn stopped(self) -> Result<(), SchedulerError> {
        Ok(self.task.await?)
    }
}

/// How long one database step may take before the loop gives up on it for this round.
const STEP_TIMEOUT: Duration = Duration::from_secs(5);

impl Scheduler {
    pub fn new(mut config: SchedulerConfig, pool: sqlx::PgPool, cipher: Cipher) -> Scheduler {
        if let Some(public_url) = &config.public_url {
            let signer = FederationSigner::new(public_url, pool.clone(), cipher.clone());
            config.connector.assertions = Some(Arc::new(signer));
        }
        let status = Arc::new(SchedulerStatus {
            egress: config.egress.metrics(),
            ..SchedulerStatus::default()
        });
        Scheduler {
            config,
            pool,
            cipher,
            status,
        }
    }

    pub fn status(&self) -> Arc<SchedulerStatus> {
        self.status.clone()
    }

    pub fn start(self, shutdown: CancellationToken) -> SchedulerHandle {
        SchedulerHandle {
            task: tokio::spawn(self.run(shutdown)),
        }
    }

    async fn run(self, shutdown: CancellationToken) {
        let name = self.config.name.clone();
        tracing::info!(scheduler = name, tick = ?self.config.tick, lease_ttl = ?self.config.lease_ttl, "scheduler started");
        let mut catalog = Catalog::new(&self.config.tenant_defaults);
        let mut metrics = MetricReader::new(
            self.config.metrics.clone(),
            self.config.connector.clone(),
            self.config.egress.clone(),
        );
        let mut leader: Option<Leader> = None;
        // When the lease we last renewed lapses, on our own clock (from when we asked).
        let mut lease_until: Option<Instant> = None;
        loop {
            let round = Instant::now();
            let lease = tokio::time::timeout(STEP_TIMEOUT, self.renew()).await;
            let mut wait = self.config.tick;
            match lease {
                Ok(Ok(Some(lease))) => {
                    lease_until = Some(round + self.config.lease_ttl);
                    if leader.as_ref().is_none_or(|l| l.epoch != lease.epoch) {
                        match Leader::take_over(&self.pool, &name, lease.epoch, &self.config).await
                        {
                            Ok(l) => {
                                tracing::info!(scheduler = name, epoch = lease.epoch, "leading");
                                self.status.leading.store(true, Ordering::Relaxed);
                                self.status.epoch.store(lease.epoch, Ordering::Relaxed);
                                leader = Some(l);
                            }
                            Err(e) => {
                                self.failed(SchedulerError::TakeOver(e), "retrying next tick")
                            }
                        }
                    }
                    if let Some(l) = leader.as_mut() {
                        let cx = TickContext {
                            pool: &self.pool,
                            cipher: &self.cipher,
                            config: &self.config,
                            catalog: &mut catalog,
                            metrics: &mut metrics,
                        };
                        let deadline = self.config.lease_ttl.saturating_sub(round.elapsed()) / 2;
                        let tick = tick_span(&name, l.epoch);
                        let (result, tick) =
                            span::within(tick, tokio::time::timeout(deadline, l.tick(cx))).await;
                        let outcome = match result {
                            Ok(Ok(report)) => {
                                self.record(&report, round.elapsed());
                                tick.set([
                                    KeyValue::new("shoal.apps", report.apps as i64),
                                    KeyValue::new("shoal.workers", report.workers as i64),
                                    KeyValue::new("shoal.decisions", report.changed as i64),
                                ]);
                                "ok"
                            }
                            Ok(Err(StoreError::Fenced { epoch })) => {
                                self.failed(SchedulerError::Fenced { epoch }, "standing by");
                                leader = None;
                                self.status.stop_leading();
                                "fenced"
                            }
                            Ok(Err(e)) => {
                                self.failed(SchedulerError::Tick(e), "retrying next tick");
                                "failed"
                            }
                            Err(_) => {
                                self.failed(SchedulerError::TickTimedOut, "abandoned");
                                "timed_out"
                            }
                        };
                        tick.set([KeyValue::new("shoal.outcome", outcome)]);
                        if outcome != "ok" {
                            tick.failed(outcome);
                        }
                        tick.end();
                    }
                }
                Ok(Ok(None)) => {
                    if leader.take().is_some() {
                        tracing::warn!(
                            scheduler = name,
                            "another scheduler holds the lease; standing by"
                        );
                    }
                    self.status.stop_leading();
                    lease_until = None;
                    // Try again right when the holder's lease lapses, or next tick.
                    if let Ok(Ok(state)) =
                        tokio::time::timeout(STEP_TIMEOUT, self.lease_state()).await
                    {
                        self.status.epoch.store(state.epoch, Ordering::Relaxed);
                        wait = wait.min(state.remaining() + Duration::from_millis(5));
                    }
                }
                Ok(Err(e)) => self.failed(SchedulerError::RenewLease(e), "retrying next tick"),
                Err(_) => self.failed(SchedulerError::RenewLeaseTimedOut, "retrying next tick"),
            }
            if leader.is_some() && lease_until.is_some_and(|until| Instant::now() >= until) {
                self.failed(SchedulerError::LeaseLapsed, "standing by");
                leader = None;
                self.status.stop_leading();
            }
            let sleep = wait.saturating_sub(round.elapsed());
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = tokio::time::sleep(sleep) => {}
            }
        }
        if let Some(l) = leader {
            // Hand over at once rather than make a standby wait out the lease.
            let release = async {
                let mut tx = begin_platform(&self.pool).await?;
                leadership::release(&mut tx, &name, l.epoch).await?;
                shoal_store::commit(tx).await
            };
            match tokio::time::timeout(STEP_TIMEOUT, release).await {
                Ok(Ok(())) => {
                    tracing::info!(scheduler = name, epoch = l.epoch, "released the lease")
                }
                Ok(Err(e)) => self.failed(SchedulerError::ReleaseLease(e), "it lapses by itself"),
                Err(_) => self.failed(SchedulerError::ReleaseLeaseTimedOut, "it lapses by itself"),
            }
        }
        self.status.stop_leading();
        tracing::info!(scheduler = name, "scheduler stopped");
    }

    /// Logs and counts a failure the loop gets over; `then` says how.
    fn failed(&self, error: SchedulerError, then: &str) {
        self.status.errors.count(&error);
        tracing::warn!(scheduler = self.config.name, %error, "{then}");
    }

    async fn renew(&self) -> Result<Option<leadership::Lease>, StoreError> {
        let mut tx = begin_platform(&self.pool).await?;
        let lease =
            leadership::acquire_or_renew(&mut tx, &self.config.name, self.config.lease_ttl).await?;
        shoal_store::commit(tx).await?;
        Ok(lease)
    }

    async fn lease_state(&self) -> Result<leadership::LeaseState, StoreError> {
        let mut tx = begin_platform(&self.pool).await?;
        let state = leadership::current(&mut tx).await?;
        shoal_store::commit(tx).await?;
        Ok(state)
    }

    fn record(&self, report: &TickReport, took: Duration) {
        self.status
            .total_desired
            .store(report.total_desired, Ordering::Relaxed);
        self.status
            .unplaced
            .store(report.unplaced as u64, Ordering::Relaxed);
        self.status.last_tick_micros.store(
            u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
        self.status.set_tenants(
            report
                .tenants
                .iter()
                .map(|t| (t.tenant.clone(), t.desired, t.placed))
                .collect(),
        );
        self.status.ticks.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(?report, "tick");
    }
}

/// A leader's tick as a new trace's root (the phases and their store operations under it).
fn tick_span(scheduler: &str, epoch: i64) -> BoxedSpan {
    span::root(
        tick::SCOPE,
        "tick",
        SpanKind::Internal,
        vec![
            KeyValue::new("shoal.scheduler", scheduler.to_owned()),
            KeyValue::new("shoal.epoch", epoch),
        ],
    )
}
