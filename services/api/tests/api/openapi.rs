use reqwest::StatusCode;
use serde_json::Value;

use crate::helpers::{Fetch, TestApp};

fn committed() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../openapi/openapi.json");
    std::fs::read_to_string(path).expect("openapi/openapi.json is committed")
}

#[test]
fn committed_openapi_matches_the_code() {
    let generated = shoal_api::openapi().to_pretty_json().unwrap();
    assert!(
        committed().trim_end() == generated.trim_end(),
        "openapi/openapi.json is stale: run `make openapi` and commit the result"
    );
}

#[test]
fn openapi_is_3_1_and_covers_the_resources() {
    let doc: Value = serde_json::from_str(&shoal_api::openapi().to_json().unwrap()).unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    for path in [
        "/v1/tenants",
        "/v1/tenants/{tenant}",
        "/v1/tenants/{tenant}/apps",
        "/v1/tenants/{tenant}/apps/{app}",
        "/v1/tenants/{tenant}/apps/{app}/settings/list",
        "/v1/tenants/{tenant}/apps/{app}/diagnostics",
        "/v1/tenants/{tenant}/apps/{app}/functions/{function}",
    ] {
        assert!(doc["paths"].get(path).is_some(), "{path} missing");
    }
}

#[tokio::test]
async fn spec_reference_page_jwks_and_probes_are_served() {
    let app = TestApp::spawn().await;
    let spec: Value = app
        .client
        .get(format!("{}/openapi.json", app.base))
        .fetch_json()
        .await;
    assert_eq!(spec["info"]["title"], "Shoal");
    let docs = app.client.get(format!("{}/docs/", app.base)).fetch().await;
    assert_eq!(docs.status(), StatusCode::OK);
    let html = docs.text().await.unwrap();
    assert!(
        html.contains("swagger"),
        "the reference page is served from the binary"
    );
    let jwks: Value = app
        .client
        .get(format!("{}/.well-known/jwks.json", app.base))
        .fetch_json()
        .await;
    assert_eq!(jwks["keys"][0]["kty"], "EC");
    assert!(jwks["keys"][0].get("d").is_none(), "no private material");
    for probe in ["/healthz", "/readyz"] {
        let r = app.client.get(format!("{}{probe}", app.base)).fetch().await;
        assert_eq!(r.status(), StatusCode::OK, "{probe}");
    }
    app.get("/v1/tenants").await;
    let metrics = app
        .client
        .get(format!("{}/metrics", app.base))
        .fetch()
        .await
        .text()
        .await
        .unwrap();
    assert!(metrics.contains("shoal_http_requests_total"), "{metrics}");
    assert!(metrics.contains("route=\"/v1/tenants\""));
}
