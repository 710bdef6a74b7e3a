//! Shoal as the issuer of its apps' identities where no HTTP request is involved: the client
//! assertions a worker (or the scheduler, reading queue lengths) presents to Entra ID to sign
//! in as an app's identity through workload identity federation.
//!
//! An assertion is an ES256 JWT signed with the platform's current signing key (the one the
//! API publishes in its JWK set and its federation discovery document): `iss` = the
//! federation issuer under Shoal's public URL, `sub` = the identity's principal id, `aud` =
//! `api://AzureADTokenExchange`, valid for ten minutes. Entra fetches the issuer's discovery
//! document and JWK set and accepts the assertion only for an Entra identity with a federated
//! credential naming exactly that issuer, subject and audience.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::Serialize;
use shoal_connectors::AssertionSource;
use shoal_domain::connection::outbound::{
    ASSERTION_LIFETIME_SECS, FEDERATION_AUDIENCE, federation_issuer,
};
use shoal_store::crypto::Cipher;
use shoal_store::{begin_platform, signing_keys};
use tokio::sync::Mutex;
use url::Url;

/// How long a loaded signing key is used before the keys are read again, so a rotation made by
/// another process is followed (the API reloads on the same period).
const KEY_RELOAD: Duration = Duration::from_secs(30);

/// Signs client assertions for app identities; one per process, shared by its connections.
pub struct FederationSigner {
    issuer: String,
    pool: sqlx::PgPool,
    cipher: Cipher,
    key: Mutex<Option<LoadedKey>>,
}

struct LoadedKey {
    kid: String,
    key: EncodingKey,
    loaded: Instant,
}

#[derive(Serialize)]
struct AssertionClaims<'a> {
    iss: &'a str,
    sub: &'a str,
    aud: &'a str,
    iat: u64,
    nbf: u64,
    exp: u64,
    /// Unique per assertion, so Entra can refuse a replay.
    jti: String,
}

impl std::fmt::Debug for FederationSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FederationSigner")
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

impl FederationSigner {
    /// `public_url` is where Entra ID reaches Shoal's API (`--public-url`).
    pub fn new(public_url: &Url, pool: sqlx::PgPool, cipher: Cipher) -> FederationSigner {
        FederationSigner {
            issuer: federation_issuer(public_url.as_str()),
            pool,
            cipher,
            key: Mutex::new(None),
        }
    }

    /// The `iss` of the assertions.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// A fresh assertion for `subject`.
    pub async fn sign(&self, subject: &str) -> Result<String, String> {
        let mut slot = self.key.lock().await;
        if slot
            .as_ref()
            .is_none_or(|k| k.loaded.elapsed() >= KEY_RELOAD)
        {
            match self.load().await {
                Ok(key) => *slot = Some(key),
                // A failed reload keeps signing with the key already held, if any: it stays
                // valid for the grace of a rotation.
                Err(e) if slot.is_some() => {
                    tracing::warn!(error = %e, "re-reading the signing keys failed; signing with the current one")
                }
                Err(e) => return Err(e),
            }
        }
        let key = slot.as_ref().ok_or("no signing key")?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let claims = AssertionClaims {
            iss: &self.issuer,
            sub: subject,
            aud: FEDERATION_AUDIENCE,
            iat: now,
            nbf: now,
            exp: now + ASSERTION_LIFETIME_SECS,
            jti: uuid::Uuid::new_v4().to_string(),
        };
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(key.kid.clone());
        jsonwebtoken::encode(&header, &claims, &key.key)
            .map_err(|e| format!("signing the client assertion failed: {e}"))
    }

    async fn load(&self) -> Result<LoadedKey, String> {
        let read = async {
            let mut tx = begin_platform(&self.pool).await?;
            let keys = signing_keys::active(&mut tx, &self.cipher).await?;
            tx.commit().await?;
            Ok::<_, shoal_store::StoreError>(keys)
        };
        let keys = read
            .await
            .map_err(|e| format!("reading Shoal's signing keys failed: {e}"))?;
        let key = keys
            .into_iter()
            .find(|k| k.verify_until.is_none())
            .ok_or("Shoal has no signing key yet (`shoal serve` creates one on start)")?;
        Ok(LoadedKey {
            key: EncodingKey::from_ec_der(&key.private_pkcs8),
            kid: key.kid,
            loaded: Instant::now(),
        })
    }
}

#[async_trait::async_trait]
impl AssertionSource for FederationSigner {
    async fn assertion(&self, subject: &str) -> Result<String, String> {
        self.sign(subject).await
    }
}
