//! LISTEN/NOTIFY: every channel Shoal's triggers notify on, and one supervisor that keeps a
//! listening connection up.
//!
//! Notifications are a hint, never the record: one sent while nobody listened is lost. So the
//! supervisor reconnects with back-off whenever the connection fails (a Postgres restart needs
//! no process restart), and every (re)connection tells the subscriber that anything may have
//! changed meanwhile. The channel names are spelled again in the migrations' triggers; a test
//! checks both agree.

use std::time::Duration;

use sqlx::postgres::PgListener;
use tokio_util::sync::CancellationToken;

/// App or function configuration changed (migration 0004); the payload is `tenant/app`.
pub const CONFIG: &str = "shoal_config";
/// Instance assignments changed (migration 0004); the payload names the worker concerned, or is
/// empty when a worker gave a claim back (anyone waiting for a claim may retry).
pub const ASSIGNMENTS: &str = "shoal_assignments";
/// Principals, role definitions or role assignments changed (migration 0005); no payload.
pub const RBAC: &str = "shoal_rbac";
/// A webhook invocation was queued (migration 0006); no payload.
pub const WEBHOOK_INVOCATIONS: &str = "shoal_webhook_invocations";

/// A function's circuit breaker changed state (migration 0009); the payload is
/// `tenant/app/function`.
pub const BREAKERS: &str = "shoal_breakers";

/// Every channel above.
pub const ALL: [&str; 5] = [CONFIG, ASSIGNMENTS, RBAC, WEBHOOK_INVOCATIONS, BREAKERS];

const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// What a process does when its listening connection reports something.
pub trait Subscriber: Send {
    /// Listening (again). Whatever was announced before, or while the connection was down, was
    /// lost: treat it as "anything may have changed".
    fn connected(&mut self);

    /// A notification on one of the supervised channels.
    fn notified(&mut self, channel: &str, payload: &str);

    /// The connection answered a ping (only when the supervisor pings).
    fn alive(&mut self) {}

    /// The connection failed; notifications are lost until [`Subscriber::connected`].
    fn disconnected(&mut self) {}
}

/// Keeps one LISTEN connection on `channels` up until stopped.
#[derive(Debug, Clone)]
pub struct Supervisor {
    pub channels: Vec<&'static str>,
    /// Ping this often, so a connection that dies silently is noticed (and
    /// [`Subscriber::alive`] confirms it is not); None: rely on the socket alone.
    pub ping_every: Option<Duration>,
    /// A connection, subscription or ping slower than this counts as a failure.
    pub step_timeout: Duration,
    /// What the process relies on while not listening, for the log.
    pub meanwhile: &'static str,
}

impl Supervisor {
    /// Listens until `stop` fires.
    pub async fn run(
        &self,
        pool: &sqlx::PgPool,
        subscriber: &mut impl Subscriber,
        stop: &CancellationToken,
    ) {
        let mut backoff = FIRST_BACKOFF;
        let mut failing = false;
        loop {
            match self.subscribe(pool).await {
                Ok(mut listener) => {
                    if failing {
                        tracing::info!("listening for changes again");
                    }
                    failing = false;
                    backoff = FIRST_BACKOFF;
                    subscriber.connected();
                    let received = self.receive(&mut listener, subscriber, stop).await;
                    subscriber.disconnected();
                    if let Err(error) = received {
                        tracing::warn!(%error, "the connection listening for changes failed; reconnecting");
                    }
                }
                Err(error) if !failing => {
                    tracing::warn!(%error, meanwhile = self.meanwhile, "cannot listen for changes; retrying");
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

    async fn subscribe(&self, pool: &sqlx::PgPool) -> Result<PgListener, ListenError> {
        let connect = async {
            let mut listener = PgListener::connect_with(pool).await?;
            listener.listen_all(self.channels.iter().copied()).await?;
            Ok::<_, sqlx::Error>(listener)
        };
        Ok(tokio::time::timeout(self.step_timeout, connect).await??)
    }

    /// Until the connection fails (an error) or `stop` fires (Ok).
    async fn receive(
        &self,
        listener: &mut PgListener,
        subscriber: &mut impl Subscriber,
        stop: &CancellationToken,
    ) -> Result<(), ListenError> {
        let mut ping = self.ping_every.map(|every| {
            let mut ping = tokio::time::interval(every);
            ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            ping
        });
        loop {
            let ping_due = async {
                match ping.as_mut() {
                    Some(ping) => ping.tick().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = stop.cancelled() => return Ok(()),
                received = listener.try_recv() => match received? {
                    Some(n) => subscriber.notified(n.channel(), n.payload()),
                    // PgListener would reconnect by itself, but quietly: reconnecting here
                    // makes the gap a `connected` like any other.
                    None => return Err(ListenError::Lost),
                },
                _ = ping_due => {
                    let ping = sqlx::query("select 1").execute(&mut *listener);
                    tokio::time::timeout(self.step_timeout, ping).await??;
                    subscriber.alive();
                }
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
enum ListenError {
    #[error(transparent)]
    Database(#[from] sqlx::Error),
    #[error("timed out")]
    TimedOut(#[from] tokio::time::error::Elapsed),
    #[error("the listening connection was lost")]
    Lost,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The channel names each migration's triggers pass to `pg_notify`.
    fn notified_in_migrations() -> std::collections::BTreeSet<String> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../migrations");
        let mut channels = std::collections::BTreeSet::new();
        for entry in std::fs::read_dir(dir).expect("migrations directory") {
            let sql = std::fs::read_to_string(entry.expect("migration").path()).expect("sql");
            for call in sql.split("pg_notify(").skip(1) {
                let name = call
                    .trim_start()
                    .strip_prefix('\'')
                    .expect("a literal channel");
                channels.insert(name[..name.find('\'').expect("closing quote")].to_owned());
            }
        }
        channels
    }

    #[test]
    fn channel_names_match_what_the_migrations_notify() {
        let constants = ALL.iter().map(|c| c.to_string()).collect();
        assert_eq!(notified_in_migrations(), constants);
    }
}
