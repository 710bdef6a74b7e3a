//! Forged, altered and stale tokens are refused with 401 at the API. Every test first shows the
//! same request succeeding with a good token, so each refusal is the attack's doing.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_api::identity::Principal;
use shoal_api::tokens::TokenService;
use shoal_domain::names::TenantName;
use shoal_domain::rbac::Scope;
use shoal_store::crypto::Cipher;
use shoal_store::pool::{PoolConfig, connect_lazy};
use shoal_store::principals::{self, PrincipalKind};

use crate::helpers::{Fetch, TestApp};
use crate::identity_helpers::{eventually, operator_claims, unix_now};

async fn contoso() -> TestApp {
    let app = TestApp::spawn().await;
    assert_eq!(
        app.put_tenant("contoso").await.status(),
        StatusCode::CREATED
    );
    app
}

async fn read_tenant(app: &TestApp, token: &str) -> StatusCode {
    app.request(Method::GET, "/v1/tenants/contoso", Some(token))
        .fetch()
        .await
        .status()
}

/// The good token reads the tenant; the attack's token is refused with 401.
async fn refused(app: &TestApp, good: &str, attack: &str) {
    assert_eq!(
        read_tenant(app, good).await,
        StatusCode::OK,
        "the good token works"
    );
    assert_eq!(
        read_tenant(app, attack).await,
        StatusCode::UNAUTHORIZED,
        "the attack is refused"
    );
}

fn b64(value: &Value) -> String {
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(value).unwrap())
}

fn claims() -> Value {
    operator_claims("contoso", "Reader")
}

#[tokio::test]
async fn alg_none_is_refused() {
    let app = contoso().await;
    let good = app.forge(&claims()).await;
    let (kid, _) = app.signing_key().await;
    for alg in ["none", "None", "NONE"] {
        let header = json!({"alg": alg, "typ": "JWT", "kid": kid});
        let unsigned = format!("{}.{}.", b64(&header), b64(&claims()));
        refused(&app, &good, &unsigned).await;
    }
}

/// The classic confusion attack: HS256 with the public key as the HMAC secret, in every form a
/// verifier might hand its HMAC (the JWK as served, its PEM, the raw point).
#[tokio::test]
async fn hs256_signed_with_the_public_key_is_refused() {
    let app = contoso().await;
    let good = app.forge(&claims()).await;
    let jwks: Value = app
        .client
        .get(format!("{}/.well-known/jwks.json", app.base))
        .fetch_json()
        .await;
    let jwk = &jwks["keys"][0];
    let kid = jwk["kid"].as_str().unwrap();
    let coordinate = |name: &str| URL_SAFE_NO_PAD.decode(jwk[name].as_str().unwrap()).unwrap();
    let mut point = vec![4u8];
    point.extend(coordinate("x"));
    point.extend(coordinate("y"));
    let mut spki = hex("3059301306072a8648ce3d020106082a8648ce3d030107034200");
    spki.extend(&point);
    let encoded = STANDARD.encode(&spki);
    let lines: Vec<&str> = encoded
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    let pem = format!(
        "-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----\n",
        lines.join("\n")
    );

    for secret in [
        serde_json::to_vec(jwk).unwrap(),
        pem.into_bytes(),
        point,
        spki,
    ] {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some(kid.to_string());
        let forged =
            jsonwebtoken::encode(&header, &claims(), &EncodingKey::from_secret(&secret)).unwrap();
        refused(&app, &good, &forged).await;
    }
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

#[tokio::test]
async fn wrong_issuer_or_audience_is_refused() {
    let app = contoso().await;
    let good = app.forge(&claims()).await;
    for (claim, value) in [
        ("iss", "urn:evil"),
        ("iss", "https://login.microsoftonline.com/x/v2.0"),
        ("aud", "api://other"),
        ("aud", "https://management.azure.com"),
    ] {
        let mut bad = claims();
        bad[claim] = json!(value);
        refused(&app, &good, &app.forge(&bad).await).await;
    }
}

#[tokio::test]
async fn expired_token_is_refused() {
    let app = contoso().await;
    let good = app.forge(&claims()).await;
    let now = unix_now();
    let mut expired = claims();
    // Beyond the 30 s leeway.
    expired["iat"] = json!(now - 720);
    expired["nbf"] = json!(now - 720);
    expired["exp"] = json!(now - 120);
    refused(&app, &good, &app.forge(&expired).await).await;
}

#[tokio::test]
async fn not_yet_valid_token_is_refused() {
    let app = contoso().await;
    let good = app.forge(&claims()).await;
    let mut early = claims();
    early["nbf"] = json!(unix_now() + 600);
    early["exp"] = json!(unix_now() + 1200);
    refused(&app, &good, &app.forge(&early).await).await;
}

#[tokio::test]
async fn unknown_or_missing_kid_is_refused() {
    use aws_lc_rs::rand::SystemRandom;
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};

    let app = contoso().await;
    let good = app.forge(&claims()).await;
    // A key of the attacker's own, under a key id the server does not know.
    let pkcs8 =
        EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
            .unwrap();
    let own_key = EncodingKey::from_ec_der(pkcs8.as_ref());
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("attacker-key".into());
    let unknown = jsonwebtoken::encode(&header, &claims(), &own_key).unwrap();
    refused(&app, &good, &unknown).await;
    // The attacker's key under the server's key id.
    let (kid, server_key) = app.signing_key().await;
    header.kid = Some(kid);
    let impostor = jsonwebtoken::encode(&header, &claims(), &own_key).unwrap();
    refused(&app, &good, &impostor).await;
    // The server's key, but no key id at all.
    let no_kid =
        jsonwebtoken::encode(&Header::new(Algorithm::ES256), &claims(), &server_key).unwrap();
    refused(&app, &good, &no_kid).await;
}

#[tokio::test]
async fn tampered_payload_is_refused() {
    let app = contoso().await;
    let good = app.forge(&claims()).await;
    let parts: Vec<&str> = good.split('.').collect();
    let mut escalated = claims();
    escalated["roles"] = json!(["Owner"]);
    escalated["tid"] = json!("fabrikam");
    let tampered = format!("{}.{}.{}", parts[0], b64(&escalated), parts[2]);
    refused(&app, &good, &tampered).await;
    // A flipped bit in the signature, too.
    let mut signature = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
    signature[10] ^= 1;
    let flipped = format!(
        "{}.{}.{}",
        parts[0],
        parts[1],
        URL_SAFE_NO_PAD.encode(signature)
    );
    refused(&app, &good, &flipped).await;
}

#[tokio::test]
async fn a_deleted_identitys_token_is_refused() {
    let app = contoso().await;
    let tenant = TenantName::parse("contoso").unwrap();
    let identity = app.user_assigned_identity("contoso", "billing").await;
    app.assign("contoso", identity.id, "Reader", &Scope::tenant(&tenant))
        .await;
    let token = app
        .tokens
        .issue(
            &Principal::Registered {
                id: identity.id,
                tenant,
            },
            Duration::from_secs(600),
        )
        .unwrap();
    assert_eq!(
        read_tenant(&app, &token).await,
        StatusCode::OK,
        "the identity reads before deletion"
    );

    let deleted = app
        .in_tenant("contoso", async |tx, id| {
            principals::delete(tx, id, PrincipalKind::UserAssignedIdentity, "billing")
                .await
                .unwrap()
        })
        .await;
    assert!(deleted);

    // The API's cache of assignments hears of the deletion asynchronously.
    eventually(
        "the deleted identity's token is refused",
        Duration::from_secs(10),
        async || read_tenant(&app, &token).await == StatusCode::UNAUTHORIZED,
    )
    .await;
    assert_eq!(
        read_tenant(&app, &app.forge(&claims()).await).await,
        StatusCode::OK
    );
}

/// A rotation by another process (as `shoal keys rotate` does it): the old key keeps verifying
/// until its grace ends, then its tokens are refused — even tokens the server verified (and
/// cached) during the grace, and with no key reload in between.
#[tokio::test]
async fn a_rotated_out_key_verifies_during_its_grace_and_is_refused_after() {
    let app = contoso().await;
    let old = app.forge(&claims()).await;
    assert_eq!(read_tenant(&app, &old).await, StatusCode::OK);

    let pool = connect_lazy(&app.database_url, &PoolConfig::default()).unwrap();
    let elsewhere = TokenService::new(
        shoal_api::tokens::DEFAULT_ISSUER,
        shoal_api::tokens::DEFAULT_AUDIENCE,
    );
    let audit = shoal_store::audit::AuditEntry {
        principal: "test",
        action: shoal_domain::rbac::actions::SIGNING_KEYS_ROTATE,
        resource: "/v1/signingKeys",
        outcome: "succeeded",
        request_id: None,
    };
    let grace = Duration::from_secs(4);
    let rotation = elsewhere
        .rotate(&pool, &Cipher::new(&app.secret_key), grace, &audit)
        .await
        .unwrap();
    pool.close().await;
    let deadline = rotation.last_deadline().unwrap();
    let new = app.forge(&claims()).await;
    assert_eq!(
        jsonwebtoken::decode_header(&new).unwrap().kid.unwrap(),
        rotation.kid
    );

    // The server learns of the new key from the first token naming it.
    assert_eq!(read_tenant(&app, &new).await, StatusCode::OK);
    let during = read_tenant(&app, &old).await;
    assert!(
        chrono::Utc::now() < deadline,
        "the checks above took longer than the grace"
    );
    assert_eq!(
        during,
        StatusCode::OK,
        "the old key verifies during its grace"
    );
    let jwks: Value = app
        .client
        .get(format!("{}/.well-known/jwks.json", app.base))
        .fetch_json()
        .await;
    assert_eq!(
        jwks["keys"].as_array().unwrap().len(),
        2,
        "both keys are published"
    );

    eventually(
        "the old key's tokens are refused",
        grace + Duration::from_secs(5),
        async || read_tenant(&app, &old).await == StatusCode::UNAUTHORIZED,
    )
    .await;
    assert!(
        chrono::Utc::now() >= deadline - chrono::Duration::seconds(1),
        "not before the deadline"
    );
    assert_eq!(read_tenant(&app, &new).await, StatusCode::OK);
    let jwks: Value = app
        .client
        .get(format!("{}/.well-known/jwks.json", app.base))
        .fetch_json()
        .await;
    let kids: Vec<&str> = jwks["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kid"].as_str().unwrap())
        .collect();
    assert_eq!(
        kids,
        vec![rotation.kid.as_str()],
        "the old key is no longer published"
    );
}
