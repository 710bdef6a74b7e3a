//! One LISTEN connection per API process: `shoal_config` (`tenant/app` changed → drop that
//! webhook catalog entry), `shoal_webhook_invocations` (something was queued → wake the
//! dispatcher) and `shoal_rbac` (principals or role assignments changed → empty the access
//! cache). It pings every second so the catalog knows it is still receiving, and reconnects
//! with back-off whenever the connection fails (a Postgres restart needs no API restart);
//! every (re)connection empties both caches and wakes the dispatcher, because whatever was
//! announced meanwhile was lost, and while it is down the access cache is bypassed.

use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::PgListener;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::access::{self, AccessCache};
use crate::webhooks::catalog::Catalog;

/// Configuration changes (migration 0004): the payload is `tenant/app`.
const CONFIG_CHANNEL: &str = "shoal_config";
const PING_EVERY: Duration = Duration::from_secs(1);
/// A ping, a connection or a subscription slower than this counts as a failure.
const STEP_TIMEOUT: Duration = Duration::from_secs(2);
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(2);

pub async fn listen(
    pool: sqlx::PgPool,
    catalog: Arc<Catalog>,
    dispatch: Arc<Notify>,
    access: Arc<AccessCache>,
    stop: CancellationToken,
) {
    let mut backoff = FIRST_BACKOFF;
    let mut failing = false;
    loop {
        match subscribe(&pool).await {
            Ok(mut listener) => {
                if failing {
                    tracing::info!("listening for changes again");
                }
                failing = false;
                backoff = FIRST_BACKOFF;
                catalog.invalidate_all();
                catalog.confirm_listening();
                access.set_listening(true);
                dispatch.notify_one();
                let received = receive(&mut listener, &catalog, &dispatch, &access, &stop).await;
                access.set_listening(false);
                if let Err(error) = received {
                    tracing::warn!(%error, "the connection listening for changes failed; reconnecting");
                }
            }
            Err(error) if !failing => {
                tracing::warn!(%error, "cannot listen for changes; retrying (webhook catalog entries expire within seconds and role assignments are read on every request meanwhile)");
                failing = true;
            }
            Err(error) => tracing::debug!(%error, "cannot listen for changes yet"),
        }
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(backoff) => {}
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

async fn subscribe(pool: &sqlx::PgPool) -> anyhow::Result<PgListener> {
    let connect = async {
        let mut listener = PgListener::connect_with(pool).await?;
        listener
            .listen_all([
                CONFIG_CHANNEL,
                shoal_store::webhook_invocations::CHANNEL,
                access::CHANNEL,
            ])
            .await?;
        Ok::<_, sqlx::Error>(listener)
    };
    Ok(tokio::time::timeout(STEP_TIMEOUT, connect).await??)
}

/// Until the connection fails (an error) or `stop` fires (Ok).
async fn receive(
    listener: &mut PgListener,
    catalog: &Catalog,
    dispatch: &Notify,
    access: &AccessCache,
    stop: &CancellationToken,
) -> anyhow::Result<()> {
    let mut ping = tokio::time::interval(PING_EVERY);
    ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return Ok(()),
            received = listener.try_recv() => match received? {
                Some(notification) => {
                    catalog.confirm_listening();
                    match notification.channel() {
                        CONFIG_CHANNEL => catalog.invalidate(notification.payload()),
                        access::CHANNEL => access.invalidate(),
                        _ => dispatch.notify_one(),
                    }
                }
                None => anyhow::bail!("the listening connection was lost"),
            },
            _ = ping.tick() => {
                let ping = sqlx::query("select 1").execute(&mut *listener);
                tokio::time::timeout(STEP_TIMEOUT, ping).await??;
                catalog.confirm_listening();
            }
        }
    }
}
