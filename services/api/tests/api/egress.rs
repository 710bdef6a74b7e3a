//! The egress policy through the API: destinations refused by their text are a 422 at their
//! field; a name that resolves to a refused address is refused when the webhook ingress
//! connects, without the handler seeing a connection; the API's own address is refused even
//! where loopback is allowed; a handler's oversized answer is cut at the cap.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_api::OutboundConfig;
use shoal_api::identity::Role;
use shoal_domain::egress::AllowList;
use shoal_testkit::flood::{FloodingHandler, Framing};

use crate::helpers::{Fetch, Options, TestApp, error_paths, problem};

async fn strict_api() -> TestApp {
    TestApp::spawn_with(Options {
        outbound: OutboundConfig::default(),
        ..Options::default()
    })
    .await
}

fn forwarding_app(url: &str) -> Value {
    json!({
        "handler": {"url": url, "timeoutSeconds": 5},
        "hostConfig": {"version": "2.0", "customHandler": {
            "description": {"defaultExecutablePath": "handler"},
            "enableForwardingHttpRequest": true
        }}
    })
}

async fn patch_tenant(app: &TestApp, tenant: &str, patch: Value) -> reqwest::Response {
    app.admin(Method::PATCH, &format!("/v1/tenants/{tenant}"))
        .header("content-type", "application/merge-patch+json")
        .json(&patch)
        .fetch()
        .await
}

async fn put_webhook_function(app: &TestApp) {
    let bindings = json!([
        {"type": "httpTrigger", "direction": "in", "name": "req", "methods": ["get"]},
        {"type": "http", "direction": "out", "name": "res"}
    ]);
    let response = app
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/apps/orders/functions/token",
        )
        .json(&json!({ "bindings": bindings }))
        .fetch()
        .await;
    assert!(response.status().is_success(), "{}", response.status());
}

#[tokio::test]
async fn internal_handler_urls_are_refused_at_their_field_in_every_spelling() {
    let app = strict_api().await;
    assert_eq!(
        app.put_tenant("contoso").await.status(),
        StatusCode::CREATED
    );
    for (url, rule) in [
        (
            "http://169.254.169.254/metadata/identity/oauth2",
            "metadata",
        ),
        ("http://2852039166/", "metadata"),
        ("http://0xa9fea9fe/", "metadata"),
        ("http://[::ffff:169.254.169.254]/", "metadata"),
        ("http://[fd00:ec2::254]/", "metadata"),
        (
            "http://metadata.google.internal/computeMetadata/v1/",
            "metadata",
        ),
        ("http://[::1]:7071/api", "loopback"),
        ("http://localhost:5432/", "loopback"),
        ("http://10.0.0.1/", "private"),
        ("http://100.64.0.9/", "shared-address-space"),
    ] {
        let response = app
            .put_app("contoso", "ssrf", &json!({"handler": {"url": url}}))
            .await;
        assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY, "{url}");
        let body = problem(response).await;
        assert_eq!(error_paths(&body), ["handler.url"], "{url}: {body}");
        assert!(body.to_string().contains(rule), "{url}: {body}");
    }
    // A public name passes (it is checked on every connection).
    let ok = app
        .put_app(
            "contoso",
            "ok",
            &json!({"handler": {"url": "https://handler.example.com/api"}}),
        )
        .await;
    assert_eq!(ok.status(), StatusCode::CREATED);
    // A merge patch cannot move it inside either.
    let patched = app
        .admin(Method::PATCH, "/v1/tenants/contoso/apps/ok")
        .header("content-type", "application/merge-patch+json")
        .json(&json!({"handler": {"url": "http://127.1:8080/"}}))
        .fetch()
        .await;
    assert_eq!(patched.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error_paths(&problem(patched).await), ["handler.url"]);
}

#[tokio::test]
async fn an_internal_notify_url_is_refused_at_its_field() {
    let app = strict_api().await;
    app.with_app_at("contoso", "orders", "https://handler.example.com/api")
        .await;
    let response = app
        .admin(Method::PUT, "/v1/tenants/contoso/apps/orders/functions/process")
        .json(&json!({
            "bindings": [{"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "orders"}],
            "circuitBreaker": {"notifyUrl": "http://169.254.169.254/latest/meta-data/"},
        }))
        .fetch()
        .await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body = problem(response).await;
    assert_eq!(error_paths(&body), ["circuitBreaker.notifyUrl"], "{body}");
}

#[tokio::test]
async fn a_name_resolving_to_loopback_is_refused_when_the_ingress_connects() {
    let handler = FloodingHandler::start(2, Framing::Declared).await.unwrap();
    // This machine's name resolves to 127.0.0.1 (/etc/hosts): its text passes, its address not.
    let name = shoal_testkit::loopback_host_name();
    let mut url = handler.url().clone();
    url.set_host(Some(&name)).unwrap();
    let app = strict_api().await;
    app.with_app_at("contoso", "orders", "https://handler.example.com/api")
        .await;
    let saved = app
        .put_app("contoso", "orders", &forwarding_app(url.as_str()))
        .await;
    assert_eq!(saved.status(), StatusCode::OK, "the name is saved");
    put_webhook_function(&app).await;
    let token = app.token_for("contoso", Role::FunctionInvoker);
    let response = app
        .request(
            Method::GET,
            "/webhooks/contoso/orders/token?resource=x",
            Some(&token),
        )
        .header("metadata", "true")
        .fetch()
        .await;
    assert_eq!(response.status(), StatusCode::BAD_GATEWAY);
    let body = response.text().await.unwrap();
    assert!(
        body.contains("egress policy") && body.contains("loopback"),
        "{body}"
    );
    assert!(
        !body.contains("127.0.0.1"),
        "the caller is not told the address: {body}"
    );
    assert_eq!(
        handler.connections(),
        0,
        "the handler never saw a connection"
    );
    let metrics = app.get("/metrics").await.text().await.unwrap();
    assert!(
        metrics.lines().any(
            |l| l.starts_with("shoal_egress_refusals_total{rule=\"loopback\"} ")
                && !l.ends_with(" 0")
        ),
        "{metrics}"
    );
}

#[tokio::test]
async fn the_api_s_own_address_is_refused_where_loopback_is_allowed() {
    let app = TestApp::spawn().await;
    assert_eq!(
        app.put_tenant("contoso").await.status(),
        StatusCode::CREATED
    );
    let own = url::Url::parse(&app.base).unwrap();
    let response = app
        .put_app(
            "contoso",
            "loop",
            &forwarding_app(&format!("http://127.0.0.1:{}/", own.port().unwrap())),
        )
        .await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body = problem(response).await;
    assert!(body.to_string().contains("Shoal's own listeners"), "{body}");
}

#[tokio::test]
async fn a_forwarded_answer_over_the_cap_is_a_502_and_the_api_stays_up() {
    let handler = FloodingHandler::start(256 * 1024 * 1024, Framing::Chunked)
        .await
        .unwrap();
    let app = TestApp::spawn_with(Options {
        outbound: OutboundConfig {
            egress_allow: AllowList::loopback(),
            max_response_bytes: 1024 * 1024,
        },
        ..Options::default()
    })
    .await;
    app.with_app_at("contoso", "orders", "https://handler.example.com/api")
        .await;
    let saved = app
        .put_app("contoso", "orders", &forwarding_app(handler.url().as_str()))
        .await;
    assert_eq!(saved.status(), StatusCode::OK);
    put_webhook_function(&app).await;
    let token = app.token_for("contoso", Role::FunctionInvoker);
    let response = app
        .request(Method::GET, "/webhooks/contoso/orders/token", Some(&token))
        .fetch()
        .await;
    assert_eq!(response.status(), StatusCode::BAD_GATEWAY);
    let body = response.text().await.unwrap();
    assert!(body.contains("more than 1048576 bytes"), "{body}");
    assert_eq!(app.get("/healthz").await.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_tenant_s_allowances_set_by_a_platform_admin_apply_to_that_tenant_only() {
    let handler = shoal_testkit::handler::RecordingHandler::start(
        shoal_testkit::handler::Behaviour::RespondHttp {
            status: 200,
            headers: vec![("content-type", "text/plain")],
            body: "reached",
        },
    )
    .await
    .unwrap();
    let app = strict_api().await;
    for tenant in ["contoso", "fabrikam"] {
        assert_eq!(app.put_tenant(tenant).await.status(), StatusCode::CREATED);
    }
    // Only a platform administrator writes tenants; a tenant's Owner cannot widen its own.
    let owner = app.token_for("contoso", Role::Owner);
    let by_owner = app
        .request(Method::PATCH, "/v1/tenants/contoso", Some(&owner))
        .header("content-type", "application/merge-patch+json")
        .json(&json!({"egressAllow": ["127.0.0.0/8"]}))
        .fetch()
        .await;
    assert!(
        matches!(
            by_owner.status(),
            StatusCode::FORBIDDEN | StatusCode::NOT_FOUND
        ),
        "{}",
        by_owner.status()
    );
    let bad = patch_tenant(
        &app,
        "contoso",
        json!({"egressAllow": ["127.0.0.0/8", "0.0.0.0/0"]}),
    )
    .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error_paths(&problem(bad).await), ["egressAllow[1]"]);
    let set: Value = patch_tenant(&app, "contoso", json!({"egressAllow": ["127.0.0.0/8"]}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(set["egressAllow"], json!(["127.0.0.0/8"]));

    let body = forwarding_app(handler.url().as_str());
    assert_eq!(
        app.put_app("contoso", "orders", &body).await.status(),
        StatusCode::CREATED
    );
    let refused = app.put_app("fabrikam", "orders", &body).await;
    assert_eq!(
        refused.status(),
        StatusCode::UNPROCESSABLE_ENTITY,
        "another tenant's allowances do not apply"
    );
    put_webhook_function(&app).await;
    let token = app.token_for("contoso", Role::FunctionInvoker);
    let response = app
        .request(Method::GET, "/webhooks/contoso/orders/token", Some(&token))
        .fetch()
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.text().await.unwrap(), "reached");
    assert_eq!(handler.count(), 1);

    // Taken back, the allowance stops the next call (the catalog hears of the change).
    let cleared = patch_tenant(&app, "contoso", json!({"egressAllow": []})).await;
    assert_eq!(cleared.status(), StatusCode::OK);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let status = app
            .request(Method::GET, "/webhooks/contoso/orders/token", Some(&token))
            .fetch()
            .await
            .status();
        if status == StatusCode::BAD_GATEWAY {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "still {status}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(handler.count(), 1, "nothing more reached the handler");
}
