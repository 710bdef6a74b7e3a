//! Users signing in at an external OIDC issuer (the test issuer of `oidc_issuer`), Shoal
//! configured to trust it, and users registered with its issuer and subject.

use std::time::Duration;

use aws_lc_rs::hmac;
use aws_lc_rs::rsa::KeySize;
use aws_lc_rs::signature::{KeyPair, RsaKeyPair};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_domain::names::TenantName;
use shoal_domain::rbac::Scope;
use shoal_store::principals::{self, NewPrincipal, PrincipalKind};
use uuid::Uuid;

use crate::helpers::{Fetch, TestApp, minimal_app, problem};
use crate::identity_helpers::{eventually, unix_now};
use crate::oidc_issuer::{DEFAULT_KEY_AGE, DEFAULT_REFETCH, RsaKey, TestIssuer, b64};

const TENANT: &str = "contoso";

/// Registers a user of `issuer` with `subject` and gives it Reader on the tenant.
async fn register_reader(app: &TestApp, issuer: &str, subject: &str) -> Uuid {
    let id = app
        .in_tenant(TENANT, async |tx, tenant| {
            let user = NewPrincipal {
                kind: PrincipalKind::User,
                name: "alice",
                app_name: None,
                issuer: Some(issuer),
                subject: Some(subject),
            };
            principals::ensure(tx, tenant, &user).await.unwrap().0.id
        })
        .await;
    let scope = Scope::tenant(&TenantName::parse(TENANT).unwrap());
    app.assign(TENANT, id, "Reader", &scope).await;
    id
}

async fn read_apps(app: &TestApp, token: &str) -> reqwest::Response {
    app.request(
        Method::GET,
        &format!("/v1/tenants/{TENANT}/apps"),
        Some(token),
    )
    .fetch()
    .await
}

/// A 401 problem whose detail contains `expected`.
async fn assert_refused(app: &TestApp, token: &str, expected: &str, case: &str) {
    let response = read_apps(app, token).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{case}");
    let detail = problem(response).await["detail"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        detail.contains(expected),
        "{case}: expected {expected:?} in {detail:?}"
    );
}

#[tokio::test]
async fn a_registered_users_token_reads_with_its_role_and_cannot_write() {
    let key = RsaKey::generate();
    let issuer = TestIssuer::start(&[&key]).await;
    let app = issuer
        .trusted_by_shoal(DEFAULT_REFETCH, DEFAULT_KEY_AGE)
        .await;
    app.with_app(TENANT, "orders").await;
    let oid = Uuid::new_v4().to_string();
    register_reader(&app, &issuer.issuer, &oid).await;
    // Registered by `oid` (the default), although the token's `sub` differs.
    let token = key.sign(&issuer.claims(&oid));

    let read = read_apps(&app, &token).await;
    assert_eq!(read.status(), StatusCode::OK);
    let body: Value = read.json().await.unwrap();
    assert!(body.to_string().contains("orders"), "{body}");

    let write = app
        .request(
            Method::PUT,
            &format!("/v1/tenants/{TENANT}/apps/billing"),
            Some(&token),
        )
        .json(&minimal_app())
        .fetch()
        .await;
    assert_eq!(write.status(), StatusCode::FORBIDDEN);

    // Served from the cache of verified tokens the second time, with the same answer.
    assert_eq!(read_apps(&app, &token).await.status(), StatusCode::OK);
    assert_eq!(issuer.jwks_requests(), 1);
    assert_eq!(issuer.discovery_requests(), 1);
}

#[tokio::test]
async fn tokens_not_minted_by_the_issuer_for_shoal_are_refused() {
    let key = RsaKey::generate();
    let issuer = TestIssuer::start(&[&key]).await;
    let app = issuer
        .trusted_by_shoal(DEFAULT_REFETCH, DEFAULT_KEY_AGE)
        .await;
    app.with_app(TENANT, "orders").await;
    let oid = Uuid::new_v4().to_string();
    register_reader(&app, &issuer.issuer, &oid).await;
    let good = issuer.claims(&oid);
    assert_eq!(
        read_apps(&app, &key.sign(&good)).await.status(),
        StatusCode::OK
    );
    let with = |field: &str, value: Value| {
        let mut claims = good.clone();
        claims[field] = value;
        claims
    };
    let without = |fields: &[&str]| {
        let mut claims = good.clone();
        for field in fields {
            claims.as_object_mut().unwrap().remove(*field);
        }
        claims
    };
    let now = unix_now();
    let header = |alg: &str| json!({"alg": alg, "typ": "JWT", "kid": key.kid});
    let payload = b64(good.to_string());

    let cases: Vec<(&str, String, &str)> = vec![
        (
            "wrong audience",
            key.sign(&with("aud", json!("api://elsewhere"))),
            "invalid token",
        ),
        (
            "expired beyond the leeway",
            key.sign(&with("exp", json!(now - 120))),
            "invalid token",
        ),
        (
            "not valid yet",
            key.sign(&with("nbf", json!(now + 600))),
            "invalid token",
        ),
        ("no expiry", key.sign(&without(&["exp"])), "invalid token"),
        (
            // Another issuer's token is not this issuer's business: Shoal's own verification
            // refuses it, as it refuses any token it did not sign.
            "issuer not configured",
            key.sign(&with("iss", json!("https://login.example.com/other/v2.0"))),
            "",
        ),
        (
            "signed by another key under the published kid",
            RsaKey {
                kid: key.kid.clone(),
                pair: RsaKeyPair::generate(KeySize::Rsa2048).unwrap(),
            }
            .sign(&good),
            "invalid token",
        ),
        (
            "alg none",
            format!("{}.{payload}.", b64(header("none").to_string())),
            "invalid token",
        ),
        (
            "HS256 keyed with the RSA public key's DER",
            hmac_token(&header("HS256"), &good, key.pair.public_key().as_ref()),
            "algorithm HS256 is not accepted",
        ),
        (
            "HS256 keyed with the published JWK",
            hmac_token(&header("HS256"), &good, key.jwk().to_string().as_bytes()),
            "algorithm HS256 is not accepted",
        ),
        (
            "RS384 is not what signed it",
            key.sign_with_header(&header("RS384"), &good),
            "invalid token",
        ),
        (
            "ES256 with an RSA key",
            key.sign_with_header(&header("ES256"), &good),
            "does not match the issuer's key",
        ),
        (
            "no kid",
            key.sign_with_header(&json!({"alg": "RS256", "typ": "JWT"}), &good),
            "no key id",
        ),
        (
            "subject not registered",
            key.sign(&issuer.claims(&Uuid::new_v4().to_string())),
            "not registered in any tenant",
        ),
        (
            "no subject at all",
            key.sign(&without(&["oid", "sub"])),
            "no oid or sub claim",
        ),
    ];
    for (case, token, expected) in cases {
        assert_refused(&app, &token, expected, case).await;
    }
    // None of them made Shoal refetch the keys.
    assert_eq!(issuer.jwks_requests(), 1);
}

fn hmac_token(header: &Value, claims: &Value, secret: &[u8]) -> String {
    let input = format!("{}.{}", b64(header.to_string()), b64(claims.to_string()));
    let tag = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, secret), input.as_bytes());
    format!("{input}.{}", b64(tag.as_ref()))
}

#[tokio::test]
async fn forged_key_ids_fetch_the_key_set_at_most_once_per_window() {
    let key = RsaKey::generate();
    let issuer = TestIssuer::start(&[&key]).await;
    let app = issuer
        .trusted_by_shoal(DEFAULT_REFETCH, DEFAULT_KEY_AGE)
        .await;
    app.with_app(TENANT, "orders").await;
    let oid = Uuid::new_v4().to_string();
    register_reader(&app, &issuer.issuer, &oid).await;
    assert_eq!(
        read_apps(&app, &key.sign(&issuer.claims(&oid)))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(issuer.jwks_requests(), 1);

    let forged: Vec<String> = (0..25)
        .map(|_| {
            let header = json!({"alg": "RS256", "kid": Uuid::new_v4().simple().to_string()});
            key.sign_with_header(&header, &issuer.claims(&oid))
        })
        .collect();
    let answers =
        futures::future::join_all(forged.iter().map(|token| read_apps(&app, token))).await;
    for answer in answers {
        assert_eq!(answer.status(), StatusCode::UNAUTHORIZED);
    }
    assert_eq!(
        issuer.jwks_requests(),
        1,
        "unknown key ids within the window fetch nothing"
    );
    assert_eq!(issuer.discovery_requests(), 1);
}

#[tokio::test]
async fn a_rotated_key_is_picked_up_without_restarting() {
    let old = RsaKey::generate();
    let issuer = TestIssuer::start(&[&old]).await;
    let refetch = Duration::from_millis(500);
    let app = issuer.trusted_by_shoal(refetch, DEFAULT_KEY_AGE).await;
    app.with_app(TENANT, "orders").await;
    let oid = Uuid::new_v4().to_string();
    register_reader(&app, &issuer.issuer, &oid).await;
    let old_token = old.sign(&issuer.claims(&oid));
    assert_eq!(read_apps(&app, &old_token).await.status(), StatusCode::OK);

    // The issuer rotates: only the new key is published, and it signs from now on.
    let new = RsaKey::generate();
    issuer.publish(&[&new]);
    let new_token = new.sign(&issuer.claims(&oid));
    eventually(
        "the new key verifies",
        Duration::from_secs(10),
        async || read_apps(&app, &new_token).await.status() == StatusCode::OK,
    )
    .await;
    let fetches = issuer.jwks_requests();
    assert!(fetches >= 2, "{fetches}");

    // The withdrawn key no longer verifies, though its token had been verified before.
    assert_refused(
        &app,
        &old_token,
        "not among the keys",
        "token of a withdrawn key",
    )
    .await;
}

#[tokio::test]
async fn a_withdrawn_key_stops_verifying_once_the_keys_age() {
    let old = RsaKey::generate();
    let new = RsaKey::generate();
    let issuer = TestIssuer::start(&[&old, &new]).await;
    let app = issuer
        .trusted_by_shoal(Duration::from_millis(200), Duration::from_millis(500))
        .await;
    app.with_app(TENANT, "orders").await;
    let oid = Uuid::new_v4().to_string();
    register_reader(&app, &issuer.issuer, &oid).await;
    let old_token = old.sign(&issuer.claims(&oid));
    let new_token = new.sign(&issuer.claims(&oid));
    assert_eq!(read_apps(&app, &old_token).await.status(), StatusCode::OK);

    // No unknown key id is ever presented: the periodic refetch notices the withdrawal.
    issuer.publish(&[&new]);
    eventually(
        "the withdrawn key is refused",
        Duration::from_secs(10),
        async || read_apps(&app, &old_token).await.status() == StatusCode::UNAUTHORIZED,
    )
    .await;
    assert_eq!(read_apps(&app, &new_token).await.status(), StatusCode::OK);
}

#[tokio::test]
async fn an_unreachable_issuer_refuses_its_tokens_and_leaves_shoal_tokens_alone() {
    let key = RsaKey::generate();
    let issuer = TestIssuer::start(&[&key]).await;
    let app = issuer
        .trusted_by_shoal(DEFAULT_REFETCH, DEFAULT_KEY_AGE)
        .await;
    app.with_app(TENANT, "orders").await;
    let oid = Uuid::new_v4().to_string();
    register_reader(&app, &issuer.issuer, &oid).await;
    let token = key.sign(&issuer.claims(&oid));
    let issuer_url = issuer.issuer.clone();
    drop(issuer);

    assert_refused(&app, &token, "could not be fetched", &issuer_url).await;
    // Shoal's own tokens do not depend on any external issuer.
    let own = app.token_for(TENANT, shoal_api::identity::Role::Reader);
    assert_eq!(read_apps(&app, &own).await.status(), StatusCode::OK);
}
