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
        "/v1/tenants/{tenant}/apps/{app}/scale",
        "/v1/workers",
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

/// One path convention, Azure's: every literal segment of every documented route is camelCase
/// (`roleAssignments`, `signingSecret/list`), never kebab- or snake_case.
#[test]
fn every_path_segment_is_camel_case() {
    let doc: Value = serde_json::from_str(&shoal_api::openapi().to_json().unwrap()).unwrap();
    let paths = doc["paths"].as_object().unwrap();
    assert!(paths.len() > 20, "{}", paths.len());
    for path in paths.keys() {
        for segment in path.split('/').skip(1) {
            if segment.starts_with('{') && segment.ends_with('}') {
                continue;
            }
            let mut chars = segment.chars();
            let camel = chars.next().is_some_and(|c| c.is_ascii_lowercase())
                && chars.all(|c| c.is_ascii_alphanumeric());
            assert!(camel, "{path}: segment {segment:?} is not camelCase");
        }
    }
}

/// Path parameters are exactly the path's `{placeholders}`: a query parameter documented as
/// `in: path` (as `limit` on the audit log once was) makes generators such as schemathesis
/// build requests the API never sees.
#[test]
fn path_parameters_are_the_path_placeholders() {
    let doc: Value = serde_json::from_str(&shoal_api::openapi().to_json().unwrap()).unwrap();
    for (path, item) in doc["paths"].as_object().unwrap() {
        let mut placeholders: Vec<&str> = path
            .split('/')
            .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
            .collect();
        placeholders.sort_unstable();
        for (method, operation) in item.as_object().unwrap() {
            let mut documented: Vec<&str> = operation["parameters"]
                .as_array()
                .map(|ps| {
                    ps.iter()
                        .filter(|p| p["in"] == "path")
                        .map(|p| p["name"].as_str().unwrap())
                        .collect()
                })
                .unwrap_or_default();
            documented.sort_unstable();
            assert_eq!(documented, placeholders, "{method} {path}");
        }
    }
}

/// Every `$ref` in the document points at a component that exists (generators and
/// validators refuse a document with a dangling reference).
#[test]
fn every_reference_resolves() {
    fn refs(value: &Value, found: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    found.push(r.clone());
                }
                map.values().for_each(|v| refs(v, found));
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, found)),
            _ => {}
        }
    }
    let doc: Value = serde_json::from_str(&shoal_api::openapi().to_json().unwrap()).unwrap();
    let mut found = Vec::new();
    refs(&doc, &mut found);
    assert!(!found.is_empty());
    for reference in found {
        let name = reference
            .strip_prefix("#/components/schemas/")
            .expect("a schema reference");
        assert!(
            doc["components"]["schemas"].get(name).is_some(),
            "dangling {reference}"
        );
    }
}

#[test]
fn errors_are_documented_as_problem_json_on_every_operation() {
    let doc: Value = serde_json::from_str(&shoal_api::openapi().to_json().unwrap()).unwrap();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let responses = operation["responses"].as_object().unwrap();
            for status in ["400", "401", "403", "404", "422", "503"] {
                let content = &responses
                    .get(status)
                    .unwrap_or_else(|| panic!("{method} {path} lacks {status}"))["content"];
                assert!(
                    content.get("application/problem+json").is_some(),
                    "{method} {path} {status}"
                );
            }
            for (status, response) in responses
                .iter()
                .filter(|(s, _)| s.starts_with('4') || s.starts_with('5'))
            {
                assert!(
                    response["content"].get("application/json").is_none(),
                    "{method} {path} {status} is problem+json"
                );
            }
        }
    }
}

/// The scale view is documented with examples and its `metrics` items with their shape; the
/// app write schema takes every writable scale field.
#[test]
fn scale_status_is_documented_with_examples() {
    let doc: Value = serde_json::from_str(&shoal_api::openapi().to_json().unwrap()).unwrap();
    let get = &doc["paths"]["/v1/tenants/{tenant}/apps/{app}/scale"]["get"];
    let examples = get["responses"]["200"]["content"]["application/json"]["examples"]
        .as_object()
        .expect("response examples");
    assert!(examples.len() >= 2, "{examples:?}");
    let parameters = get["parameters"].as_array().unwrap();
    assert!(
        parameters
            .iter()
            .any(|p| p["name"] == "decisions" && p["in"] == "query")
    );
    let schemas = &doc["components"]["schemas"];
    for field in [
        "currentInstances",
        "desiredInstances",
        "mode",
        "placement",
        "decisions",
    ] {
        assert!(
            schemas["ScaleStatus"]["properties"].get(field).is_some(),
            "{field}"
        );
    }
    assert!(schemas["FunctionVerdict"]["properties"]["perInstance"].is_object());
    assert!(schemas["ScaleWrite"]["properties"]["visibleOnly"].is_object());
    for field in ["capacity", "leaseTtlSeconds", "alive", "assignments"] {
        assert!(
            schemas["Worker"]["properties"].get(field).is_some(),
            "{field}"
        );
    }
}

/// A write may omit any `host.json` setting (it takes its default); a read returns them all.
#[test]
fn host_config_is_optional_field_by_field_on_write_and_complete_on_read() {
    let doc: Value = serde_json::from_str(&shoal_api::openapi().to_json().unwrap()).unwrap();
    let schemas = &doc["components"]["schemas"];
    assert!(
        schemas["QueuesOptions"]["required"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
    );
    assert!(schemas["QueuesOptionsWrite"].get("required").is_none());
    let app_write = serde_json::to_string(&schemas["AppWrite"]).unwrap();
    assert!(
        app_write.contains("#/components/schemas/HostConfigWrite"),
        "{app_write}"
    );
    let host_write = serde_json::to_string(&schemas["ExtensionsWrite"]).unwrap();
    assert!(
        host_write.contains("QueuesOptionsWrite")
            && !host_write.contains("\"#/components/schemas/QueuesOptions\"")
    );
    // Function retry policies keep their required fields.
    assert!(
        schemas["RetryPolicy"]["required"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
    );
}
