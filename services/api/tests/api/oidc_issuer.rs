//! A real OIDC issuer on 127.0.0.1 for tests of users who sign in with it: OpenID discovery and
//! a JWK set of RSA 2048 keys generated here (like Entra ID's), and Shoal configured to trust it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::rsa::KeySize;
use aws_lc_rs::signature::{KeyPair, RSA_PKCS1_SHA256, RsaKeyPair};
use axum::Router;
use axum::extract::State;
use axum::routing::get;
use base64::Engine;
use serde_json::{Value, json};
use shoal_api::external_issuers::{ExternalIssuer, ExternalIssuersConfig, SubjectClaim};
use uuid::Uuid;

use crate::helpers::{Options, TestApp};
use crate::identity_helpers::unix_now;

pub const AUDIENCE: &str = "api://shoal-tests";

pub fn b64(bytes: impl AsRef<[u8]>) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// An RSA signing key of the test issuer.
pub struct RsaKey {
    pub kid: String,
    pub pair: RsaKeyPair,
}

impl RsaKey {
    pub fn generate() -> RsaKey {
        RsaKey {
            kid: Uuid::new_v4().simple().to_string(),
            pair: RsaKeyPair::generate(KeySize::Rsa2048).unwrap(),
        }
    }

    /// Published as Entra ID does: no `alg`.
    pub fn jwk(&self) -> Value {
        let public = self.pair.public_key();
        json!({
            "kty": "RSA",
            "use": "sig",
            "kid": self.kid,
            "n": b64(public.modulus().big_endian_without_leading_zero()),
            "e": b64(public.exponent().big_endian_without_leading_zero()),
        })
    }

    pub fn sign(&self, claims: &Value) -> String {
        self.sign_with_header(
            &json!({"alg": "RS256", "typ": "JWT", "kid": self.kid}),
            claims,
        )
    }

    pub fn sign_with_header(&self, header: &Value, claims: &Value) -> String {
        let input = format!("{}.{}", b64(header.to_string()), b64(claims.to_string()));
        let mut signature = vec![0; self.pair.public_modulus_len()];
        self.pair
            .sign(
                &RSA_PKCS1_SHA256,
                &SystemRandom::new(),
                input.as_bytes(),
                &mut signature,
            )
            .unwrap();
        format!("{input}.{}", b64(signature))
    }
}

#[derive(Default)]
struct Published {
    issuer: String,
    keys: Mutex<Vec<Value>>,
    discovery_requests: AtomicUsize,
    jwks_requests: AtomicUsize,
}

/// An OIDC issuer at `http://127.0.0.1:{port}/tenant-a/v2.0` (a path, as Entra ID's has).
pub struct TestIssuer {
    pub issuer: String,
    published: Arc<Published>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for TestIssuer {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn discovery(State(published): State<Arc<Published>>) -> axum::Json<Value> {
    published.discovery_requests.fetch_add(1, Ordering::SeqCst);
    axum::Json(json!({
        "issuer": published.issuer,
        "jwks_uri": format!("{}/discovery/v2.0/keys", published.issuer),
        "id_token_signing_alg_values_supported": ["RS256"],
    }))
}

async fn jwks(State(published): State<Arc<Published>>) -> axum::Json<Value> {
    published.jwks_requests.fetch_add(1, Ordering::SeqCst);
    axum::Json(json!({"keys": *published.keys.lock().unwrap()}))
}

impl TestIssuer {
    pub async fn start(keys: &[&RsaKey]) -> TestIssuer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let issuer = format!("http://127.0.0.1:{port}/tenant-a/v2.0");
        let published = Arc::new(Published {
            issuer: issuer.clone(),
            ..Published::default()
        });
        let router = Router::new()
            .route(
                "/tenant-a/v2.0/.well-known/openid-configuration",
                get(discovery),
            )
            .route("/tenant-a/v2.0/discovery/v2.0/keys", get(jwks))
            .with_state(published.clone());
        let server = tokio::spawn(async move {
            axum::serve(listener, router).await.unwrap();
        });
        let issuer = TestIssuer {
            issuer,
            published,
            server,
        };
        issuer.publish(keys);
        issuer
    }

    pub fn publish(&self, keys: &[&RsaKey]) {
        *self.published.keys.lock().unwrap() = keys.iter().map(|k| k.jwk()).collect();
    }

    pub fn jwks_requests(&self) -> usize {
        self.published.jwks_requests.load(Ordering::SeqCst)
    }

    pub fn discovery_requests(&self) -> usize {
        self.published.discovery_requests.load(Ordering::SeqCst)
    }

    /// Claims of a token for Shoal: Entra-like, with an `oid` and a per-application `sub`.
    pub fn claims(&self, oid: &str) -> Value {
        let now = unix_now();
        json!({
            "iss": self.issuer,
            "aud": AUDIENCE,
            "sub": format!("pairwise-{oid}"),
            "oid": oid,
            "iat": now,
            "nbf": now,
            "exp": now + 600,
        })
    }

    /// Shoal trusting this issuer; a key id it lacks refetches its keys at most every
    /// `unknown_key_refetch`, and keys are refetched after `max_key_age`.
    pub async fn trusted_by_shoal(
        &self,
        unknown_key_refetch: Duration,
        max_key_age: Duration,
    ) -> TestApp {
        TestApp::spawn_with(Options {
            external_issuers: ExternalIssuersConfig {
                issuers: vec![ExternalIssuer {
                    issuer: self.issuer.clone(),
                    audience: AUDIENCE.into(),
                    subject_claim: SubjectClaim::OidOrSub,
                    jwks_uri: None,
                }],
                unknown_key_refetch,
                max_key_age,
            },
            ..Options::default()
        })
        .await
    }
}

pub const DEFAULT_REFETCH: Duration = Duration::from_secs(30);
pub const DEFAULT_KEY_AGE: Duration = Duration::from_secs(3600);
