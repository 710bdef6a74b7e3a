//! Rotating the token signing key through the API, and API processes picking up a rotation
//! made elsewhere.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::Value;
use shoal_api::identity::{Principal, Role};
use shoal_api::tokens::TokenService;
use shoal_api::tokens::rotation::DEFAULT_GRACE;
use shoal_store::crypto::Cipher;
use shoal_store::pool::{PoolConfig, connect_lazy};

use crate::helpers::{Fetch, Options, TestApp, error_paths, problem};
use crate::identity_helpers::eventually;

async fn published_kids(app: &TestApp) -> Vec<String> {
    let jwks: Value = app
        .client
        .get(format!("{}/.well-known/jwks.json", app.base))
        .fetch_json()
        .await;
    jwks["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kid"].as_str().unwrap().to_string())
        .collect()
}

fn kid_of(token: &str) -> String {
    jsonwebtoken::decode_header(token).unwrap().kid.unwrap()
}

#[tokio::test]
async fn platform_admins_rotate_the_key_and_old_tokens_keep_working_during_the_grace() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let old_kid = kid_of(&app.admin_token);
    let owner = app.token_for("contoso", Role::Owner);
    let denied = app
        .request(Method::POST, "/v1/signingKeys/rotate", Some(&owner))
        .fetch()
        .await;
    assert_eq!(denied.status(), StatusCode::FORBIDDEN);

    let before = chrono::Utc::now();
    let rotated = app
        .admin(Method::POST, "/v1/signingKeys/rotate")
        .fetch()
        .await;
    assert_eq!(rotated.status(), StatusCode::OK);
    let body: Value = rotated.json().await.unwrap();
    let new_kid = body["kid"].as_str().unwrap().to_string();
    assert_ne!(new_kid, old_kid);
    let retiring = body["retiringKeys"].as_array().unwrap();
    assert_eq!(retiring.len(), 1);
    assert_eq!(retiring[0]["kid"], old_kid);
    let until: chrono::DateTime<chrono::Utc> = retiring[0]["verifyUntil"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let grace = chrono::Duration::from_std(DEFAULT_GRACE).unwrap();
    assert!(
        until >= before + grace - chrono::Duration::seconds(5)
            && until <= chrono::Utc::now() + grace
    );

    assert_eq!(
        published_kids(&app).await,
        vec![new_kid.clone(), old_kid.clone()]
    );
    assert_eq!(
        app.get("/v1/tenants/contoso").await.status(),
        StatusCode::OK,
        "old tokens still verify"
    );
    // Tokens the server issues now are signed with the new key.
    let (sp, secret) = app.service_principal("contoso", "deployer").await;
    let client_id = sp.client_id.to_string();
    let issued: Value = crate::oauth2::token_request(
        &app,
        &[
            ("grant_type", "client_credentials"),
            ("client_id", &client_id),
            ("client_secret", &secret),
            ("scope", "api://shoal/.default"),
        ],
    )
    .fetch_json()
    .await;
    assert_eq!(kid_of(issued["access_token"].as_str().unwrap()), new_kid);

    let pool = connect_lazy(&app.database_url, &PoolConfig::default()).unwrap();
    let mut tx = shoal_store::begin_platform(&pool).await.unwrap();
    let entries = shoal_store::audit::list(&mut tx, None, 100).await.unwrap();
    shoal_store::commit(tx).await.unwrap();
    let rotations: Vec<_> = entries
        .iter()
        .filter(|e| e.action == "Shoal/signingKeys/rotate/action")
        .map(|e| (e.principal.as_str(), e.outcome.as_str()))
        .collect();
    assert!(rotations.contains(&("admin", "succeeded")), "{rotations:?}");
    assert!(
        rotations.contains(&("contoso-owner", "denied")),
        "{rotations:?}"
    );
}

#[tokio::test]
async fn an_emergency_rotation_without_grace_cuts_old_tokens_off_at_once() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let rotated = app
        .admin(Method::POST, "/v1/signingKeys/rotate?graceSeconds=0")
        .fetch()
        .await;
    assert_eq!(rotated.status(), StatusCode::OK);
    let new_kid = rotated.json::<Value>().await.unwrap()["kid"]
        .as_str()
        .unwrap()
        .to_string();

    assert_eq!(
        app.get("/v1/tenants/contoso").await.status(),
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(published_kids(&app).await, vec![new_kid.clone()]);
    let pool = connect_lazy(&app.database_url, &PoolConfig::default()).unwrap();
    app.tokens
        .refresh(&pool, &Cipher::new(&app.secret_key))
        .await
        .unwrap();
    let admin = app
        .tokens
        .issue(
            &Principal::PlatformAdmin {
                subject: "admin".into(),
            },
            Duration::from_secs(60),
        )
        .unwrap();
    assert_eq!(kid_of(&admin), new_kid);
    let read = app
        .request(Method::GET, "/v1/tenants/contoso", Some(&admin))
        .fetch()
        .await;
    assert_eq!(read.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_bad_grace_is_a_422_naming_it() {
    let app = TestApp::spawn().await;
    for bad in ["soon", "-1", "604801"] {
        let response = app
            .admin(
                Method::POST,
                &format!("/v1/signingKeys/rotate?graceSeconds={bad}"),
            )
            .fetch()
            .await;
        assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY, "{bad}");
        assert_eq!(error_paths(&problem(response).await), vec!["graceSeconds"]);
    }
}

#[tokio::test]
async fn a_rotation_by_another_process_is_picked_up_by_the_periodic_reload() {
    let mut options = Options::default();
    options.tokens.key_reload_interval = Duration::from_millis(200);
    let app = TestApp::spawn_with(options).await;
    let old_kid = kid_of(&app.admin_token);

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
    let rotation = elsewhere
        .rotate(
            &pool,
            &Cipher::new(&app.secret_key),
            Duration::from_secs(3600),
            &audit,
        )
        .await
        .unwrap();

    // No token names the new key: only the periodic reload can tell the server.
    let expected = vec![rotation.kid.clone(), old_kid];
    eventually(
        "the server publishes the new key",
        Duration::from_secs(10),
        async || published_kids(&app).await == expected,
    )
    .await;
}
