use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;

#[tokio::test]
async fn put_creates_then_replaces_a_tenant() {
    let app = TestApp::spawn().await;
    let created = app.put_tenant("contoso").await;
    assert_eq!(created.status(), StatusCode::CREATED);
    assert_eq!(created.headers()["location"], "/v1/tenants/contoso");
    let replaced = app
        .admin(Method::PUT, "/v1/tenants/contoso")
        .json(&json!({"displayName": "Contoso Ltd", "limits": {"maxApps": 3}}))
        .fetch()
        .await;
    assert_eq!(replaced.status(), StatusCode::OK);
    let body: Value = replaced.json().await.unwrap();
    assert_eq!(body["displayName"], "Contoso Ltd");
    assert_eq!(body["limits"]["maxApps"], 3);
    assert_eq!(body["limits"]["maxInstances"], Value::Null);
}

#[tokio::test]
async fn get_after_delete_is_404_and_deleting_twice_is_404() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let deleted = app
        .admin(Method::DELETE, "/v1/tenants/contoso")
        .fetch()
        .await;
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    let missing = app.get("/v1/tenants/contoso").await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    assert_eq!(problem(missing).await["status"], 404);
    let again = app
        .admin(Method::DELETE, "/v1/tenants/contoso")
        .fetch()
        .await;
    assert_eq!(again.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn list_is_paginated_in_name_order() {
    let app = TestApp::spawn().await;
    for name in ["t-c", "t-a", "t-e", "t-b", "t-d"] {
        assert_eq!(app.put_tenant(name).await.status(), StatusCode::CREATED);
    }
    let mut seen = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut path = "/v1/tenants?limit=2".to_string();
        if let Some(t) = &token {
            path.push_str(&format!("&continuationToken={t}"));
        }
        let page: Value = app.get(&path).await.json().await.unwrap();
        seen.extend(
            page["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_string()),
        );
        match page.get("continuationToken").and_then(Value::as_str) {
            Some(t) => token = Some(t.to_string()),
            None => break,
        }
    }
    assert_eq!(seen, vec!["t-a", "t-b", "t-c", "t-d", "t-e"]);
}

#[tokio::test]
async fn merge_patch_changes_only_what_it_names() {
    let app = TestApp::spawn().await;
    app.admin(Method::PUT, "/v1/tenants/contoso")
        .json(&json!({"displayName": "Contoso", "limits": {"maxApps": 3, "maxInstances": 10}}))
        .fetch()
        .await;
    let patched = app
        .admin(Method::PATCH, "/v1/tenants/contoso")
        .header("content-type", "application/merge-patch+json")
        .body(r#"{"limits": {"maxInstances": null}}"#)
        .fetch()
        .await;
    assert_eq!(patched.status(), StatusCode::OK);
    let body: Value = patched.json().await.unwrap();
    assert_eq!(body["displayName"], "Contoso");
    assert_eq!(body["limits"]["maxApps"], 3);
    assert_eq!(body["limits"]["maxInstances"], Value::Null);
}

#[tokio::test]
async fn tenant_principals_cannot_manage_tenants() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let owner = app.token_for("contoso", shoal_api::identity::Role::Owner);
    let list = app
        .request(Method::GET, "/v1/tenants", Some(&owner))
        .fetch()
        .await;
    assert_eq!(list.status(), StatusCode::FORBIDDEN);
    let own = app
        .request(Method::GET, "/v1/tenants/contoso", Some(&owner))
        .fetch()
        .await;
    assert_eq!(own.status(), StatusCode::OK);
    let put = app
        .request(Method::PUT, "/v1/tenants/contoso", Some(&owner))
        .json(&json!({"limits": {"maxApps": 1000}}))
        .fetch()
        .await;
    assert_eq!(put.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn missing_or_invalid_token_is_401_with_a_challenge() {
    let app = TestApp::spawn().await;
    let none = app.request(Method::GET, "/v1/tenants", None).fetch().await;
    assert_eq!(none.status(), StatusCode::UNAUTHORIZED);
    assert!(
        none.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .starts_with("Bearer")
    );
    let garbage = app
        .request(Method::GET, "/v1/tenants", Some("not-a-jwt"))
        .fetch()
        .await;
    assert_eq!(garbage.status(), StatusCode::UNAUTHORIZED);
    let body = problem(garbage).await;
    assert_eq!(body["status"], 401);
    assert!(body["requestId"].is_string());
}

#[tokio::test]
async fn host_identity_is_off_until_a_platform_admin_allows_it() {
    let app = TestApp::spawn().await;
    let created: Value = app.put_tenant("contoso").await.json().await.unwrap();
    assert_eq!(created["allowHostIdentity"], false);
    let patched = app
        .admin(Method::PATCH, "/v1/tenants/contoso")
        .header("content-type", "application/merge-patch+json")
        .body(r#"{"allowHostIdentity": true}"#)
        .fetch()
        .await;
    assert_eq!(patched.status(), StatusCode::OK);
    let read: Value = app.get("/v1/tenants/contoso").await.json().await.unwrap();
    assert_eq!(read["allowHostIdentity"], true);
    let bad = app
        .admin(Method::PUT, "/v1/tenants/contoso")
        .json(&json!({"allowHostIdentity": "yes"}))
        .fetch()
        .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        error_paths(&bad.json().await.unwrap()),
        ["allowHostIdentity"]
    );
    // The tenant's own Owner cannot allow it for itself.
    let owner = app.token_for("contoso", shoal_api::identity::Role::Owner);
    let refused = app
        .request(Method::PATCH, "/v1/tenants/contoso", Some(&owner))
        .header("content-type", "application/merge-patch+json")
        .body(r#"{"allowHostIdentity": false}"#)
        .fetch()
        .await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
}
