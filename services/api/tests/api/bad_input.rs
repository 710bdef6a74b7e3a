//! Bad input of every kind is a 4xx problem document, never a 5xx.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn malformed_json_is_400() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let response = app
        .admin(Method::PUT, "/v1/tenants/contoso/apps/orders")
        .header("content-type", "application/json")
        .body("{\"handler\": ")
        .fetch()
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(
        problem(response).await["detail"]
            .as_str()
            .unwrap()
            .contains("not valid JSON")
    );
}

#[tokio::test]
async fn wrong_types_and_unknown_fields_are_422_with_paths() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let cases = [
        (json!({"handler": {"url": 42}}), "handler.url"),
        (
            json!({"handler": {"url": "http://h", "timeoutSeconds": "soon"}}),
            "handler.timeoutSeconds",
        ),
        (
            json!({"handler": {"url": "http://h"}, "scale": {"limit": -1}}),
            "scale.limit",
        ),
        (
            json!({"handler": {"url": "http://h"}, "unknown": true}),
            "unknown",
        ),
        (
            json!({"handler": {"url": "http://h"}, "hostConfig": {"extensions": {"queues": {"bogus": 1}}}}),
            "hostConfig.extensions.queues.bogus",
        ),
        (json!("just a string"), ""),
    ];
    for (body, path) in cases {
        let response = app.put_app("contoso", "orders", &body).await;
        assert_eq!(
            response.status(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}"
        );
        let paths = error_paths(&problem(response).await);
        assert!(
            paths.iter().any(|p| p == path),
            "expected {path:?} in {paths:?} for {body}"
        );
    }
}

#[tokio::test]
async fn oversized_bodies_are_413() {
    let app = TestApp::spawn_with(Options {
        max_body_bytes: 16 * 1024,
        ..Options::default()
    })
    .await;
    app.put_tenant("contoso").await;
    let huge =
        json!({"handler": {"url": "http://h"}, "appSettings": {"BIG": "x".repeat(64 * 1024)}});
    let response = app.put_app("contoso", "orders", &huge).await;
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(problem(response).await["status"], 413);
}

#[tokio::test]
async fn wrong_content_type_is_415() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let response = app
        .admin(Method::PUT, "/v1/tenants/contoso/apps/orders")
        .header("content-type", "text/plain")
        .body("{}")
        .fetch()
        .await;
    assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

#[tokio::test]
async fn invalid_utf8_in_paths_is_a_4xx_problem() {
    let app = TestApp::spawn().await;
    for path in [
        "/v1/tenants/%FF%FE",
        "/v1/tenants/contoso/apps/%C3%28",
        "/v1/tenants/contoso/apps/ok/functions/%80",
    ] {
        let response = app.get(path).await;
        assert!(
            response.status().is_client_error(),
            "{path}: {}",
            response.status()
        );
        problem(response).await;
    }
}

#[tokio::test]
async fn absurd_pagination_values_are_422() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    for query in [
        "limit=0",
        "limit=-5",
        "limit=100000000000000000000",
        "limit=abc",
        "continuationToken=%%%",
        "continuationToken=AAAA",
    ] {
        let response = app.get(&format!("/v1/tenants/contoso/apps?{query}")).await;
        assert!(
            response.status() == StatusCode::UNPROCESSABLE_ENTITY
                || response.status() == StatusCode::BAD_REQUEST,
            "{query}: {}",
            response.status()
        );
        problem(response).await;
    }
}

#[tokio::test]
async fn unknown_routes_and_methods_are_problems() {
    let app = TestApp::spawn().await;
    let missing = app.get("/v1/nothing-here").await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    problem(missing).await;
    let method = app.admin(Method::POST, "/v1/tenants/contoso").fetch().await;
    assert_eq!(method.status(), StatusCode::METHOD_NOT_ALLOWED);
    problem(method).await;
}

#[tokio::test]
async fn malformed_conditional_headers_are_400() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let response = app
        .admin(Method::PUT, "/v1/tenants/contoso/apps/orders")
        .header("if-match", "not-an-etag")
        .json(&minimal_app())
        .fetch()
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn nul_characters_are_a_4xx_not_a_5xx() {
    let app = TestApp::spawn().await;
    let tenant = app
        .admin(Method::PUT, "/v1/tenants/contoso")
        .json(&json!({"displayName": "a\u{0000}b"}))
        .fetch()
        .await;
    assert!(tenant.status().is_client_error(), "{}", tenant.status());
    app.put_tenant("contoso").await;
    let function = json!({"bindings": [{"type": "httpTrigger", "direction": "in", "name": "req", "route": "x\u{0000}y"}]});
    app.put_app("contoso", "orders", &minimal_app()).await;
    let response = app
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/apps/orders/functions/Hook",
        )
        .json(&function)
        .fetch()
        .await;
    assert!(response.status().is_client_error(), "{}", response.status());
    problem(response).await;
}
