//! Shoal's own bearer tokens: ES256 JWTs signed with a key kept (sealed) in Postgres and
//! published as a JWK set. The API verifies with every non-retired key, so a key created by
//! another process (`shoal token` before `shoal serve`, or another replica) is picked up on
//! the first token that names it.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use shoal_domain::names::TenantName;
use shoal_store::crypto::Cipher;
use shoal_store::signing_keys::{self, SigningKey};
use shoal_store::{StoreError, begin_platform};
use sqlx::PgPool;

use crate::auth::{Principal, Role};

pub const DEFAULT_AUDIENCE: &str = "api://shoal";
pub const DEFAULT_ISSUER: &str = "urn:shoal";
/// Longest lifetime `shoal token` hands out.
pub const MAX_TTL: Duration = Duration::from_secs(24 * 3600);
const ALGORITHM: Algorithm = Algorithm::ES256;
const PLATFORM_ADMIN: &str = "PlatformAdmin";

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Claims {
    iss: String,
    aud: String,
    sub: String,
    iat: u64,
    nbf: u64,
    exp: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tid: Option<String>,
    #[serde(default)]
    roles: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("the token names a key this service does not know")]
    UnknownKey,
    #[error("invalid token: {0}")]
    Invalid(String),
}

struct KeySet {
    signing: Option<(String, EncodingKey)>,
    verifying: HashMap<String, DecodingKey>,
    jwks: Vec<Jwk>,
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
    verified: Arc<std::sync::Mutex<HashMap<String, (Principal, u64)>>>,
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
                verifying: HashMap::new(),
                jwks: Vec::new(),
            })),
            validation: Arc::new(validation),
            verified: Arc::new(std::sync::Mutex::new(HashMap::new())),
        }
    }

    /// Loads the active keys from Postgres, creating the first one if there is none.
    pub async fn load_or_create(&self, pool: &PgPool, cipher: &Cipher) -> Result<(), StoreError> {
        let mut tx = begin_platform(pool).await?;
        let mut keys = signing_keys::active(&mut tx, cipher).await?;
        if keys.is_empty() {
            signing_keys::lock_for_creation(&mut tx).await?;
            keys = signing_keys::active(&mut tx, cipher).await?;
            if keys.is_empty() {
                let key = generate_key()?;
                signing_keys::insert(&mut tx, cipher, &key).await?;
                keys.push(key);
            }
        }
        tx.commit().await?;
        self.install(&keys)
    }

    /// Re-reads the keys (e.g. after a token named an unknown key).
    pub async fn refresh(&self, pool: &PgPool, cipher: &Cipher) -> Result<(), StoreError> {
        let mut tx = begin_platform(pool).await?;
        let keys = signing_keys::active(&mut tx, cipher).await?;
        tx.commit().await?;
        self.install(&keys)
    }

    fn install(&self, keys: &[SigningKey]) -> Result<(), StoreError> {
        let mut verifying = HashMap::new();
        let mut jwks = Vec::new();
        for key in keys {
            let jwk: Jwk = serde_json::from_value(key.public_jwk.clone())
                .map_err(|e| StoreError::Corrupt(format!("signing key {}: {e}", key.kid)))?;
            let decoding = DecodingKey::from_jwk(&jwk)
                .map_err(|e| StoreError::Corrupt(format!("signing key {}: {e}", key.kid)))?;
            verifying.insert(key.kid.clone(), decoding);
            jwks.push(jwk);
        }
        let signing = keys
            .first()
            .map(|k| (k.kid.clone(), EncodingKey::from_ec_der(&k.private_pkcs8)));
        let mut set = self.keys.write().unwrap_or_else(|p| p.into_inner());
        *set = KeySet {
            signing,
            verifying,
            jwks,
        };
        self.verified
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        Ok(())
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

    /// The public keys as a JWK set document.
    pub fn jwks(&self) -> serde_json::Value {
        let set = self.keys.read().unwrap_or_else(|p| p.into_inner());
        serde_json::json!({ "keys": set.jwks })
    }

    pub fn issue(&self, principal: &Principal, ttl: Duration) -> Result<String, TokenError> {
        let now = unix_now();
        let (sub, tid, roles) = match principal {
            Principal::PlatformAdmin { subject } => {
                (subject.clone(), None, vec![PLATFORM_ADMIN.to_string()])
            }
            Principal::Tenant {
                subject,
                tenant,
                role,
            } => (
                subject.clone(),
                Some(tenant.to_string()),
                vec![role.as_str().to_string()],
            ),
        };
        let claims = Claims {
            iss: self.issuer.clone(),
            aud: self.audience.clone(),
            sub,
            iat: now,
            nbf: now,
            exp: now + ttl.as_secs(),
            tid,
            roles,
        };
        let set = self.keys.read().unwrap_or_else(|p| p.into_inner());
        let (kid, key) = set
            .signing
            .as_ref()
            .ok_or_else(|| TokenError::Invalid("no signing key loaded".into()))?;
        let mut header = Header::new(ALGORITHM);
        header.kid = Some(kid.clone());
        jsonwebtoken::encode(&header, &claims, key).map_err(|e| TokenError::Invalid(e.to_string()))
    }

    /// Verifies signature, algorithm, issuer, audience and lifetime, and maps the claims to
    /// a principal.
    pub fn verify(&self, token: &str) -> Result<Principal, TokenError> {
        let now = unix_now();
        if let Some((principal, exp)) = self
            .verified
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(token)
            && now < *exp
        {
            return Ok(principal.clone());
        }
        let (principal, exp) = self.verify_signature(token)?;
        let mut cache = self.verified.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= VERIFIED_CACHE_CAPACITY {
            cache.retain(|_, (_, exp)| now < *exp);
            if cache.len() >= VERIFIED_CACHE_CAPACITY {
                cache.clear();
            }
        }
        cache.insert(token.to_string(), (principal.clone(), exp));
        Ok(principal)
    }

    fn verify_signature(&self, token: &str) -> Result<(Principal, u64), TokenError> {
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
        let claims = {
            let set = self.keys.read().unwrap_or_else(|p| p.into_inner());
            let key = set.verifying.get(&kid).ok_or(TokenError::UnknownKey)?;
            jsonwebtoken::decode::<Claims>(token, key, &self.validation)
                .map_err(|e| TokenError::Invalid(e.to_string()))?
                .claims
        };
        let exp = claims.exp;
        Ok((principal_from(claims)?, exp))
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

fn principal_from(claims: Claims) -> Result<Principal, TokenError> {
    if claims.sub.is_empty() {
        return Err(TokenError::Invalid("empty subject".into()));
    }
    match claims.tid {
        None if claims.roles.iter().any(|r| r == PLATFORM_ADMIN) => Ok(Principal::PlatformAdmin {
            subject: claims.sub,
        }),
        None => Err(TokenError::Invalid(
            "the token names neither a tenant nor the platform".into(),
        )),
        Some(tid) => {
            let tenant = TenantName::parse(&tid)
                .map_err(|e| TokenError::Invalid(format!("tenant claim {e}")))?;
            // A principal holding several roles gets the strongest one.
            let role = claims
                .roles
                .iter()
                .filter_map(|r| Role::parse(r))
                .max()
                .ok_or_else(|| TokenError::Invalid("the token carries no known role".into()))?;
            Ok(Principal::Tenant {
                subject: claims.sub,
                tenant,
                role,
            })
        }
    }
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        Principal::Tenant {
            subject: "alice".into(),
            tenant: TenantName::parse("contoso").unwrap(),
            role,
        }
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
            .lock()
            .unwrap()
            .insert("t".into(), (principal, unix_now()));
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
}
