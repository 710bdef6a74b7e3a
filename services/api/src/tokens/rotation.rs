//! Signing key rotation and keeping every process's key set current.
//!
//! A rotation stores a new key that signs from then on and gives the older keys a deadline
//! (`grace`): until then they stay in the JWK set and keep verifying the tokens they signed.
//! Other API processes learn of the rotation at their next periodic reload or on the first
//! token naming the new key, and a process that had not reloaded yet keeps signing with the old
//! key for at most one reload interval — so the default grace is the longest token lifetime plus
//! a margin for that interval and clock leeway.

use std::time::Duration;

use chrono::{DateTime, Utc};
use shoal_store::audit::{self, AuditEntry};
use shoal_store::crypto::Cipher;
use shoal_store::signing_keys::{self, RetiringKey};
use shoal_store::{StoreError, begin_platform};
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;

use super::{MAX_TTL, TokenService, generate_key};

/// How often an API process re-reads the keys, so it picks up a rotation by another process.
pub const DEFAULT_RELOAD_INTERVAL: Duration = Duration::from_secs(30);

/// How long rotated-out keys keep verifying unless told otherwise: a token issued just before
/// the rotation (or by a process that had not reloaded yet) with the longest lifetime stays
/// valid until it expires.
pub const DEFAULT_GRACE: Duration =
    Duration::from_secs(MAX_TTL.as_secs() + DEFAULT_RELOAD_INTERVAL.as_secs() + 5 * 60);

/// Longest grace a rotation accepts (a week): beyond it, a compromised key would live too long.
pub const MAX_GRACE: Duration = Duration::from_secs(7 * 86_400);

/// What a rotation did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rotation {
    /// The key that signs from now on.
    pub kid: String,
    /// The keys rotated out, newest first, with when each stops verifying.
    pub retiring: Vec<RetiringKey>,
}

impl Rotation {
    /// When the last rotated-out key stops verifying.
    pub fn last_deadline(&self) -> Option<DateTime<Utc>> {
        self.retiring.iter().map(|k| k.verify_until).max()
    }
}

impl TokenService {
    /// Rotates the signing key (serialised across processes) and installs the new key set.
    /// `audit` is recorded in the rotation's transaction.
    pub async fn rotate(
        &self,
        pool: &PgPool,
        cipher: &Cipher,
        grace: Duration,
        audit: &AuditEntry<'_>,
    ) -> Result<Rotation, StoreError> {
        let key = generate_key()?;
        let mut tx = begin_platform(pool).await?;
        let retiring = signing_keys::rotate(&mut tx, cipher, &key, grace.min(MAX_GRACE)).await?;
        audit::record(&mut tx, audit).await?;
        let keys = signing_keys::active(&mut tx, cipher).await?;
        tx.commit().await?;
        self.install(&keys)?;
        tracing::info!(kid = %key.kid, retiring = retiring.len(), "signing key rotated");
        Ok(Rotation {
            kid: key.kid,
            retiring,
        })
    }
}

/// Re-reads the keys every `every` until `stop` fires. A failed read (Postgres down) keeps the
/// current keys; their deadlines are still enforced at verification.
pub async fn reload_periodically(
    tokens: TokenService,
    pool: PgPool,
    cipher: Cipher,
    every: Duration,
    stop: CancellationToken,
) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = ticks.tick() => {}
        }
        match tokens.refresh(&pool, &cipher).await {
            Ok(true) => tracing::info!("signing keys changed; reloaded"),
            Ok(false) => {}
            Err(err) => tracing::warn!(error = %err, "could not reload signing keys"),
        }
    }
}
