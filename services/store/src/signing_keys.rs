//! Token signing keys (platform scope). The private key (PKCS#8) is sealed like app settings;
//! the public JWK is stored in the clear for `/.well-known/jwks.json`.
//!
//! Rotation adds a key and gives every older one a deadline (`verify_until`): the key without a
//! deadline signs, the others only verify until theirs passes. A key past its deadline is never
//! returned again, so it drops out of the JWK set and its tokens stop verifying everywhere.

use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::Row;

use crate::crypto::Cipher;
use crate::metrics::{Operation, measured};
use crate::{StoreError, Tx};

#[derive(Clone)]
pub struct SigningKey {
    pub kid: String,
    pub algorithm: String,
    /// PKCS#8 DER of the private key.
    pub private_pkcs8: Vec<u8>,
    pub public_jwk: serde_json::Value,
    /// Set once the key has been rotated out: it verifies until then, and never signs.
    pub verify_until: Option<DateTime<Utc>>,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("kid", &self.kid)
            .field("algorithm", &self.algorithm)
            .field("verify_until", &self.verify_until)
            .finish()
    }
}

/// A key that was rotated out, and until when it still verifies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetiringKey {
    pub kid: String,
    pub verify_until: DateTime<Utc>,
}

fn aad(kid: &str) -> String {
    format!("signing-key/{kid}")
}

/// The keys tokens may be verified with: every key not retired and not past its deadline. The
/// signing key (no deadline, newest) comes first, then rotated-out keys, newest first.
pub async fn active(tx: &mut Tx, cipher: &Cipher) -> Result<Vec<SigningKey>, StoreError> {
    measured(Operation::SigningKeysActive, async move {
        let rows = sqlx::query(
            "select kid, algorithm, private_key, public_jwk, verify_until from signing_keys
             where retired_at is null and (verify_until is null or verify_until > now())
             order by verify_until is null desc, created_at desc, kid",
        )
        .fetch_all(&mut **tx)
        .await?;
        rows.iter()
            .map(|row| {
                let kid: String = row.try_get("kid")?;
                let sealed: Vec<u8> = row.try_get("private_key")?;
                Ok(SigningKey {
                    private_pkcs8: cipher.decrypt(&sealed, &aad(&kid))?,
                    algorithm: row.try_get("algorithm")?,
                    public_jwk: row.try_get("public_jwk")?,
                    verify_until: row.try_get("verify_until")?,
                    kid,
                })
            })
            .collect()
    })
    .await
}

/// Stores a new key. Serialised by an advisory lock in the caller's transaction so that two
/// processes starting at once do not both create a "first" key.
pub async fn insert(tx: &mut Tx, cipher: &Cipher, key: &SigningKey) -> Result<(), StoreError> {
    measured(Operation::SigningKeysInsert, async move {
        sqlx::query("insert into signing_keys (kid, algorithm, private_key, public_jwk) values ($1, $2, $3, $4)")
            .bind(&key.kid)
            .bind(&key.algorithm)
            .bind(cipher.encrypt(&key.private_pkcs8, &aad(&key.kid))?)
            .bind(&key.public_jwk)
            .execute(&mut **tx)
            .await?;
        Ok(())
    })
    .await
}

/// Makes `key` the signing key: every other live key verifies for at most `grace` more (a
/// deadline already sooner is kept, so an emergency rotation with a short grace also cuts off
/// keys rotated out earlier), and keys already past their deadline are marked retired. Returns
/// the keys rotated out with their deadlines, newest first.
pub async fn rotate(
    tx: &mut Tx,
    cipher: &Cipher,
    key: &SigningKey,
    grace: Duration,
) -> Result<Vec<RetiringKey>, StoreError> {
    measured(Operation::SigningKeysRotate, async move {
        lock_for_creation(tx).await?;
        sqlx::query(
            "update signing_keys set retired_at = now()
             where retired_at is null and verify_until <= now()",
        )
        .execute(&mut **tx)
        .await?;
        let rows = sqlx::query(
            "update signing_keys
                set verify_until = least(coalesce(verify_until, 'infinity'),
                                         now() + make_interval(secs => $1))
              where retired_at is null
              returning kid, verify_until, created_at",
        )
        .bind(grace.as_secs_f64())
        .fetch_all(&mut **tx)
        .await?;
        insert(tx, cipher, key).await?;
        let mut retiring = rows
            .iter()
            .map(|row| {
                Ok((
                    row.try_get::<DateTime<Utc>, _>("created_at")?,
                    RetiringKey {
                        kid: row.try_get("kid")?,
                        verify_until: row.try_get("verify_until")?,
                    },
                ))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        retiring.sort_by_key(|(created_at, _)| std::cmp::Reverse(*created_at));
        Ok(retiring.into_iter().map(|(_, key)| key).collect())
    })
    .await
}

/// Takes the transaction-scoped lock that serialises key creation across processes.
pub async fn lock_for_creation(tx: &mut Tx) -> Result<(), StoreError> {
    measured(Operation::SigningKeysLockForCreation, async move {
        sqlx::query("select pg_advisory_xact_lock(hashtext('shoal.signing_keys'))")
            .execute(&mut **tx)
            .await?;
        Ok(())
    })
    .await
}
