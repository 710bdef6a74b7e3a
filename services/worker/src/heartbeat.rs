//! Heartbeats: the worker's registry row, rewritten every interval with its state and listener
//! statistics. A failed beat is logged and retried at the next interval; Postgres being down
//! does not stop the listeners.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use shoal_domain::workers::WorkerState;
use shoal_store::workers::{self, Heartbeat};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::runtime::DATABASE_STEP_TIMEOUT;
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
        };
        let write = async {
            let mut tx = shoal_store::begin_platform(&self.pool).await?;
            workers::heartbeat(&mut tx, &beat).await?;
            shoal_store::commit(tx).await
        };
        match tokio::time::timeout(DATABASE_STEP_TIMEOUT, write).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "heartbeat failed"),
            Err(_) => tracing::warn!("heartbeat timed out"),
        }
    }
}

impl Heartbeats {
    pub fn start(
        pool: sqlx::PgPool,
        name: String,
        started_at: DateTime<Utc>,
        stats: Arc<StatsRegistry>,
        interval: Duration,
    ) -> Heartbeats {
        let (state, mut changes) = watch::channel(WorkerState::Running);
        let beat = Arc::new(Beat {
            pool,
            name,
            started_at,
            stats,
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

    /// Stops the periodic beats and writes a last one with the final state.
    pub async fn stop(self, state: WorkerState) {
        self.task.abort();
        let _ = self.task.await;
        self.beat.write(state).await;
    }
}
