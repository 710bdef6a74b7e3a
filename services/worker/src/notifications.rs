//! Wakes the runtime when Postgres announces a change that concerns this worker, so it reacts
//! within a second instead of at its next periodic refresh:
//!
//! * `shoal_assignments` with the worker's name: its assignments changed → reload;
//! * `shoal_assignments` with an empty payload: some worker gave a claim back → retry the
//!   claims still pending (no reload);
//! * `shoal_config` naming `tenant/app` of an app the worker hosts or should host (any app in
//!   all-apps mode) → reload.
//!
//! The listening connection is re-established with back-off whenever it drops (a Postgres
//! restart needs no worker restart), and every (re)connection triggers a reload, because
//! notifications sent while nobody listened are lost. The periodic refresh stays as a
//! fallback for a connection that dies silently.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use shoal_store::assignments;
use sqlx::postgres::{PgListener, PgNotification};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::config::DEFAULT_DATABASE_STEP_TIMEOUT as DATABASE_STEP_TIMEOUT;

/// Configuration changes (migration 0004): the payload is `tenant/app`.
pub const CONFIG_CHANNEL: &str = "shoal_config";

const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// What the runtime should do next; wake-ups coalesce.
#[derive(Debug, Default)]
pub struct Wake {
    notify: Notify,
    reload: AtomicBool,
}

impl Wake {
    pub async fn woken(&self) {
        self.notify.notified().await;
    }

    /// Whether a reload was asked for since the last call.
    pub fn take_reload(&self) -> bool {
        self.reload.swap(false, Ordering::AcqRel)
    }

    fn reload(&self) {
        self.reload.store(true, Ordering::Release);
        self.notify.notify_one();
    }

    fn retry(&self) {
        self.notify.notify_one();
    }
}

/// The apps (`tenant/app`) whose configuration changes concern this worker; None: every app.
#[derive(Debug)]
pub struct Interest(Mutex<Option<HashSet<String>>>);

impl Interest {
    pub fn every_app() -> Interest {
        Interest(Mutex::new(None))
    }

    pub fn apps(apps: HashSet<String>) -> Interest {
        Interest(Mutex::new(Some(apps)))
    }

    pub fn set(&self, apps: HashSet<String>) {
        let mut current = self.lock();
        if current.is_some() {
            *current = Some(apps);
        }
    }

    fn covers(&self, app: &str) -> bool {
        self.lock().as_ref().is_none_or(|apps| apps.contains(app))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<HashSet<String>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Listens until aborted.
pub fn listen(
    pool: sqlx::PgPool,
    worker: String,
    interest: Arc<Interest>,
    wake: Arc<Wake>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut backoff = FIRST_BACKOFF;
        let mut failing = false;
        loop {
            match subscribe(&pool).await {
                Ok(mut listener) => {
                    if failing {
                        tracing::info!("listening for changes again");
                    }
                    backoff = FIRST_BACKOFF;
                    failing = false;
                    wake.reload();
                    loop {
                        match listener.try_recv().await {
                            Ok(Some(n)) => route(&n, &worker, &interest, &wake),
                            // Lost and already reconnected: changes in between were missed.
                            Ok(None) => wake.reload(),
                            Err(e) => {
                                tracing::warn!(error = %e, "the connection listening for changes failed; reconnecting");
                                break;
                            }
                        }
                    }
                }
                Err(e) if !failing => {
                    tracing::warn!(error = %e, "cannot listen for changes; retrying (periodic refresh meanwhile)");
                    failing = true;
                }
                Err(e) => tracing::debug!(error = %e, "cannot listen for changes yet"),
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    })
}

async fn subscribe(pool: &sqlx::PgPool) -> anyhow::Result<PgListener> {
    let connect = async {
        let mut listener = PgListener::connect_with(pool).await?;
        listener
            .listen_all([assignments::CHANNEL, CONFIG_CHANNEL])
            .await?;
        Ok::<_, sqlx::Error>(listener)
    };
    Ok(tokio::time::timeout(DATABASE_STEP_TIMEOUT, connect).await??)
}

fn route(n: &PgNotification, worker: &str, interest: &Interest, wake: &Wake) {
    match (n.channel(), n.payload()) {
        (assignments::CHANNEL, "") => wake.retry(),
        (assignments::CHANNEL, name) if name == worker => wake.reload(),
        (CONFIG_CHANNEL, app) if interest.covers(app) => wake.reload(),
        _ => {}
    }
}
