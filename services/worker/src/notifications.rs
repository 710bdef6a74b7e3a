//! Wakes the runtime when Postgres announces a change that concerns this worker, so it reacts
//! within a second instead of at its next periodic refresh:
//!
//! * `shoal_assignments` with the worker's name: its assignments changed → reload;
//! * `shoal_assignments` with an empty payload: some worker gave a claim back → retry the
//!   claims still pending (no reload);
//! * `shoal_config` naming `tenant/app` of an app the worker hosts or should host (any app in
//!   all-apps mode), or `tenant/` of such an app's tenant → reload;
//! * `shoal_breakers`: a function's circuit breaker changed state → read the breakers now (the
//!   listeners of a function that just opened pause within the round trip).
//!
//! The store's supervisor re-establishes the listening connection with back-off whenever it
//! drops (a Postgres restart needs no worker restart), and every (re)connection triggers a
//! reload, because notifications sent while nobody listened are lost. The periodic refresh
//! stays as a fallback for a connection that dies silently.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use shoal_store::listen::{self, Subscriber, Supervisor};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::breaker::Breakers;

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

    /// `tenant/app`, or `tenant/` for every app of a tenant (its allowances changed).
    fn covers(&self, app: &str) -> bool {
        self.lock().as_ref().is_none_or(|apps| {
            if app.ends_with('/') {
                apps.iter().any(|a| a.starts_with(app))
            } else {
                apps.contains(app)
            }
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<HashSet<String>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Listens until aborted; `step_timeout` bounds each connect and LISTEN.
pub fn listen(
    pool: sqlx::PgPool,
    worker: String,
    step_timeout: Duration,
    interest: Arc<Interest>,
    wake: Arc<Wake>,
    breakers: Arc<Breakers>,
) -> JoinHandle<()> {
    let supervisor = Supervisor {
        channels: vec![listen::ASSIGNMENTS, listen::CONFIG, listen::BREAKERS],
        ping_every: None,
        step_timeout,
        meanwhile: "periodic refresh",
    };
    let mut route = Route {
        worker,
        interest,
        wake,
        breakers,
    };
    tokio::spawn(async move {
        // Aborted rather than stopped: the token never fires.
        let never = CancellationToken::new();
        supervisor.run(&pool, &mut route, &never).await;
    })
}

/// Which notifications concern this worker, and what each asks of the runtime.
struct Route {
    worker: String,
    interest: Arc<Interest>,
    wake: Arc<Wake>,
    breakers: Arc<Breakers>,
}

impl Subscriber for Route {
    fn connected(&mut self) {
        self.wake.reload();
        self.breakers.wake();
    }

    fn notified(&mut self, channel: &str, payload: &str) {
        match (channel, payload) {
            (listen::ASSIGNMENTS, "") => self.wake.retry(),
            (listen::ASSIGNMENTS, name) if name == self.worker => self.wake.reload(),
            (listen::CONFIG, app) if self.interest.covers(app) => self.wake.reload(),
            (listen::BREAKERS, _) => self.breakers.wake(),
            _ => {}
        }
    }
}
