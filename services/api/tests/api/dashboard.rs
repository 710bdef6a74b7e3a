//! The dashboard's files at `/` beside the API, its configuration and one-click sign-in, and
//! `GET /v1/me`, which tells the dashboard what the caller may do.

use reqwest::{Method, StatusCode};
use serde_json::Value;
use shoal_api::dashboard::DashboardConfig;
use shoal_api::identity::Role;

use crate::helpers::{Options, TestApp, problem};

/// A built dashboard: index.html and one hashed asset.
fn built_dashboard() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("index.html"),
        "<!doctype html><title>Shoal</title>",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("assets")).unwrap();
    std::fs::write(dir.path().join("assets/index-abc123.js"), "console.log(1)").unwrap();
    dir
}

const JAEGER: &str = "http://jaeger.example:16686/trace/{traceId}";

async fn spawn_with_dashboard(dir: &tempfile::TempDir, dev_sign_in: bool) -> TestApp {
    TestApp::spawn_with(Options {
        dashboard: DashboardConfig {
            dir: Some(dir.path().to_path_buf()),
            environment: Some("staging-eu".into()),
            dev_sign_in,
            // The production-like deployment has a trace viewer; `shoal dev` here has none.
            trace_viewer_url: (!dev_sign_in).then(|| JAEGER.to_owned()),
        },
        ..Options::default()
    })
    .await
}

#[tokio::test]
async fn the_dashboard_is_served_at_the_root_and_for_its_own_routes() {
    let dir = built_dashboard();
    let app = spawn_with_dashboard(&dir, false).await;
    for path in ["/", "/index.html", "/tenants/contoso/apps", "/workers"] {
        let response = app.request(Method::GET, path, None).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/html"),
            "{path}"
        );
        assert_eq!(response.headers()["cache-control"], "no-cache", "{path}");
        assert!(
            response
                .text()
                .await
                .unwrap()
                .contains("<title>Shoal</title>"),
            "{path}"
        );
    }
    let asset = app
        .request(Method::GET, "/assets/index-abc123.js", None)
        .send()
        .await
        .unwrap();
    assert_eq!(asset.status(), StatusCode::OK);
    assert_eq!(
        asset.headers()["cache-control"],
        "public, max-age=31536000, immutable"
    );
    assert_eq!(asset.text().await.unwrap(), "console.log(1)");
}

#[tokio::test]
async fn the_dashboard_never_shadows_the_api() {
    let dir = built_dashboard();
    let app = spawn_with_dashboard(&dir, false).await;
    for path in [
        "/v1",
        "/v1/nothing-here",
        "/.well-known/nothing",
        "/oauth2/nothing",
        "/webhooks",
        "/dashboard/devSignIn",
        "/metrics/x",
    ] {
        let response = app.request(Method::GET, path, None).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
        let body = problem(response).await;
        assert_eq!(body["status"], 404, "{path}");
    }
    // Writes to a dashboard path are not the app's either.
    let posted = app
        .request(Method::POST, "/tenants/contoso/apps", None)
        .send()
        .await
        .unwrap();
    assert_eq!(posted.status(), StatusCode::NOT_FOUND);
    // The API's own routes answer as before.
    let jwks = app
        .request(Method::GET, "/.well-known/jwks.json", None)
        .send()
        .await
        .unwrap();
    assert_eq!(jwks.status(), StatusCode::OK);
    let tenants = app.get("/v1/tenants").await;
    assert_eq!(tenants.status(), StatusCode::OK);
    let spec = app
        .request(Method::GET, "/openapi.json", None)
        .send()
        .await
        .unwrap();
    assert_eq!(spec.status(), StatusCode::OK);
}

#[tokio::test]
async fn without_a_dashboard_the_root_is_a_plain_404() {
    let app = TestApp::spawn().await;
    let response = app.request(Method::GET, "/", None).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    problem(response).await;
}

#[tokio::test]
async fn the_config_names_the_environment_the_trace_viewer_and_one_click_sign_in_only_when_on() {
    let dir = built_dashboard();
    let app = spawn_with_dashboard(&dir, false).await;
    let config: Value = app
        .request(Method::GET, "/dashboard/config", None)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(config["environment"], "staging-eu");
    assert_eq!(config["devSignIn"], false);
    assert_eq!(config["traceViewerUrl"], JAEGER);
    let refused = app
        .request(Method::POST, "/dashboard/devSignIn", None)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::NOT_FOUND);

    let dev = spawn_with_dashboard(&dir, true).await;
    let config: Value = dev
        .request(Method::GET, "/dashboard/config", None)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(config["devSignIn"], true);
    // Unset is null, so the dashboard shows trace ids as plain text.
    assert_eq!(config["traceViewerUrl"], Value::Null);
    assert!(config.as_object().unwrap().contains_key("traceViewerUrl"));
    let signed_in: Value = dev
        .request(Method::POST, "/dashboard/devSignIn", None)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = signed_in["token"].as_str().unwrap();
    // Addressed to another host name (a rebound DNS name), it hands out nothing.
    let rebound = dev
        .request(Method::POST, "/dashboard/devSignIn", None)
        .header("host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), StatusCode::FORBIDDEN);
    let me: Value = dev
        .request(Method::GET, "/v1/me", Some(token))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(me["kind"], "platformAdmin");
    assert_eq!(me["subject"], shoal_api::dashboard::DEV_SUBJECT);
}

async fn me(app: &TestApp, token: &str, query: &str) -> reqwest::Response {
    app.request(Method::GET, &format!("/v1/me{query}"), Some(token))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn me_lists_the_actions_the_callers_roles_allow_where_it_asks() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let reader = app.token_for("contoso", Role::Reader);
    let body: Value = me(&app, &reader, "").await.json().await.unwrap();
    assert_eq!(body["kind"], "operator");
    assert_eq!(body["tenant"], "contoso");
    assert_eq!(body["scope"], "/tenants/contoso");
    let actions: Vec<&str> = body["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(actions.contains(&"Shoal/apps/read"), "{actions:?}");
    assert!(!actions.contains(&"Shoal/apps/write"), "{actions:?}");
    assert!(
        !actions.contains(&"Shoal/apps/settings/list/action"),
        "{actions:?}"
    );

    let contributor = app.token_for("contoso", Role::Contributor);
    let body: Value = me(&app, &contributor, "?tenant=contoso&app=orders")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(body["scope"], "/tenants/contoso/apps/orders");
    assert!(
        body["actions"]
            .as_array()
            .unwrap()
            .contains(&Value::from("Shoal/apps/functions/write"))
    );

    // Another tenant: nothing, which says no more than a 404 would.
    let other: Value = me(&app, &reader, "?tenant=fabrikam")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(other["actions"], serde_json::json!([]));

    let admin: Value = me(&app, &app.admin_token, "").await.json().await.unwrap();
    assert_eq!(admin["kind"], "platformAdmin");
    assert_eq!(admin["scope"], "/");
    assert!(admin.get("tenant").is_none_or(Value::is_null));
    assert!(
        admin["actions"]
            .as_array()
            .unwrap()
            .contains(&Value::from("Shoal/workers/read"))
    );
}

#[tokio::test]
async fn me_answers_bad_scopes_with_a_422_and_no_token_with_a_401() {
    let app = TestApp::spawn().await;
    for (query, path) in [
        ("?tenant=Not%20A%20Tenant", "tenant"),
        ("?app=orders", "app"),
        ("?tenant=contoso&app=bad%20name", "app"),
    ] {
        let response = me(&app, &app.admin_token, query).await;
        assert_eq!(
            response.status(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "{query}"
        );
        let body = problem(response).await;
        assert_eq!(body["errors"][0]["path"], path, "{query}");
    }
    let anonymous = app
        .request(Method::GET, "/v1/me", None)
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
}
