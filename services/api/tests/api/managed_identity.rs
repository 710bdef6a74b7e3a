//! Apps' managed identities through the App Service protocol, proven with the stock Azure SDK:
//! `azure_identity::ManagedIdentityCredential` with `IDENTITY_ENDPOINT`/`IDENTITY_HEADER` as
//! `identityEndpoint/list` returns them gets a Shoal token that verifies as the app's identity.
//!
//! The SDK reads those two variables from the process environment only, and setting the
//! environment is `unsafe` (and forbidden in this workspace), so the SDK runs in a child
//! process: this test binary itself, running the ignored `azure_sdk_child` test with the
//! variables set.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_api::identity::Principal;
use shoal_api::identity::Role;
use shoal_domain::names::TenantName;
use uuid::Uuid;

use crate::helpers::{Fetch, TestApp, minimal_app};
use crate::identity_helpers::{Identity, unix_now};

const TOKEN_LINE: &str = "shoal-test-token=";
const ERROR_LINE: &str = "shoal-test-error=";
const CLIENT_ID_VAR: &str = "SHOAL_TEST_MI_CLIENT_ID";

/// Runs `azure_sdk_child` in a child process with the endpoint and header in its environment;
/// the token, or the SDK's error message.
pub async fn sdk_token(
    endpoint: &str,
    header: &str,
    identity: &Identity,
) -> Result<String, String> {
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap());
    child
        .args([
            "managed_identity::azure_sdk_child",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env("IDENTITY_ENDPOINT", endpoint)
        .env("IDENTITY_HEADER", header)
        // Any of these would make the SDK pick another managed-identity source.
        .env_remove("IDENTITY_SERVER_THUMBPRINT")
        .env_remove("IMDS_ENDPOINT")
        .env_remove("MSI_ENDPOINT")
        .env_remove("MSI_SECRET")
        .env_remove(CLIENT_ID_VAR);
    if let Identity::ClientId(id) = identity {
        child.env(CLIENT_ID_VAR, id.to_string());
    }
    let output = child.output().await.expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    for line in stdout.lines() {
        if let Some(token) = line.strip_prefix(TOKEN_LINE) {
            return Ok(token.to_string());
        }
        if let Some(error) = line.strip_prefix(ERROR_LINE) {
            return Err(error.to_string());
        }
    }
    panic!(
        "the child printed neither a token nor an error: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Not a test of its own: `sdk_token` runs it in a child process.
#[tokio::test]
#[ignore = "run by the managed identity tests in a child process with IDENTITY_ENDPOINT set"]
async fn azure_sdk_child() {
    use azure_core::credentials::TokenCredential;
    use azure_identity::{
        ManagedIdentityCredential, ManagedIdentityCredentialOptions, UserAssignedId,
    };

    if std::env::var("IDENTITY_ENDPOINT").is_err() {
        return;
    }
    let options = ManagedIdentityCredentialOptions {
        user_assigned_id: std::env::var(CLIENT_ID_VAR)
            .ok()
            .map(UserAssignedId::ClientId),
        ..Default::default()
    };
    let credential = ManagedIdentityCredential::new(Some(options)).expect("a credential");
    match credential.get_token(&["api://shoal/.default"], None).await {
        Ok(token) => println!("{TOKEN_LINE}{}", token.token.secret()),
        Err(error) => println!("{ERROR_LINE}{}", error.to_string().replace('\n', " ")),
    }
}

fn contoso() -> TenantName {
    TenantName::parse("contoso").unwrap()
}

/// Tenant `contoso` with the user-assigned identity `billing` and app `orders` that has a
/// system-assigned identity and lists `billing`.
async fn app_with_identities(app: &TestApp) -> (Uuid, shoal_store::principals::PrincipalRecord) {
    assert_eq!(
        app.put_tenant("contoso").await.status(),
        StatusCode::CREATED
    );
    let billing = app.user_assigned_identity("contoso", "billing").await;
    let mut body = minimal_app();
    body["identity"] =
        json!({"type": "SystemAssigned, UserAssigned", "userAssignedIdentities": ["billing"]});
    assert_eq!(
        app.put_app("contoso", "orders", &body).await.status(),
        StatusCode::CREATED
    );
    let system = app.system_identity("contoso", "orders").await;
    (system.id, billing)
}

#[tokio::test]
async fn azure_sdk_gets_a_token_for_the_apps_system_assigned_identity() {
    let app = TestApp::spawn().await;
    let (system, _) = app_with_identities(&app).await;

    let token = app
        .managed_identity_token("contoso", "orders", Identity::SystemAssigned)
        .await;

    assert_eq!(
        app.tokens.verify(&token).unwrap(),
        Principal::Registered {
            id: system,
            tenant: contoso()
        }
    );
}

#[tokio::test]
async fn azure_sdk_selects_a_user_assigned_identity_by_client_id() {
    let app = TestApp::spawn().await;
    let (_, billing) = app_with_identities(&app).await;

    let token = app
        .managed_identity_token("contoso", "orders", Identity::ClientId(billing.client_id))
        .await;

    assert_eq!(
        app.tokens.verify(&token).unwrap(),
        Principal::Registered {
            id: billing.id,
            tenant: contoso()
        }
    );
}

/// The raw protocol: what App Service answers, field by field.
async fn msi(app: &TestApp, path_and_query: &str, header: Option<&str>) -> reqwest::Response {
    let request = app.client.get(format!("{}{path_and_query}", app.base));
    match header {
        Some(header) => request.header("X-IDENTITY-HEADER", header),
        None => request,
    }
    .fetch()
    .await
}

#[tokio::test]
async fn the_response_is_app_services_and_selectors_pick_listed_identities_only() {
    let app = TestApp::spawn().await;
    let (system, billing) = app_with_identities(&app).await;
    let unlisted = app.user_assigned_identity("contoso", "payroll").await;
    let (endpoint, header) = app.identity_endpoint("contoso", "orders").await;
    let path = endpoint.strip_prefix(&app.base).unwrap();
    assert_eq!(path, "/msi/contoso/orders/token");
    let query = |extra: &str| format!("{path}?resource=api://shoal&api-version=2019-08-01{extra}");

    let response = msi(&app, &query(""), Some(&header)).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["cache-control"], "no-store");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["resource"], "api://shoal");
    let expires_on: u64 = body["expires_on"]
        .as_str()
        .expect("a string")
        .parse()
        .unwrap();
    assert!(
        (unix_now() + 3500..=unix_now() + 3600).contains(&expires_on),
        "1 h by default"
    );
    let system_client = app.system_identity("contoso", "orders").await.client_id;
    assert_eq!(body["client_id"], system_client.to_string());
    let token = body["access_token"].as_str().unwrap();
    assert!(
        matches!(app.tokens.verify(token).unwrap(), Principal::Registered { id, .. } if id == system)
    );

    // Each selector reaches the listed user-assigned identity.
    for selector in [
        format!("&client_id={}", billing.client_id),
        format!("&principal_id={}", billing.id),
        format!("&object_id={}", billing.id),
        "&mi_res_id=/tenants/contoso/identities/billing".to_string(),
    ] {
        let body = msi(&app, &query(&selector), Some(&header))
            .await
            .json::<Value>()
            .await
            .unwrap();
        assert_eq!(
            body["client_id"],
            billing.client_id.to_string(),
            "{selector}"
        );
    }
    // Identities the app does not list, ambiguous selectors, other resources or versions: 400.
    for (extra, resource, version) in [
        (
            format!("&client_id={}", unlisted.client_id),
            "api://shoal",
            "2019-08-01",
        ),
        (
            format!("&object_id={}", Uuid::new_v4()),
            "api://shoal",
            "2019-08-01",
        ),
        (
            "&mi_res_id=/tenants/contoso/identities/payroll".to_string(),
            "api://shoal",
            "2019-08-01",
        ),
        (
            "&mi_res_id=/tenants/fabrikam/identities/billing".to_string(),
            "api://shoal",
            "2019-08-01",
        ),
        (
            format!("&client_id={}&object_id={}", billing.client_id, billing.id),
            "api://shoal",
            "2019-08-01",
        ),
        (String::new(), "https://vault.azure.net", "2019-08-01"),
        (String::new(), "api://shoal", "2017-09-01"),
    ] {
        let q = format!("{path}?resource={resource}&api-version={version}{extra}");
        let response = msi(&app, &q, Some(&header)).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{q}");
        let error: Value = response.json().await.unwrap();
        assert_eq!(error["statusCode"], 400);
        assert!(error["message"].is_string());
    }
    // `/.default` is accepted, as the Azure SDK strips it and other clients may not.
    let default_scope = format!("{path}?resource=api://shoal/.default&api-version=2019-08-01");
    assert_eq!(
        msi(&app, &default_scope, Some(&header)).await.status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn an_app_without_a_system_assigned_identity_gets_400() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "plain").await;
    let (endpoint, header) = app.identity_endpoint("contoso", "plain").await;

    let err = crate::managed_identity::sdk_token(&endpoint, &header, &Identity::SystemAssigned)
        .await
        .unwrap_err();

    assert!(err.contains("has not been assigned"), "{err}");
    let path = endpoint.strip_prefix(&app.base).unwrap();
    let q = format!("{path}?resource=api://shoal&api-version=2019-08-01");
    assert_eq!(
        msi(&app, &q, Some(&header)).await.status(),
        StatusCode::BAD_REQUEST
    );
}

#[tokio::test]
async fn the_identity_header_is_required_checked_and_rotates_with_the_signing_secret() {
    let app = TestApp::spawn().await;
    app_with_identities(&app).await;
    let (endpoint, header) = app.identity_endpoint("contoso", "orders").await;
    let q = |path: &str| format!("{path}?resource=api://shoal&api-version=2019-08-01");
    let path = q("/msi/contoso/orders/token");
    assert_eq!(
        msi(&app, &path, Some(&header)).await.status(),
        StatusCode::OK
    );

    assert_eq!(
        msi(&app, &path, None).await.status(),
        StatusCode::BAD_REQUEST
    );
    let wrong = msi(&app, &path, Some("not-the-header")).await;
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    let body = wrong.text().await.unwrap();
    assert!(!body.contains(&header), "the header is never echoed");
    // Another app's header, or an app that does not exist: the same 401.
    app.put_app("contoso", "other", &minimal_app()).await;
    let (_, other_header) = app.identity_endpoint("contoso", "other").await;
    assert_eq!(
        msi(&app, &path, Some(&other_header)).await.status(),
        StatusCode::UNAUTHORIZED
    );
    for missing in [
        "/msi/contoso/nothing/token",
        "/msi/nobody/orders/token",
        "/msi/BAD!/x/token",
    ] {
        assert_eq!(
            msi(&app, &q(missing), Some(&header)).await.status(),
            StatusCode::UNAUTHORIZED,
            "{missing}"
        );
    }
    // The SDK with a wrong header fails too.
    let err = crate::managed_identity::sdk_token(&endpoint, "wrong", &Identity::SystemAssigned)
        .await
        .unwrap_err();
    assert!(
        err.contains("401") || err.to_lowercase().contains("identity-header"),
        "{err}"
    );

    // Regenerating the app's signing secret replaces the header.
    let regenerated = app
        .admin(
            Method::POST,
            "/v1/tenants/contoso/apps/orders/signingSecret/regenerate",
        )
        .fetch()
        .await;
    assert_eq!(regenerated.status(), StatusCode::OK);
    assert_eq!(
        msi(&app, &path, Some(&header)).await.status(),
        StatusCode::UNAUTHORIZED
    );
    let (_, new_header) = app.identity_endpoint("contoso", "orders").await;
    assert_ne!(new_header, header);
    assert_eq!(
        msi(&app, &path, Some(&new_header)).await.status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn identity_endpoint_list_is_for_owners_and_audited() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    let path = "/v1/tenants/contoso/apps/orders/identityEndpoint/list";

    for role in [Role::Reader, Role::Contributor, Role::FunctionInvoker] {
        let response = app
            .request(Method::POST, path, Some(&app.token_for("contoso", role)))
            .fetch()
            .await;
        assert!(
            matches!(
                response.status(),
                StatusCode::FORBIDDEN | StatusCode::NOT_FOUND
            ),
            "{role:?}: {}",
            response.status()
        );
    }
    let elsewhere = app.token_for("fabrikam", Role::Owner);
    let hidden = app
        .request(Method::POST, path, Some(&elsewhere))
        .fetch()
        .await;
    assert_eq!(hidden.status(), StatusCode::NOT_FOUND);
    let owner = app.token_for("contoso", Role::Owner);
    let listed = app.request(Method::POST, path, Some(&owner)).fetch().await;
    assert_eq!(listed.status(), StatusCode::OK);
    let body: Value = listed.json().await.unwrap();
    assert_eq!(
        body["IDENTITY_ENDPOINT"],
        format!("{}/msi/contoso/orders/token", app.base)
    );
    let missing = app
        .request(
            Method::POST,
            "/v1/tenants/contoso/apps/nothing/identityEndpoint/list",
            Some(&owner),
        )
        .fetch()
        .await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);

    let entries = app
        .in_tenant("contoso", async |tx, _| {
            shoal_store::audit::list(tx, None, 100).await.unwrap()
        })
        .await;
    let listed: Vec<_> = entries
        .iter()
        .filter(|e| e.action == "Shoal/apps/identityEndpoint/list/action")
        .collect();
    assert!(
        listed
            .iter()
            .any(|e| e.outcome == "succeeded" && e.principal == "contoso-owner"),
        "{entries:?}"
    );
    assert!(listed.iter().any(|e| e.outcome == "denied"), "{entries:?}");
}

/// How many times this process has read an app from the database (all outcomes).
async fn app_reads(app: &TestApp) -> u64 {
    let metrics = app.get("/metrics").await.text().await.unwrap();
    metrics
        .lines()
        .filter(|l| {
            l.contains("store_operation_seconds_count") && l.contains("operation=\"apps_get\"")
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

#[tokio::test]
async fn wrong_headers_are_refused_without_reading_the_database_each_time() {
    let app = TestApp::spawn().await;
    app_with_identities(&app).await;
    let (_, header) = app.identity_endpoint("contoso", "orders").await;
    let path = "/msi/contoso/orders/token?resource=api://shoal&api-version=2019-08-01";
    let before = app_reads(&app).await;
    // Malformed headers never get as far as the database; a well-formed wrong one is compared
    // with the header read for the first request.
    let wrong = "x".repeat(43);
    for candidate in ["short", &format!("{header}!"), &wrong] {
        for _ in 0..20 {
            assert_eq!(
                msi(&app, path, Some(candidate)).await.status(),
                StatusCode::UNAUTHORIZED,
                "{candidate}"
            );
        }
    }
    // One read, and one more each 5 s the loop may take on a loaded machine; it was 60.
    let reads = app_reads(&app).await - before;
    assert!(
        reads <= 10,
        "60 refused requests read the app {reads} times"
    );
    // The right header still works, and so does a request for an app that does not exist.
    assert_eq!(
        msi(&app, path, Some(&header)).await.status(),
        StatusCode::OK
    );
    let missing = "/msi/contoso/nothing/token?resource=api://shoal&api-version=2019-08-01";
    for _ in 0..20 {
        assert_eq!(
            msi(&app, missing, Some(&header)).await.status(),
            StatusCode::UNAUTHORIZED
        );
    }
    let reads = app_reads(&app).await - before;
    assert!(reads <= 20, "{reads} reads in all (81 requests)");
}
