//! One trusted issuer's signing keys and the verification of its tokens.
//!
//! The JWK set is fetched on first use (from the configured `jwks` URL, else the `jwks_uri`
//! of the issuer's discovery document), again in the background once it is older than
//! `max_key_age`, and again when a token names a key it lacks, which is how a rotation is
//! picked up. All fetches together happen at most once per `unknown_key_refetch`, so tokens
//! with made-up key ids cannot turn into a stream of requests to the identity provider. A
//! failed fetch keeps the keys already held.
//!
//! Each key verifies only the algorithms its own JWK allows (`jwk`): a token cannot pick HMAC
//! with the public key as the secret, `none`, or an algorithm of another key type.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use anyhow::Context;
use jsonwebtoken::Validation;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use url::Url;

use super::jwk::{ACCEPTED, VerifyingKey, usable_key};
use super::{ExternalIssuer, ExternalIssuersConfig, trusted_url};

/// Clock skew tolerated on `exp` and `nbf`, in seconds.
const LEEWAY: u64 = 30;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Discovery documents and JWK sets are a few kilobytes.
const MAX_DOCUMENT_BYTES: usize = 512 * 1024;

pub(super) fn http_client() -> anyhow::Result<reqwest::Client> {
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(REQUEST_TIMEOUT)
        // Keys come from the configured origin only.
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("shoal/", env!("CARGO_PKG_VERSION")))
        .build()
        .context("cannot build the HTTP client for external issuers")
}

/// A token that verified: who it is and until when it holds (unix seconds).
pub(super) struct Verified {
    pub subject: String,
    pub expires: u64,
    /// The generation of the key set that verified it.
    pub generation: u64,
}

#[derive(Default)]
struct KeySet {
    by_kid: HashMap<String, Arc<VerifyingKey>>,
    /// The JWKs as published, to tell whether a fetch changed anything.
    published: BTreeMap<String, String>,
    fetched_at: Option<Instant>,
}

pub(super) struct TrustedIssuer {
    config: ExternalIssuer,
    http: reqwest::Client,
    keys: RwLock<KeySet>,
    /// Bumped whenever the key set changes: verifications remembered from before are void.
    generation: AtomicU64,
    last_attempt: Mutex<Option<Instant>>,
    /// Held while fetching, so a token waiting for a key waits for a fetch in progress.
    fetching: tokio::sync::Mutex<()>,
    unknown_key_refetch: Duration,
    max_key_age: Duration,
}

#[derive(Deserialize)]
struct Claims {
    exp: u64,
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    oid: Option<String>,
}

impl TrustedIssuer {
    pub fn new(
        config: ExternalIssuer,
        http: reqwest::Client,
        settings: &ExternalIssuersConfig,
    ) -> TrustedIssuer {
        TrustedIssuer {
            config,
            http,
            keys: RwLock::new(KeySet::default()),
            generation: AtomicU64::new(0),
            last_attempt: Mutex::new(None),
            fetching: tokio::sync::Mutex::new(()),
            unknown_key_refetch: settings.unknown_key_refetch,
            max_key_age: settings.max_key_age,
        }
    }

    pub fn issuer(&self) -> &str {
        &self.config.issuer
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Checks the signature with the key the token names, then issuer, audience, expiry and
    /// not-before; answers the user's subject. Errors are the reason, fit for the caller.
    pub async fn verify(self: &Arc<Self>, token: &str) -> Result<Verified, String> {
        let header =
            jsonwebtoken::decode_header(token).map_err(|e| format!("invalid token: {e}"))?;
        if !ACCEPTED.contains(&header.alg) {
            return Err(format!("algorithm {:?} is not accepted", header.alg));
        }
        let kid = header
            .kid
            .filter(|k| !k.is_empty())
            .ok_or("the token has no key id (kid)")?;
        let (key, generation) = self.key(&kid).await?;
        if !key.algorithms.contains(&header.alg) {
            return Err(format!(
                "algorithm {:?} does not match the issuer's key {kid}",
                header.alg
            ));
        }
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_audience(&[&self.config.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = LEEWAY;
        let claims = jsonwebtoken::decode::<Claims>(token, &key.key, &validation)
            .map_err(|e| format!("invalid token: {e}"))?
            .claims;
        let subject = self
            .config
            .subject_claim
            .pick(claims.oid.as_deref(), claims.sub.as_deref())
            .ok_or_else(|| {
                format!(
                    "the token has no {} claim",
                    self.config.subject_claim.name()
                )
            })?;
        Ok(Verified {
            subject: subject.to_string(),
            expires: claims.exp,
            generation,
        })
    }

    /// The key named `kid` and the generation of the set it is in.
    async fn key(self: &Arc<Self>, kid: &str) -> Result<(Arc<VerifyingKey>, u64), String> {
        let (found, fetched_at, generation) = self.lookup(kid);
        if let Some(key) = found {
            if fetched_at.is_some_and(|at| at.elapsed() >= self.max_key_age) {
                self.refresh_in_background();
            }
            return Ok((key, generation));
        }
        self.refresh_now().await;
        match self.lookup(kid) {
            (Some(key), _, generation) => Ok((key, generation)),
            (None, None, _) => Err(format!(
                "the signing keys of {} could not be fetched; try again later",
                self.config.issuer
            )),
            (None, Some(_), _) => Err(format!(
                "the token's key id is not among the keys {} publishes",
                self.config.issuer
            )),
        }
    }

    /// Starts a background refetch when the keys are past their age (for tokens answered
    /// from the cache of verified tokens, which otherwise never look at the keys).
    pub fn refresh_if_old(self: &Arc<Self>) {
        let fetched_at = self
            .keys
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .fetched_at;
        if fetched_at.is_some_and(|at| at.elapsed() >= self.max_key_age) {
            self.refresh_in_background();
        }
    }

    fn lookup(&self, kid: &str) -> (Option<Arc<VerifyingKey>>, Option<Instant>, u64) {
        let set = self.keys.read().unwrap_or_else(|p| p.into_inner());
        // Bumped only under the write lock, so it belongs to this set.
        let generation = self.generation();
        (set.by_kid.get(kid).cloned(), set.fetched_at, generation)
    }

    /// Whether a fetch may start now (and if so, counts it as started).
    fn claim_attempt(&self) -> bool {
        let mut last = self.last_attempt.lock().unwrap_or_else(|p| p.into_inner());
        if last.is_some_and(|at| at.elapsed() < self.unknown_key_refetch) {
            return false;
        }
        *last = Some(Instant::now());
        true
    }

    /// For a token naming a key not held: fetch unless one happened lately, waiting for a
    /// fetch in progress (whose keys may be the ones wanted).
    async fn refresh_now(&self) {
        let _fetching = self.fetching.lock().await;
        if self.claim_attempt() {
            self.fetch_and_install().await;
        }
    }

    /// For keys past their age: the request goes on with them meanwhile.
    fn refresh_in_background(self: &Arc<Self>) {
        if !self.claim_attempt() {
            return;
        }
        let this = self.clone();
        tokio::spawn(async move {
            let _fetching = this.fetching.lock().await;
            this.fetch_and_install().await;
        });
    }

    async fn fetch_and_install(&self) {
        match self.fetch().await {
            Ok(keys) => self.install(keys),
            Err(err) => tracing::warn!(
                issuer = %self.config.issuer,
                error = %format!("{err:#}"),
                "could not fetch an external issuer's signing keys; keeping the ones held"
            ),
        }
    }

    fn install(&self, keys: Vec<(String, VerifyingKey, String)>) {
        let mut set = self.keys.write().unwrap_or_else(|p| p.into_inner());
        let published: BTreeMap<String, String> = keys
            .iter()
            .map(|(kid, _, jwk)| (kid.clone(), jwk.clone()))
            .collect();
        if published != set.published {
            tracing::info!(
                issuer = %self.config.issuer,
                kids = ?published.keys().collect::<Vec<_>>(),
                "external issuer's signing keys loaded"
            );
            set.by_kid = keys
                .into_iter()
                .map(|(kid, key, _)| (kid, Arc::new(key)))
                .collect();
            set.published = published;
            self.generation.fetch_add(1, Ordering::AcqRel);
        }
        set.fetched_at = Some(Instant::now());
    }

    async fn fetch(&self) -> anyhow::Result<Vec<(String, VerifyingKey, String)>> {
        let jwks_uri = match &self.config.jwks_uri {
            Some(uri) => uri.clone(),
            None => self.discover().await?,
        };
        #[derive(Deserialize)]
        struct JwkSet {
            keys: Vec<serde_json::Value>,
        }
        let set: JwkSet = get_json(&self.http, &jwks_uri).await?;
        let keys: Vec<_> = set.keys.into_iter().filter_map(usable_key).collect();
        if keys.is_empty() {
            anyhow::bail!("{jwks_uri} publishes no signing key Shoal can use");
        }
        Ok(keys)
    }

    /// The `jwks_uri` of the issuer's OpenID discovery document, which must name the issuer
    /// itself (OpenID Connect Discovery §4.3).
    async fn discover(&self) -> anyhow::Result<Url> {
        #[derive(Deserialize)]
        struct Discovery {
            issuer: String,
            jwks_uri: String,
        }
        let url = Url::parse(&format!(
            "{}/.well-known/openid-configuration",
            self.config.issuer.trim_end_matches('/')
        ))?;
        let document: Discovery = get_json(&self.http, &url).await?;
        if document.issuer != self.config.issuer {
            anyhow::bail!("{url} is the discovery document of {}", document.issuer);
        }
        trusted_url(&document.jwks_uri).map_err(|e| anyhow::anyhow!("{url}: jwks_uri {e}"))
    }
}

async fn get_json<T: DeserializeOwned>(http: &reqwest::Client, url: &Url) -> anyhow::Result<T> {
    let response = http
        .get(url.clone())
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await?
        .error_for_status()?;
    let body = match shoal_egress::read_capped(response, MAX_DOCUMENT_BYTES).await {
        Ok(body) => body,
        Err(shoal_egress::ReadError::TooLarge) => {
            anyhow::bail!("{url} answered more than {MAX_DOCUMENT_BYTES} bytes")
        }
        Err(shoal_egress::ReadError::Failed(e)) => return Err(e.into()),
    };
    serde_json::from_slice(&body).with_context(|| format!("{url} did not answer the expected JSON"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::Algorithm::ES256;

    #[tokio::test]
    async fn es256_tokens_verify_with_a_p256_key_and_only_as_es256() {
        use aws_lc_rs::rand::SystemRandom;
        use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
        use jsonwebtoken::{EncodingKey, Header, jwk::Jwk};

        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
                .unwrap();
        let signing = EncodingKey::from_ec_der(pkcs8.as_ref());
        let mut jwk =
            serde_json::to_value(Jwk::from_encoding_key(&signing, ES256).unwrap()).unwrap();
        jwk["kid"] = "ec1".into();
        let config: ExternalIssuer = "issuer=https://idp.example.com,audience=shoal"
            .parse()
            .unwrap();
        let issuer = Arc::new(TrustedIssuer::new(
            config,
            http_client().unwrap(),
            &ExternalIssuersConfig::default(),
        ));
        issuer.install(vec![usable_key(jwk).unwrap()]);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let claims = serde_json::json!({
            "iss": "https://idp.example.com", "aud": "shoal", "sub": "alice", "exp": now + 60
        });
        let mut header = Header::new(ES256);
        header.kid = Some("ec1".into());
        let token = jsonwebtoken::encode(&header, &claims, &signing).unwrap();

        let verified = issuer.verify(&token).await.unwrap();
        assert_eq!(verified.subject, "alice");
        assert_eq!(verified.expires, now + 60);

        // The same key under another accepted algorithm is refused before any verification.
        let mut parts: Vec<&str> = token.split('.').collect();
        let header = base64::Engine::encode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            r#"{"alg":"ES384","kid":"ec1"}"#,
        );
        parts[0] = &header;
        let err = issuer.verify(&parts.join(".")).await.err().unwrap();
        assert!(err.contains("does not match the issuer's key"), "{err}");
    }
}
