//! What the apps list costs on the wire: items without the defaulted host config, and every
//! JSON answer compressed as the client's `Accept-Encoding` asks (gzip or br), else sent as is.

use std::io::Read;

use reqwest::header::{ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_TYPE, VARY};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::{Fetch, TestApp, minimal_app};

const LIST: &str = "/v1/tenants/contoso/apps?limit=1000&expand=status";

async fn with_apps(app: &TestApp, n: usize) {
    app.put_tenant("contoso").await;
    for i in 0..n {
        let put = app
            .put_app("contoso", &format!("app-{i}"), &minimal_app())
            .await;
        assert_eq!(put.status(), StatusCode::CREATED);
    }
}

/// A client that sends only the `Accept-Encoding` it is given and decodes nothing itself
/// (the workspace's reqwest has gzip decoding on, which would hide what the API sent).
fn undecoding_client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_gzip()
        .no_brotli()
        .no_deflate()
        .no_zstd()
        .build()
        .unwrap()
}

/// The raw body of a request sent with `Accept-Encoding: encoding` (none when empty), with
/// the `Content-Encoding` it came with.
async fn raw(app: &TestApp, path: &str, encoding: &str) -> (StatusCode, Option<String>, Vec<u8>) {
    let mut request = undecoding_client()
        .get(format!("{}{path}", app.base))
        .bearer_auth(&app.admin_token);
    if !encoding.is_empty() {
        request = request.header(ACCEPT_ENCODING, encoding);
    }
    let response = request.fetch().await;
    let status = response.status();
    let vary = response
        .headers()
        .get(VARY)
        .map(|v| v.to_str().unwrap().to_lowercase());
    if !encoding.is_empty() {
        assert_eq!(
            vary.as_deref(),
            Some("accept-encoding"),
            "{path} {encoding}"
        );
    }
    let content_encoding = response
        .headers()
        .get(CONTENT_ENCODING)
        .map(|v| v.to_str().unwrap().to_owned());
    (
        status,
        content_encoding,
        response.bytes().await.unwrap().to_vec(),
    )
}

fn gunzip(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(body)
        .read_to_end(&mut out)
        .unwrap();
    out
}

fn unbrotli(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    brotli::Decompressor::new(body, 4096)
        .read_to_end(&mut out)
        .unwrap();
    out
}

#[tokio::test]
async fn json_is_gzip_or_br_as_accepted_and_identity_otherwise() {
    let app = TestApp::spawn().await;
    with_apps(&app, 30).await;

    let (status, encoding, plain) = raw(&app, LIST, "").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(encoding, None, "nothing asked for, nothing encoded");
    let list: Value = serde_json::from_slice(&plain).expect("an identity body is plain JSON");
    assert_eq!(list["items"].as_array().unwrap().len(), 30);

    let (_, encoding, gzipped) = raw(&app, LIST, "gzip").await;
    assert_eq!(encoding.as_deref(), Some("gzip"));
    assert!(
        gzipped.len() * 4 < plain.len(),
        "{} of {} bytes",
        gzipped.len(),
        plain.len()
    );
    let unzipped: Value = serde_json::from_slice(&gunzip(&gzipped)).unwrap();
    assert_eq!(unzipped, list);

    // Brotli when preferred; the weights are the client's to give.
    let (_, encoding, brotlied) = raw(&app, LIST, "gzip;q=0.5, br").await;
    assert_eq!(encoding.as_deref(), Some("br"));
    let unbrotlied: Value = serde_json::from_slice(&unbrotli(&brotlied)).unwrap();
    assert_eq!(unbrotlied, list);

    // An encoding the API does not speak leaves the body as it is.
    let (_, encoding, body) = raw(&app, LIST, "zstd").await;
    assert_eq!(encoding, None);
    assert_eq!(serde_json::from_slice::<Value>(&body).unwrap(), list);

    // Problems too, still problem+json once decoded.
    let response = undecoding_client()
        .get(format!("{}/v1/tenants/contoso/apps/nope", app.base))
        .bearer_auth(&app.admin_token)
        .header(ACCEPT_ENCODING, "gzip")
        .fetch()
        .await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_eq!(response.headers()[CONTENT_ENCODING], "gzip");
    assert!(
        response.headers()[CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("application/problem+json")
    );
    let problem: Value = serde_json::from_slice(&gunzip(&response.bytes().await.unwrap())).unwrap();
    assert_eq!(problem["status"], 404);
}

#[tokio::test]
async fn list_items_leave_out_the_host_config_an_app_read_has() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let put = app
        .put_app(
            "contoso",
            "orders",
            &json!({"handler": {"url": "http://127.0.0.1:7071/api"},
                    "appSettings": {"MODE": "fast"},
                    "hostConfig": {"extensions": {"queues": {"batchSize": 4}}}}),
        )
        .await;
    assert_eq!(put.status(), StatusCode::CREATED);
    let read: Value = app
        .admin(Method::GET, "/v1/tenants/contoso/apps/orders")
        .fetch_json()
        .await;
    assert_eq!(read["hostConfig"]["extensions"]["queues"]["batchSize"], 4);

    for path in ["/v1/tenants/contoso/apps", LIST] {
        let list: Value = app.admin(Method::GET, path).fetch_json().await;
        let item = &list["items"][0];
        assert!(item.get("hostConfig").is_none(), "{path}: {item}");
        // Everything else an app read has is there, the same.
        for field in [
            "name",
            "tenant",
            "handler",
            "appSettings",
            "scale",
            "identity",
            "state",
            "webhooks",
            "etag",
            "createdAt",
            "updatedAt",
        ] {
            assert_eq!(item[field], read[field], "{path}: {field}");
        }
    }
}
