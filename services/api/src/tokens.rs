//! Shoal's own bearer tokens: ES256 JWTs signed with a key kept (sealed) in Postgres and
//! published as a JWK set. The API verifies with every live key, so a key created by another
//! process (`shoal token` before `shoal serve`, a rotation, another replica) is picked up on
//! the first token that names it, or at the next periodic reload.
//!
//! A rotated-out key verifies until its deadline ([`rotation`]); the deadline is checked on
//! every verification and bounds how long a verified token is cached, so a key stops working
//! on time even if no reload happens in between.

use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use shoal_store::crypto::Cipher;
use shoal_store::signing_keys::{self, SigningKey};
use shoal_store::{StoreError, begin_platform};
use sqlx::PgPool;

use crate::expiring::ExpiringCache;
use crate::identity::Principal;

mod claims;
pub mod rotation;

use claims::Claims;

pub const DEFAULT_AUDIENCE: &str = "api://shoal";
pub const DEFAULT_ISSUER: &str = "urn:shoal";
/// Longest lifetime `shoal token` hands out.
pub const MAX_TTL: Duration = Duration::from_secs(24 * 3600);
const ALGORITHM: Algorithm = Algorithm::ES256;

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("the token names a key this service does not know")]
    UnknownKey,
    #[error("invalid token: {0}")]
    Invalid(String),
}

struct KeySet {
    signing: Option<(String, EncodingKey)>,
    /// Signing key first, then rotated-out keys; a handful at most.
    verifying: Vec<VerifyingKey>,
}

struct VerifyingKey {
    kid: String,
    key: DecodingKey,
    jwk: Jwk,
    /// Unix seconds (rounded down) from which a rotated-out key no longer verifies.
    deadline: Option<u64>,
}

impl VerifyingKey {
    fn live_at(&self, now: u64) -> bool {
        self.deadline.is_none_or(|deadline| now < deadline)
    }
}

/// Verified tokens are remembered until they expire, so a client that reuses its token does not
/// pay for an ECDSA verification on every request. The key is the whole token, so only a token
/// that verified can hit; the cache is emptied whenever the key set changes.
const VERIFIED_CACHE_CAPACITY: usize = 10_000;

#[derive(Clone)]
pub struct TokenService {
    issuer: String,
    audience: String,
    keys: Arc<RwLock<KeySet>>,
    validation: Arc<Validation>,
    verified: Arc<ExpiringCache<String, Principal, u64>>,
}

impl std::fmt::Debug for TokenService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenService")
            .field("issuer", &self.issuer)
            .finish()
    }
}

impl TokenService {
    pub fn new(issuer: &str, audience: &str) -> TokenService {
        let mut validation = Validation::new(ALGORITHM);
        validation.set_issuer(&[issuer]);
        validation.set_audience(&[audience]);
        validation.set_required_spec_claims(&["exp", "nbf", "iss", "aud", "sub"]);
        validation.validate_nbf = true;
        validation.leeway = 30;
        TokenService {
            issuer: issuer.to_string(),
            audience: audience.to_string(),
            keys: Arc::new(RwLock::new(KeySet {
                signing: None,
                verifying: Vec::new(),
            })),
            validation: Arc::new(validation),
            verified: Arc::new(ExpiringCache::new(VERIFIED_CACHE_CAPACITY)),
        }
    }

    /// Loads the live keys from Postgres, creating a signing key if there is none.
    pub async fn load_or_create(&self, pool: &PgPool, cipher: &Cipher) -> Result<(), StoreError> {
        let can_sign = |keys: &[SigningKey]| keys.iter().any(|k| k.verify_until.is_none());
        let mut tx = begin_platform(pool).await?;
        let mut keys = signing_keys::active(&mut tx, cipher).await?;
        if !can_sign(&keys) {
            signing_keys::lock_for_creation(&mut tx).await?;
            keys = signing_keys::active(&mut tx, cipher).await?;
            if !can_sign(&keys) {
                let key = generate_key()?;
                signing_keys::insert(&mut tx, cipher, &key).await?;
                keys.insert(0, key);
            }
        }
        tx.commit().await?;
        self.install(&keys).map(|_| ())
    }

    /// Re-reads the keys (periodically, and after a token named an unknown key); whether they
    /// changed.
    pub async fn refresh(&self, pool: &PgPool, cipher: &Cipher) -> Result<bool, StoreError> {
        let mut tx = begin_platform(pool).await?;
        let keys = signing_keys::active(&mut tx, cipher).await?;
        tx.commit().await?;
        self.install(&keys)
    }

    /// Replaces the key set; returns whether it changed. The verified-token cache is emptied
    /// only on a change, so a periodic reload that finds the same keys costs nothing.
    fn install(&self, keys: &[SigningKey]) -> Result<bool, StoreError> {
        let mut verifying = Vec::with_capacity(keys.len());
        for key in keys {
            let jwk: Jwk = serde_json::from_value(key.public_jwk.clone())
                .map_err(|e| StoreError::Corrupt(format!("signing key {}: {e}", key.kid)))?;
            let decoding = DecodingKey::from_jwk(&jwk)
                .map_err(|e| StoreError::Corrupt(format!("signing key {}: {e}", key.kid)))?;
            verifying.push(VerifyingKey {
                kid: key.kid.clone(),
                key: decoding,
                jwk,
                deadline: key
                    .verify_until
                    .map(|at| u64::try_from(at.timestamp()).unwrap_or(0)),
            });
        }
        let signing = keys
            .iter()
            .find(|k| k.verify_until.is_none())
            .map(|k| (k.kid.clone(), EncodingKey::from_ec_der(&k.private_pkcs8)));
        let mut set = self.keys.write().unwrap_or_else(|p| p.into_inner());
        let unchanged = set.signing.as_ref().map(|(kid, _)| kid)
            == signing.as_ref().map(|(kid, _)| kid)
            && set.verifying.len() == verifying.len()
            && set
                .verifying
                .iter()
                .zip(&verifying)
                .all(|(a, b)| a.kid == b.kid && a.deadline == b.deadline);
        if unchanged {
            return Ok(false);
        }
        *set = KeySet { signing, verifying };
        self.verified.clear();
        Ok(true)
    }

    /// Whether keys have been loaded: until then no token can be issued or verified.
    pub fn has_keys(&self) -> bool {
        !self
            .keys
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .verifying
            .is_empty()
    }

    /// The public keys as a JWK set document: the signing key first, then rotated-out keys
    /// until their deadlines.
    pub fn jwks(&self) -> serde_json::Value {
        let now = unix_now();
        let set = self.keys.read().unwrap_or_else(|p| p.into_inner());
        let keys: Vec<&Jwk> = set
            .verifying
            .iter()
            .filter(|k| k.live_at(now))
            .map(|k| &k.jwk)
            .collect();
        serde_json::json!({ "keys": keys })
    }

    /// The `iss` of issued tokens.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The `aud` of issued tokens: the one resource Shoal issues tokens for.
    pub fn audience(&self) -> &str {
        &self.audience
    }

    /// The key id new tokens are signed with.
    pub fn signing_kid(&self) -> Option<String> {
        let set = self.keys.read().unwrap_or_else(|p| p.into_inner());
        set.signing.as_ref().map(|(kid, _)| kid.clone())
    }

    pub fn issue(&self, principal: &Principal, ttl: Duration) -> Result<String, TokenError> {
        self.issue_expiring(principal, ttl).map(|(token, _)| token)
    }

    /// [`TokenService::issue`], also returning the token's `exp` (Unix seconds).
    pub fn issue_expiring(
        &self,
        principal: &Principal,
        ttl: Duration,
    ) -> Result<(String, u64), TokenError> {
        let now = unix_now();
        let claims = Claims::of(principal, &self.issuer, &self.audience, now, ttl);
        let set = self.keys.read().unwrap_or_else(|p| p.into_inner());
        let (kid, key) = set
            .signing
            .as_ref()
            .ok_or_else(|| TokenError::Invalid("no signing key loaded".into()))?;
        let mut header = Header::new(ALGORITHM);
        header.kid = Some(kid.clone());
        let exp = claims.exp;
        jsonwebtoken::encode(&header, &claims, key)
            .map(|token| (token, exp))
            .map_err(|e| TokenError::Invalid(e.to_string()))
    }

    /// Verifies signature, algorithm, issuer, audience, lifetime and the key's deadline, and
    /// maps the claims to a principal.
    pub fn verify(&self, token: &str) -> Result<Principal, TokenError> {
        let now = unix_now();
        if let Some(principal) = self.verified.get(token, now) {
            return Ok(principal);
        }
        // Cached until the token expires or its key's deadline passes, whichever is first.
        let (principal, exp) = self.verify_signature(token, now)?;
        self.verified
            .insert(token.to_string(), principal.clone(), exp, now);
        Ok(principal)
    }

    fn verify_signature(&self, token: &str, now: u64) -> Result<(Principal, u64), TokenError> {
        let header =
            jsonwebtoken::decode_header(token).map_err(|e| TokenError::Invalid(e.to_string()))?;
        if header.alg != ALGORITHM {
            return Err(TokenError::Invalid(format!(
                "algorithm {:?} is not accepted",
                header.alg
            )));
        }
        let kid = header
            .kid
            .ok_or_else(|| TokenError::Invalid("the token has no key id".into()))?;
        let (claims, deadline) = {
            let set = self.keys.read().unwrap_or_else(|p| p.into_inner());
            let key = set
                .verifying
                .iter()
                .find(|k| k.kid == kid)
                .ok_or(TokenError::UnknownKey)?;
            if !key.live_at(now) {
                return Err(TokenError::Invalid(
                    "the token's signing key has been rotated out".into(),
                ));
            }
            let claims = jsonwebtoken::decode::<Claims>(token, &key.key, &self.validation)
                .map_err(|e| TokenError::Invalid(e.to_string()))?
                .claims;
            (claims, key.deadline)
        };
        let valid_until = deadline.map_or(claims.exp, |d| d.min(claims.exp));
        Ok((claims.principal()?, valid_until))
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

/// A fresh P-256 key with a random key id.
fn generate_key() -> Result<SigningKey, StoreError> {
    let pkcs8 =
        EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
            .map_err(|_| StoreError::Crypto("could not generate a signing key".into()))?;
    let pkcs8 = pkcs8.as_ref().to_vec();
    let kid = uuid::Uuid::new_v4().simple().to_string();
    let mut jwk = Jwk::from_encoding_key(&EncodingKey::from_ec_der(&pkcs8), ALGORITHM)
        .map_err(|e| StoreError::Crypto(format!("could not derive the public key: {e}")))?;
    jwk.common.key_id = Some(kid.clone());
    jwk.common.public_key_use = Some(PublicKeyUse::Signature);
    let public_jwk = serde_json::to_value(&jwk).map_err(|e| StoreError::Crypto(e.to_string()))?;
    Ok(SigningKey {
        kid,
        algorithm: "ES256".into(),
        private_pkcs8: pkcs8,
        public_jwk,
        verify_until: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::Role;
    use shoal_domain::names::TenantName;

    fn service_with_key() -> TokenService {
        let service = TokenService::new(DEFAULT_ISSUER, DEFAULT_AUDIENCE);
        service.install(&[generate_key().unwrap()]).unwrap();
        service
    }

    /// Signs arbitrary claims with the service's current key, as a forger holding it could.
    fn sign(service: &TokenService, claims: &Claims) -> String {
        let set = service.keys.read().unwrap();
        let (kid, key) = set.signing.as_ref().unwrap();
        let mut header = Header::new(ALGORITHM);
        header.kid = Some(kid.clone());
        jsonwebtoken::encode(&header, claims, key).unwrap()
    }

    fn tenant_principal(role: Role) -> Principal {
        Principal::operator("alice", &TenantName::parse("contoso").unwrap(), role)
    }

    #[test]
    fn issued_tokens_verify_to_the_same_principal() {
        let service = service_with_key();
        for principal in [
            Principal::PlatformAdmin {
                subject: "ops".into(),
            },
            tenant_principal(Role::Reader),
            tenant_principal(Role::Owner),
            Principal::Registered {
                id: uuid::Uuid::new_v4(),
                tenant: TenantName::parse("contoso").unwrap(),
            },
        ] {
            let token = service.issue(&principal, Duration::from_secs(60)).unwrap();
            assert_eq!(service.verify(&token).unwrap(), principal);
        }
    }

    #[test]
    fn token_from_another_key_is_unknown() {
        let token = service_with_key()
            .issue(&tenant_principal(Role::Owner), Duration::from_secs(60))
            .unwrap();
        assert!(matches!(
            service_with_key().verify(&token),
            Err(TokenError::UnknownKey)
        ));
    }

    #[test]
    fn wrong_audience_and_expired_tokens_are_invalid() {
        let service = service_with_key();
        let other = TokenService {
            audience: "api://elsewhere".into(),
            ..service.clone()
        };
        let token = other
            .issue(&tenant_principal(Role::Owner), Duration::from_secs(60))
            .unwrap();
        assert!(matches!(
            service.verify(&token),
            Err(TokenError::Invalid(_))
        ));
        // Signed with the service's own key, expired beyond the leeway.
        let now = unix_now();
        let claims = Claims {
            iss: DEFAULT_ISSUER.into(),
            aud: DEFAULT_AUDIENCE.into(),
            sub: "alice".into(),
            iat: now - 600,
            nbf: now - 600,
            exp: now - 120,
            tid: Some("contoso".into()),
            oid: None,
            roles: vec!["Owner".into()],
        };
        let expired = sign(&service, &claims);
        assert!(matches!(
            service.verify(&expired),
            Err(TokenError::Invalid(_))
        ));
        // The same claims with a future expiry verify, so it is the expiry that was refused.
        let fresh = Claims {
            exp: now + 120,
            ..claims
        };
        let valid = sign(&service, &fresh);
        assert!(service.verify(&valid).is_ok());
    }

    #[test]
    fn a_cached_token_stops_verifying_when_it_expires_or_keys_change() {
        let service = service_with_key();
        let principal = tenant_principal(Role::Reader);
        let token = service.issue(&principal, Duration::from_secs(60)).unwrap();
        assert_eq!(service.verify(&token).unwrap(), principal);
        assert_eq!(
            service.verify(&token).unwrap(),
            principal,
            "served from the cache"
        );
        // A new key set (rotation, reload) forgets everything verified under the old one.
        service.install(&[generate_key().unwrap()]).unwrap();
        assert!(matches!(
            service.verify(&token),
            Err(TokenError::UnknownKey)
        ));
        // An entry past its expiry is not served.
        service
            .verified
            .insert("t".into(), principal, unix_now(), unix_now());
        assert!(service.verify("t").is_err());
    }

    #[test]
    fn tampered_payload_is_invalid() {
        let service = service_with_key();
        let token = service
            .issue(&tenant_principal(Role::Reader), Duration::from_secs(60))
            .unwrap();
        let mut parts: Vec<String> = token.split('.').map(str::to_string).collect();
        use base64::Engine;
        let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let payload = String::from_utf8(engine.decode(&parts[1]).unwrap())
            .unwrap()
            .replace("Reader", "Owner");
        parts[1] = engine.encode(payload);
        assert!(matches!(
            service.verify(&parts.join(".")),
            Err(TokenError::Invalid(_))
        ));
    }

    /// `new` signs; `old` was rotated out and verifies until `deadline_in` seconds from now.
    fn rotated(old: &SigningKey, deadline_in: i64) -> (SigningKey, SigningKey) {
        let new = generate_key().unwrap();
        let old = SigningKey {
            verify_until: Some(chrono::Utc::now() + chrono::Duration::seconds(deadline_in)),
            ..old.clone()
        };
        (new, old)
    }

    #[test]
    fn a_rotated_out_key_verifies_until_its_deadline_and_bounds_the_cache() {
        let service = TokenService::new(DEFAULT_ISSUER, DEFAULT_AUDIENCE);
        let first = generate_key().unwrap();
        service.install(std::slice::from_ref(&first)).unwrap();
        let principal = tenant_principal(Role::Reader);
        let old_token = service
            .issue(&principal, Duration::from_secs(3600))
            .unwrap();

        let (new, old) = rotated(&first, 100);
        assert!(service.install(&[new.clone(), old.clone()]).unwrap());
        assert_eq!(
            service.signing_kid(),
            Some(new.kid.clone()),
            "the new key signs"
        );
        assert_eq!(
            service.verify(&old_token).unwrap(),
            principal,
            "during the grace"
        );
        let cached_until = service.verified.until(&old_token).unwrap();
        let deadline = old.verify_until.unwrap().timestamp() as u64;
        assert_eq!(
            cached_until, deadline,
            "cached no longer than the key verifies"
        );
        let kids: Vec<String> = service.jwks()["keys"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["kid"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(kids, vec![new.kid.clone(), first.kid.clone()]);

        // The deadline passes without a reload (time moved forward: the key's deadline and the
        // cached entry's are both now): the old key's tokens are refused, and the old key
        // leaves the JWK set.
        let now = unix_now();
        service.keys.write().unwrap().verifying[1].deadline = Some(now);
        let cached = service.verified.get(&old_token, 0).unwrap();
        service.verified.insert(old_token.clone(), cached, now, now);
        assert!(
            matches!(service.verify(&old_token), Err(TokenError::Invalid(m)) if m.contains("rotated out"))
        );
        assert_eq!(service.jwks()["keys"].as_array().unwrap().len(), 1);
        let new_token = service.issue(&principal, Duration::from_secs(60)).unwrap();
        assert_eq!(service.verify(&new_token).unwrap(), principal);
    }

    #[test]
    fn reloading_the_same_keys_keeps_the_cache() {
        let service = service_with_key();
        let token = service
            .issue(&tenant_principal(Role::Reader), Duration::from_secs(60))
            .unwrap();
        service.verify(&token).unwrap();
        let key = {
            let set = service.keys.read().unwrap();
            set.verifying[0].kid.clone()
        };
        let same = SigningKey {
            kid: key,
            ..generate_key().unwrap()
        };
        // Same ids and deadlines: nothing changed, nothing is forgotten.
        let set = service.keys.read().unwrap().verifying.len();
        assert_eq!(set, 1);
        assert!(!service.install(std::slice::from_ref(&same)).unwrap());
        assert!(service.verified.until(&token).is_some());
    }

    #[test]
    fn without_a_key_free_of_deadline_nothing_is_signed() {
        let service = TokenService::new(DEFAULT_ISSUER, DEFAULT_AUDIENCE);
        let (_, old) = rotated(&generate_key().unwrap(), 100);
        service.install(&[old]).unwrap();
        assert!(service.has_keys());
        assert!(service.signing_kid().is_none());
        assert!(
            service
                .issue(&tenant_principal(Role::Reader), Duration::from_secs(60))
                .is_err()
        );
    }
}
