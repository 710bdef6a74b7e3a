//! One LISTEN connection per API process: `shoal_config` (`tenant/app` changed → drop that
//! webhook catalog entry), `shoal_webhook_invocations` (something was queued → wake the
//! dispatcher) and `shoal_rbac` (principals or role assignments changed → empty the access
//! cache). The store's supervisor pings every second so the catalog knows it is still
//! receiving, and reconnects with back-off whenever the connection fails; every
//! (re)connection empties both caches and wakes the dispatcher, because whatever was announced
//! meanwhile was lost, and while it is down the access cache is bypassed.

use std::sync::Arc;
use std::time::Duration;

use shoal_store::listen::{self, Subscriber, Supervisor};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::access::AccessCache;
use crate::webhooks::catalog::Catalog;

const PING_EVERY: Duration = Duration::from_secs(1);
/// A ping, a connection or a subscription slower than this counts as a failure.
const STEP_TIMEOUT: Duration = Duration::from_secs(2);

pub async fn listen(
    pool: sqlx::PgPool,
    catalog: Arc<Catalog>,
    dispatch: Arc<Notify>,
    access: Arc<AccessCache>,
    stop: CancellationToken,
) {
    let supervisor = Supervisor {
        channels: vec![listen::CONFIG, listen::WEBHOOK_INVOCATIONS, listen::RBAC],
        ping_every: Some(PING_EVERY),
        step_timeout: STEP_TIMEOUT,
        meanwhile: "webhook catalog entries expire within seconds and role assignments are read on every request",
    };
    let mut caches = Caches {
        catalog,
        dispatch,
        access,
    };
    supervisor.run(&pool, &mut caches, &stop).await;
}

/// What the API keeps that notifications invalidate.
struct Caches {
    catalog: Arc<Catalog>,
    dispatch: Arc<Notify>,
    access: Arc<AccessCache>,
}

impl Subscriber for Caches {
    fn connected(&mut self) {
        self.catalog.invalidate_all();
        self.catalog.confirm_listening();
        self.access.set_listening(true);
        self.dispatch.notify_one();
    }

    fn notified(&mut self, channel: &str, payload: &str) {
        self.catalog.confirm_listening();
        match channel {
            listen::CONFIG => self.catalog.invalidate(payload),
            listen::RBAC => self.access.invalidate(),
            _ => self.dispatch.notify_one(),
        }
    }

    fn alive(&mut self) {
        self.catalog.confirm_listening();
    }

    fn disconnected(&mut self) {
        self.access.set_listening(false);
    }
}
