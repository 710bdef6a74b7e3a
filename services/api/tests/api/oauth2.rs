//! Shoal as an OAuth 2.0 / OpenID issuer: discovery and the client credentials grant for
//! service principals, with RFC 6749 errors and throttled failures.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use reqwest::StatusCode;
use serde_json::Value;
use shoal_api::identity::Principal;
use shoal_domain::names::TenantName;
use shoal_domain::rbac::Scope;

use crate::helpers::{Fetch, Options, TestApp};

/// `POST /oauth2/token` with a form body.
pub fn token_request(app: &TestApp, form: &[(&str, &str)]) -> reqwest::RequestBuilder {
    let body: String = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    app.client
        .post(format!("{}/oauth2/token", app.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
}

const SCOPE: (&str, &str) = ("scope", "api://shoal/.default");
const GRANT: (&str, &str) = ("grant_type", "client_credentials");

#[tokio::test]
async fn discovery_names_the_issuer_keys_and_token_endpoint() {
    let mut options = Options::default();
    options.tokens.public_url = Some(url::Url::parse("https://shoal.example.com/").unwrap());
    let app = TestApp::spawn_with(options).await;

    let doc: Value = app
        .client
        .get(format!("{}/.well-known/openid-configuration", app.base))
        .fetch_json()
        .await;

    assert_eq!(doc["issuer"], "urn:shoal");
    assert_eq!(
        doc["jwks_uri"],
        "https://shoal.example.com/.well-known/jwks.json"
    );
    assert_eq!(
        doc["token_endpoint"],
        "https://shoal.example.com/oauth2/token"
    );
    assert_eq!(
        doc["grant_types_supported"],
        serde_json::json!(["client_credentials"])
    );
    assert_eq!(
        doc["token_endpoint_auth_methods_supported"],
        serde_json::json!(["client_secret_post", "client_secret_basic"])
    );
    assert_eq!(
        doc["id_token_signing_alg_values_supported"],
        serde_json::json!(["ES256"])
    );
    for field in ["response_types_supported", "subject_types_supported"] {
        assert!(
            doc[field].as_array().is_some_and(|a| !a.is_empty()),
            "{field}"
        );
    }
    // The keys it names verify tokens: each carries the key id tokens name.
    let jwks: Value = app
        .client
        .get(format!("{}/.well-known/jwks.json", app.base))
        .fetch_json()
        .await;
    let kid = jsonwebtoken::decode_header(&app.admin_token)
        .unwrap()
        .kid
        .unwrap();
    assert!(
        jwks["keys"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["kid"] == kid)
    );
}

#[tokio::test]
async fn discovery_defaults_to_the_listen_address() {
    let app = TestApp::spawn().await;
    let doc: Value = app
        .client
        .get(format!("{}/.well-known/openid-configuration", app.base))
        .fetch_json()
        .await;
    assert_eq!(doc["token_endpoint"], format!("{}/oauth2/token", app.base));
}

#[tokio::test]
async fn client_credentials_in_the_form_or_basic_get_a_token_for_the_service_principal() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let (sp, secret) = app.service_principal("contoso", "deployer").await;
    app.assign(
        "contoso",
        sp.id,
        "Reader",
        &Scope::tenant(&TenantName::parse("contoso").unwrap()),
    )
    .await;
    let client_id = sp.client_id.to_string();

    let posted = token_request(
        &app,
        &[
            GRANT,
            ("client_id", &client_id),
            ("client_secret", &secret),
            SCOPE,
        ],
    )
    .fetch()
    .await;
    assert_eq!(posted.status(), StatusCode::OK);
    assert_eq!(posted.headers()["cache-control"], "no-store");
    let body: Value = posted.json().await.unwrap();
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 3600);
    assert_eq!(body["ext_expires_in"], 3600);
    let token = body["access_token"].as_str().unwrap();
    assert_eq!(
        app.tokens.verify(token).unwrap(),
        Principal::Registered {
            id: sp.id,
            tenant: TenantName::parse("contoso").unwrap()
        }
    );
    // The token works at the API with the principal's role assignments.
    let read = app
        .request(reqwest::Method::GET, "/v1/tenants/contoso", Some(token))
        .fetch()
        .await;
    assert_eq!(read.status(), StatusCode::OK);

    let basic = token_request(&app, &[GRANT, ("resource", "api://shoal")])
        .basic_auth(&client_id, Some(&secret))
        .fetch()
        .await;
    assert_eq!(basic.status(), StatusCode::OK);
    let token: Value = basic.json().await.unwrap();
    assert!(
        app.tokens
            .verify(token["access_token"].as_str().unwrap())
            .is_ok()
    );
}

#[tokio::test]
async fn token_lifetime_is_configurable() {
    let mut options = Options::default();
    options.tokens.lifetime = std::time::Duration::from_secs(300);
    let app = TestApp::spawn_with(options).await;
    app.put_tenant("contoso").await;
    let (sp, secret) = app.service_principal("contoso", "deployer").await;
    let client_id = sp.client_id.to_string();
    let body: Value = token_request(
        &app,
        &[
            GRANT,
            ("client_id", &client_id),
            ("client_secret", &secret),
            SCOPE,
        ],
    )
    .fetch_json()
    .await;
    assert_eq!(body["expires_in"], 300);
    let claims =
        jsonwebtoken::dangerous::insecure_decode::<Value>(body["access_token"].as_str().unwrap())
            .unwrap()
            .claims;
    assert_eq!(
        claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap(),
        300
    );
}

#[tokio::test]
async fn bad_requests_get_rfc_6749_errors_that_never_repeat_the_secret() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let (sp, secret) = app.service_principal("contoso", "deployer").await;
    let client_id = sp.client_id.to_string();
    let wrong = format!("{secret}x");
    type Case<'a> = (Vec<(&'a str, &'a str)>, StatusCode, &'a str);
    let cases: Vec<Case> = vec![
        (
            vec![
                GRANT,
                ("client_id", &client_id),
                ("client_secret", &wrong),
                SCOPE,
            ],
            StatusCode::UNAUTHORIZED,
            "invalid_client",
        ),
        (
            vec![
                GRANT,
                ("client_id", "00000000-0000-4000-8000-000000000000"),
                ("client_secret", &secret),
                SCOPE,
            ],
            StatusCode::UNAUTHORIZED,
            "invalid_client",
        ),
        (
            vec![
                ("grant_type", "authorization_code"),
                ("client_id", &client_id),
                ("client_secret", &secret),
                SCOPE,
            ],
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
        ),
        (
            vec![
                GRANT,
                ("client_id", &client_id),
                ("client_secret", &secret),
                ("scope", "https://graph.microsoft.com/.default"),
            ],
            StatusCode::BAD_REQUEST,
            "invalid_scope",
        ),
        (
            vec![GRANT, ("client_id", &client_id), ("client_secret", &secret)],
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            vec![GRANT, ("client_secret", &secret), SCOPE],
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
    ];
    for (form, status, error) in cases {
        let response = token_request(&app, &form).fetch().await;
        assert_eq!(response.status(), status, "{form:?}");
        assert_eq!(response.headers()["content-type"], "application/json");
        assert!(response.headers().get("www-authenticate").is_none());
        let body = response.text().await.unwrap();
        assert!(
            !body.contains(&secret),
            "the secret is never repeated: {body}"
        );
        let body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body["error"], error, "{form:?}");
        assert!(body["error_description"].is_string());
    }
    // A failed Basic authentication is a 401 with the challenge.
    let basic = token_request(&app, &[GRANT, SCOPE])
        .header(
            "authorization",
            format!("Basic {}", STANDARD.encode(format!("{client_id}:{wrong}"))),
        )
        .fetch()
        .await;
    assert_eq!(basic.status(), StatusCode::UNAUTHORIZED);
    assert!(
        basic.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .starts_with("Basic")
    );
    // Not a form.
    let json = app
        .client
        .post(format!("{}/oauth2/token", app.base))
        .json(&serde_json::json!({"grant_type": "client_credentials"}))
        .fetch()
        .await;
    assert_eq!(json.status(), StatusCode::BAD_REQUEST);
    assert_eq!(
        json.json::<Value>().await.unwrap()["error"],
        "invalid_request"
    );
}

#[tokio::test]
async fn failed_authentications_are_throttled_per_client_id() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let (sp, secret) = app.service_principal("contoso", "deployer").await;
    let (other, other_secret) = app.service_principal("contoso", "other").await;
    let client_id = sp.client_id.to_string();
    let guess = |n: usize| format!("guess-{n}");

    for n in 0..10 {
        let guess = guess(n);
        let response = token_request(
            &app,
            &[
                GRANT,
                ("client_id", &client_id),
                ("client_secret", &guess),
                SCOPE,
            ],
        )
        .fetch()
        .await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "guess {n}");
    }
    let throttled = token_request(
        &app,
        &[
            GRANT,
            ("client_id", &client_id),
            ("client_secret", &guess(10)),
            SCOPE,
        ],
    )
    .fetch()
    .await;
    assert_eq!(throttled.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = throttled.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=6).contains(&retry_after), "{retry_after}");
    // While throttled even the right secret is refused: guessing cannot go on.
    let right = token_request(
        &app,
        &[
            GRANT,
            ("client_id", &client_id),
            ("client_secret", &secret),
            SCOPE,
        ],
    )
    .fetch()
    .await;
    assert_eq!(right.status(), StatusCode::TOO_MANY_REQUESTS);
    // Other clients are not affected.
    let other_id = other.client_id.to_string();
    let fine = token_request(
        &app,
        &[
            GRANT,
            ("client_id", &other_id),
            ("client_secret", &other_secret),
            SCOPE,
        ],
    )
    .fetch()
    .await;
    assert_eq!(fine.status(), StatusCode::OK);
}
