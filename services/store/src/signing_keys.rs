//! Token signing keys (platform scope). The private key (PKCS#8) is sealed like app settings;
//! the public JWK is stored in the clear for `/.well-known/jwks.json`.

use sqlx::Row;

use crate::crypto::Cipher;
use crate::{StoreError, Tx};

#[derive(Clone)]
pub struct SigningKey {
    pub kid: String,
    pub algorithm: String,
    /// PKCS#8 DER of the private key.
    pub private_pkcs8: Vec<u8>,
    pub public_jwk: serde_json::Value,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("kid", &self.kid)
            .field("algorithm", &self.algorithm)
            .finish()
    }
}

fn aad(kid: &str) -> String {
    format!("signing-key/{kid}")
}

/// The keys tokens may be verified with: every key not yet retired, newest first.
pub async fn active(tx: &mut Tx, cipher: &Cipher) -> Result<Vec<SigningKey>, StoreError> {
    let rows = sqlx::query(
        "select kid, algorithm, private_key, public_jwk from signing_keys
         where retired_at is null order by created_at desc, kid",
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
                kid,
            })
        })
        .collect()
}

/// Stores a new key. Serialised by an advisory lock in the caller's transaction so that two
/// processes starting at once do not both create a "first" key.
pub async fn insert(tx: &mut Tx, cipher: &Cipher, key: &SigningKey) -> Result<(), StoreError> {
    sqlx::query("insert into signing_keys (kid, algorithm, private_key, public_jwk) values ($1, $2, $3, $4)")
        .bind(&key.kid)
        .bind(&key.algorithm)
        .bind(cipher.encrypt(&key.private_pkcs8, &aad(&key.kid))?)
        .bind(&key.public_jwk)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Takes the transaction-scoped lock that serialises key creation across processes.
pub async fn lock_for_creation(tx: &mut Tx) -> Result<(), StoreError> {
    sqlx::query("select pg_advisory_xact_lock(hashtext('shoal.signing_keys'))")
        .execute(&mut **tx)
        .await?;
    Ok(())
}
