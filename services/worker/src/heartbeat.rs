//! Heartbeats: the worker's registry row, rewritten every interval with its state, capacity,
//! lease TTL, what one of its listeners holds at once (the scheduler counts a RabbitMQ
//! instance as taking no more) and listener statistics. Each beat that succeeds renews the
//! worker's [`Lease`] from the moment it was sent; a failed beat is logged and retried at the
//! next interval.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use shoal_domain::workers::WorkerState;
use shoal_store::workers::{self, Heartbeat};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::config::WorkerConfig;
use crate::error::{DatabaseError, WorkerError};
use crate::lease::Lease;
use crate::stats::StatsRegistry;

pub struct Heartbeats {
    state: watch::Sender<WorkerState>,
    task: JoinHandle<()>,
    beat: Arc<Beat>,
}

struct Beat {
    pool: sqlx::PgPool,
    name: String,
    started_at: DateTime<Utc>,
    stats: Arc<StatsRegistry>,
    capacity: u32,
    lease_ttl: Duration,
    /// `WorkerConfig::held_messages`.
    hold_limit: u16,
    step_timeout: Duration,
    lease: Lease,
}

impl Beat {
    async fn write(&self, state: WorkerState) {
        let listeners = self.stats.reports();
        let beat = Heartbeat {
            name: &self.name,
            state,
            version: env!("CARGO_PKG_VERSION"),
            started_at: self.started_at,
            listeners: &listeners,
            capacity: self.capacity,
            lease_ttl: self.lease_ttl,
            hold_limit: Some(self.hold_limit),
        };
        // Taken before the transaction begins, so before the database stamps `now()`.
        let sent_at = Instant::now();
        let write = async {
            let mut tx = shoal_store::begin_platform(&self.pool).await?;
            workers::heartbeat(&mut tx, &beat).await?;
            shoal_store::commit(tx).await
        };
        // A beat stuck longer than half the lease is worth retrying rather than waiting on.
        let timeout = self.step_timeout.min(self.lease_ttl / 2);
        let written = match tokio::time::timeout(timeout, write).await {
            Ok(written) => written.map_err(DatabaseError::from),
            Err(_) => Err(DatabaseError::TimedOut(timeout)),
        };
        match written {
            Ok(()) => self.lease.renewed(sent_at),
            Err(e) => {
                let e = WorkerError::Heartbeat(e);
                self.stats.errors().count(&e);
                tracing::warn!(error = %e, "heartbeat failed");
            }
        }
    }
}

impl Heartbeats {
    pub fn start(
        pool: sqlx::PgPool,
        config: &WorkerConfig,
        started_at: DateTime<Utc>,
        stats: Arc<StatsRegistry>,
        lease: Lease,
    ) -> Heartbeats {
        let (state, mut changes) = watch::channel(WorkerState::Running);
        let interval = config.heartbeat_every();
        let beat = Arc::new(Beat {
            pool,
            name: config.name.clone(),
            started_at,
            stats,
            capacity: config.capacity,
            lease_ttl: config.lease_ttl,
            hold_limit: config.held_messages(),
            step_timeout: config.database_step_timeout,
            lease,
        });
        let task = tokio::spawn({
            let beat = beat.clone();
            async move {
                let mut ticker = tokio::time::interval(interval);
                ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tokio::select! {
                        _ = ticker.tick() => {}
                        changed = changes.changed() => if changed.is_err() { return },
                    }
                    let state = *changes.borrow_and_update();
                    beat.write(state).await;
                }
            }
        });
        Heartbeats { state, task, beat }
    }

    /// Records a new state and writes a heartbeat with it promptly.
    pub async fn set_state(&self, state: WorkerState) {
        self.state.send_replace(state);
        tokio::task::yield_now().await;
    }

    /// Stops the periodic beats and writes a last one with the final state. A beat under way
    /// finishes first (its own timeout bounds it): aborting it mid-commit would leave its
    /// connection to roll back a transaction that already ended.
    pub async fn stop(self, state: WorkerState) {
        drop(self.state);
        let _ = self.task.await;
        self.beat.write(state).await;
    }
}
