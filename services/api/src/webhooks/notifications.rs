//! One LISTEN connection per API process for the ingress: `shoal_config` (`tenant/app`
//! changed → drop that catalog entry) and `shoal_webhook_invocations` (something was queued →
//! wake the dispatcher). It pings every second so the catalog knows it is still receiving,
//! and reconnects with back-off whenever the connection fails (a Postgres restart needs no
//! API restart); every (re)connection empties the catalog and wakes the dispatcher, because
//! whatever was announced meanwhile was lost.

use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::PgListener;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::catalog::Catalog;

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
    stop: CancellationToken,
) {
    let mut backoff = FIRST_BACKOFF;
    let mut failing = false;
    loop {
        match subscribe(&pool).await {
            Ok(mut listener) => {
                if failing {
                    tracing::info!("webhook ingress: listening for changes again");
                }
                failing = false;
                backoff = FIRST_BACKOFF;
                catalog.invalidate_all();
                catalog.confirm_listening();
                dispatch.notify_one();
                if let Err(error) = receive(&mut listener, &catalog, &dispatch, &stop).await {
                    tracing::warn!(%error, "webhook ingress: the connection listening for changes failed; reconnecting");
                }
            }
            Err(error) if !failing => {
                tracing::warn!(%error, "webhook ingress: cannot listen for changes; retrying (catalog entries expire within seconds meanwhile)");
                failing = true;
            }
            Err(error) => tracing::debug!(%error, "webhook ingress: cannot listen for changes yet"),
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
            .listen_all([CONFIG_CHANNEL, shoal_store::webhook_invocations::CHANNEL])
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
                    if notification.channel() == CONFIG_CHANNEL {
                        catalog.invalidate(notification.payload());
                    } else {
                        dispatch.notify_one();
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
