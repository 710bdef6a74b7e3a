//! The webhook ingress against real Postgres and a real handler: what the handler receives,
//! what the caller gets back, the 4xx/5xx answers, and async invocations through the
//! dispatcher, including across an API restart.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_api::identity::Role;
use shoal_domain::webhooks::WebhookSecret;
use shoal_testkit::handler::{Behaviour, RecordingHandler};
use tokio::time::Instant;

use crate::helpers::{Fetch, TestApp, error_paths, problem};

const WEBHOOK: &str = "/webhooks/contoso/orders/order";

/// `contoso/orders` calling `handler`, with the function `order` (an HTTP trigger `req` and
/// an HTTP output `res`), and a token that may invoke it.
async fn setup(handler_url: &str, app_extra: Value) -> (TestApp, String) {
    let app = TestApp::spawn().await;
    assert_eq!(
        app.put_tenant("contoso").await.status(),
        StatusCode::CREATED
    );
    let mut body = json!({"handler": {"url": handler_url, "timeoutSeconds": 5}});
    if let (Value::Object(body), Value::Object(extra)) = (&mut body, app_extra) {
        body.extend(extra);
    }
    assert_eq!(
        app.put_app("contoso", "orders", &body).await.status(),
        StatusCode::CREATED
    );
    put_function(
        &app,
        "order",
        json!([
            {"type": "httpTrigger", "direction": "in", "name": "req", "methods": ["post", "get"]},
            {"type": "http", "direction": "out", "name": "res"}
        ]),
    )
    .await;
    let token = app.token_for("contoso", Role::FunctionInvoker);
    (app, token)
}

async fn put_function(app: &TestApp, name: &str, bindings: Value) {
    let response = app
        .admin(
            Method::PUT,
            &format!("/v1/tenants/contoso/apps/orders/functions/{name}"),
        )
        .json(&json!({ "bindings": bindings }))
        .fetch()
        .await;
    assert!(response.status().is_success(), "{}", response.status());
}

async fn signing_secret(app: &TestApp) -> WebhookSecret {
    let body = app
        .admin(
            Method::POST,
            "/v1/tenants/contoso/apps/orders/signingSecret/list",
        )
        .fetch_json()
        .await;
    WebhookSecret::parse(body["secret"].as_str().unwrap()).unwrap()
}

fn invoke(app: &TestApp, token: &str, path: &str) -> reqwest::RequestBuilder {
    app.request(Method::POST, path, Some(token))
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn sync_delivery_hands_the_request_to_the_handler_and_returns_its_response() {
    let handler = RecordingHandler::start(Behaviour::Respond(json!({
        "Outputs": {"res": {"statusCode": 201, "headers": {"X-Order": "1005", "Content-Type": "application/json"}, "body": {"accepted": true}}},
        "Logs": ["order accepted"]
    })))
    .await
    .unwrap();
    let (app, token) = setup(handler.url().as_str(), json!({})).await;

    let response = invoke(&app, &token, &format!("{WEBHOOK}?id=7&tag=a&tag=b"))
        .header("content-type", "application/json")
        .header("x-request-id", "req-42")
        .header("x-custom", "yes")
        .body(r#"{"id":1005,"quantity":2}"#)
        .fetch()
        .await;

    assert_eq!(response.status(), StatusCode::CREATED);
    assert_eq!(response.headers()["x-order"], "1005");
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(response.headers()["x-request-id"], "req-42");
    let invocation_id = response.headers()["x-shoal-invocation-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({"accepted": true})
    );

    let seen = &handler.requests()[0];
    assert_eq!(seen.function, "order");
    let req = &seen.body["Data"]["req"];
    let port = app.base.rsplit(':').next().unwrap();
    assert_eq!(
        req["Url"],
        format!("http://127.0.0.1:{port}{WEBHOOK}?id=7&tag=a&tag=b")
    );
    assert_eq!(req["Method"], "POST");
    assert_eq!(req["Query"], json!({"id": "7", "tag": "a,b"}));
    assert_eq!(req["Headers"]["Content-Type"], json!(["application/json"]));
    assert_eq!(req["Headers"]["X-Custom"], json!(["yes"]));
    assert!(
        req["Headers"].get("Authorization").is_none(),
        "the caller's token never reaches the handler"
    );
    assert!(!String::from_utf8_lossy(&seen.raw).contains(&token));
    assert_eq!(req["Params"], json!({}));
    assert_eq!(req["Body"], r#"{"id":1005,"quantity":2}"#);
    assert_eq!(seen.body["Metadata"]["sys"]["MethodName"], "order");

    let secret = signing_secret(&app).await;
    let webhook_id = seen.header("webhook-id").unwrap();
    assert_eq!(webhook_id, invocation_id);
    assert_eq!(seen.header("x-shoal-invocation-id"), Some(webhook_id));
    assert_eq!(seen.header("x-request-id"), Some("req-42"));
    let timestamp: i64 = seen.header("webhook-timestamp").unwrap().parse().unwrap();
    assert!(secret.verify(
        webhook_id,
        timestamp,
        &seen.raw,
        seen.header("webhook-signature").unwrap()
    ));
}

#[tokio::test]
async fn a_dollar_return_output_is_the_response() {
    let handler = RecordingHandler::start(Behaviour::Respond(json!({
        "ReturnValue": {"statusCode": "404", "body": "no such order"}
    })))
    .await
    .unwrap();
    let (app, token) = setup(handler.url().as_str(), json!({})).await;
    put_function(
        &app,
        "lookup",
        json!([
            {"type": "httpTrigger", "direction": "in", "name": "request"},
            {"type": "http", "direction": "out", "name": "$return"}
        ]),
    )
    .await;

    let response = app
        .request(
            Method::GET,
            "/webhooks/contoso/orders/lookup?id=9",
            Some(&token),
        )
        .fetch()
        .await;

    // The function's own 404 passes through as it is, not as a Shoal problem.
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        response.headers()["content-type"],
        "text/plain; charset=utf-8"
    );
    assert_eq!(response.text().await.unwrap(), "no such order");
    let seen = &handler.requests()[0];
    assert_eq!(seen.function, "lookup");
    assert_eq!(seen.body["Data"]["request"]["Method"], "GET");
    assert!(seen.body["Data"]["request"].get("Body").is_none());
}

#[tokio::test]
async fn no_token_or_a_bad_one_is_401() {
    let handler = RecordingHandler::start(Behaviour::Respond(json!({})))
        .await
        .unwrap();
    let (app, _token) = setup(handler.url().as_str(), json!({})).await;
    for token in [None, Some("not-a-token")] {
        let response = app.request(Method::POST, WEBHOOK, token).fetch().await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        let challenge = response.headers()["www-authenticate"].to_str().unwrap();
        assert!(challenge.starts_with("Bearer"), "{challenge}");
        problem(response).await;
    }
    assert_eq!(handler.count(), 0);
}

#[tokio::test]
async fn queue_triggered_unknown_and_other_tenants_functions_are_404() {
    let handler = RecordingHandler::start(Behaviour::Respond(json!({})))
        .await
        .unwrap();
    let (app, token) = setup(handler.url().as_str(), json!({})).await;
    put_function(
        &app,
        "ship",
        json!([{"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "orders"}]),
    )
    .await;
    app.with_app("fabrikam", "orders").await;
    let fabrikam_owner = app.token_for("fabrikam", Role::Owner);

    for (path, token) in [
        ("/webhooks/contoso/orders/ship", &token),
        ("/webhooks/contoso/orders/nosuch", &token),
        ("/webhooks/contoso/nosuch/order", &token),
        ("/webhooks/nosuch/orders/order", &token),
        ("/webhooks/contoso/orders/not%20a%20name", &token),
        // A caller of another tenant learns nothing about contoso.
        (WEBHOOK, &fabrikam_owner),
    ] {
        let response = invoke(&app, token, path).fetch().await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
        let body = problem(response).await;
        assert_eq!(body["detail"], "no such resource", "{path}");
    }
    assert_eq!(handler.count(), 0);
}

#[tokio::test]
async fn methods_the_trigger_does_not_allow_are_405() {
    let handler = RecordingHandler::start(Behaviour::Respond(json!({})))
        .await
        .unwrap();
    let (app, token) = setup(handler.url().as_str(), json!({})).await;
    let response = app
        .request(Method::DELETE, WEBHOOK, Some(&token))
        .fetch()
        .await;
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(response.headers()["allow"], "POST, GET");
    problem(response).await;
}

#[tokio::test]
async fn oversized_bodies_are_413_by_content_length_and_while_streaming() {
    let handler = RecordingHandler::start(Behaviour::Respond(json!({})))
        .await
        .unwrap();
    let (app, token) = setup(
        handler.url().as_str(),
        json!({"webhooks": {"maxRequestBodyBytes": 1024}}),
    )
    .await;

    let exact = invoke(&app, &token, WEBHOOK)
        .body(vec![b'a'; 1024])
        .fetch()
        .await;
    assert_eq!(exact.status(), StatusCode::NO_CONTENT, "at the limit");

    let declared = invoke(&app, &token, WEBHOOK)
        .body(vec![b'a'; 1025])
        .fetch()
        .await;
    assert_eq!(declared.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let body = problem(declared).await;
    assert!(body["detail"].as_str().unwrap().contains("1024"), "{body}");

    // Chunked: no Content-Length to check up front.
    let (status, body) = send_chunked(&app, &token, WEBHOOK, 8, 512).await;
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("application/problem+json"), "{body}");
    let (status, _) = send_chunked(&app, &token, WEBHOOK, 2, 512).await;
    assert_eq!(status, 204, "a chunked body within the limit");
    assert_eq!(handler.count(), 2, "only bodies within the limit arrived");
}

/// A `Transfer-Encoding: chunked` POST of `chunks` chunks of `size` bytes over a raw
/// connection; the status and the raw response. Writing stops early if the server answers
/// and closes first.
async fn send_chunked(
    app: &TestApp,
    token: &str,
    path: &str,
    chunks: usize,
    size: usize,
) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = app.base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    let _ = stream.write_all(head.as_bytes()).await;
    for _ in 0..chunks {
        let chunk = format!("{size:x}\r\n{}\r\n", "b".repeat(size));
        if stream.write_all(chunk.as_bytes()).await.is_err() {
            break;
        }
    }
    let _ = stream.write_all(b"0\r\n\r\n").await;
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response).await;
    let response = String::from_utf8_lossy(&response).into_owned();
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, response)
}

#[tokio::test]
async fn a_burst_beyond_the_apps_rate_is_429_with_retry_after() {
    let handler = RecordingHandler::start(Behaviour::Respond(json!({})))
        .await
        .unwrap();
    let (app, token) = setup(
        handler.url().as_str(),
        json!({"webhooks": {"requestsPerSecond": 1, "burst": 3}}),
    )
    .await;
    for i in 0..3 {
        let response = invoke(&app, &token, WEBHOOK).fetch().await;
        assert_eq!(response.status(), StatusCode::NO_CONTENT, "request {i}");
    }
    let refused = invoke(&app, &token, WEBHOOK).fetch().await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = refused.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=2).contains(&retry_after), "{retry_after}");
    problem(refused).await;
    assert_eq!(handler.count(), 3);
}

#[tokio::test]
async fn a_handler_that_is_down_or_answers_garbage_is_502() {
    let (app, token) = setup(
        &format!("http://127.0.0.1:{}/api", closed_port()),
        json!({}),
    )
    .await;
    let response = invoke(&app, &token, WEBHOOK).body("{}").fetch().await;
    assert_eq!(response.status(), StatusCode::BAD_GATEWAY);
    let body = problem(response).await;
    assert_eq!(
        body["detail"],
        "the function's handler could not be reached"
    );
    assert!(
        !body.to_string().contains("127.0.0.1"),
        "no address: {body}"
    );

    let bad = RecordingHandler::start(Behaviour::Respond(
        json!({"Outputs": {"res": {"statusCode": 700}}}),
    ))
    .await
    .unwrap();
    let repointed = app
        .put_app(
            "contoso",
            "orders",
            &json!({"handler": {"url": bad.url().as_str()}}),
        )
        .await;
    assert_eq!(repointed.status(), StatusCode::OK);
    // The catalog hears of the change within moments.
    let body = eventually(|| async {
        let response = invoke(&app, &token, WEBHOOK).fetch().await;
        (response.status() == StatusCode::BAD_GATEWAY && bad.count() > 0).then_some(response)
    })
    .await;
    let body = problem(body).await;
    assert_eq!(error_paths(&body), ["Outputs.res.statusCode"]);
}

#[tokio::test]
async fn config_changes_reach_the_ingress_stopped_apps_are_503_and_a_new_secret_signs() {
    let handler = RecordingHandler::start(Behaviour::Respond(json!({})))
        .await
        .unwrap();
    let (app, token) = setup(handler.url().as_str(), json!({})).await;
    assert_eq!(
        invoke(&app, &token, WEBHOOK).fetch().await.status(),
        StatusCode::NO_CONTENT
    );

    let regenerated = app
        .admin(
            Method::POST,
            "/v1/tenants/contoso/apps/orders/signingSecret/regenerate",
        )
        .fetch_json()
        .await;
    let secret = WebhookSecret::parse(regenerated["secret"].as_str().unwrap()).unwrap();
    eventually(|| async {
        let sent = handler.count();
        invoke(&app, &token, WEBHOOK).fetch().await;
        let seen = handler.requests().into_iter().nth(sent)?;
        let timestamp = seen.header("webhook-timestamp")?.parse().ok()?;
        secret
            .verify(
                seen.header("webhook-id")?,
                timestamp,
                &seen.raw,
                seen.header("webhook-signature")?,
            )
            .then_some(())
    })
    .await;

    let stopped = app
        .admin(Method::PATCH, "/v1/tenants/contoso/apps/orders")
        .header("content-type", "application/merge-patch+json")
        .body(r#"{"state": "Stopped"}"#)
        .fetch()
        .await;
    assert_eq!(stopped.status(), StatusCode::OK);
    let response = eventually(|| async {
        let response = invoke(&app, &token, WEBHOOK).fetch().await;
        (response.status() == StatusCode::SERVICE_UNAVAILABLE).then_some(response)
    })
    .await;
    let body = problem(response).await;
    assert!(
        body["type"].as_str().unwrap().ends_with("/app-stopped"),
        "{body}"
    );
}

#[tokio::test]
async fn async_invocations_are_queued_then_succeed_with_the_response_stored() {
    let handler = RecordingHandler::start(Behaviour::Respond(json!({
        "Outputs": {"res": {"statusCode": 200, "headers": {"X-Done": "yes"}, "body": {"total": 42}}}
    })))
    .await
    .unwrap();
    let (app, token) = setup(handler.url().as_str(), json!({})).await;

    let accepted = invoke(&app, &token, &format!("{WEBHOOK}?mode=async&id=7"))
        .body(r#"{"id":7}"#)
        .fetch()
        .await;
    assert_eq!(accepted.status(), StatusCode::ACCEPTED);
    let location = accepted.headers()["location"].to_str().unwrap().to_owned();
    let body: Value = accepted.json().await.unwrap();
    let id = body["id"].as_str().unwrap().to_owned();
    assert_eq!(body["statusQueryGetUri"], location);
    assert_eq!(location, format!("{}{WEBHOOK}/invocations/{id}", app.base));

    let done = wait_for_status(&app, &token, &location, "succeeded").await;
    assert_eq!(done["id"], id);
    assert_eq!(done["attempts"], 1);
    assert!(done["completedAt"].is_string());
    assert_eq!(done["error"], Value::Null);
    assert_eq!(
        done["response"],
        json!({"statusCode": 200, "headers": {"X-Done": "yes", "Content-Type": "application/json; charset=utf-8"}, "body": {"total": 42}})
    );
    let seen = &handler.requests()[0];
    assert_eq!(seen.header("webhook-id"), Some(id.as_str()));
    assert_eq!(seen.body["Data"]["req"]["Query"], json!({"id": "7"}));
    assert!(
        !seen.body["Data"]["req"]["Url"]
            .as_str()
            .unwrap()
            .contains("mode=async"),
        "Shoal's own parameter is not passed on"
    );

    // Only callers who may invoke the function may read it.
    let other = app.token_for("fabrikam", Role::Owner);
    let hidden = app
        .request(Method::GET, &path_of(&app, &location), Some(&other))
        .fetch()
        .await;
    assert_eq!(hidden.status(), StatusCode::NOT_FOUND);
    let unknown = app
        .request(
            Method::GET,
            &format!("{WEBHOOK}/invocations/{}", uuid::Uuid::now_v7()),
            Some(&token),
        )
        .fetch()
        .await;
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_failing_async_invocation_is_retried_then_failed() {
    let handler = RecordingHandler::start(Behaviour::Status(500))
        .await
        .unwrap();
    let (app, token) = setup(handler.url().as_str(), json!({})).await;
    let accepted = invoke(&app, &token, &format!("{WEBHOOK}?mode=async"))
        .fetch()
        .await;
    assert_eq!(accepted.status(), StatusCode::ACCEPTED);
    let location = accepted.headers()["location"].to_str().unwrap().to_owned();

    // Five attempts, 1 + 2 + 4 + 8 seconds apart.
    let failed = wait_for_status(&app, &token, &location, "failed").await;
    assert_eq!(failed["attempts"], 5);
    assert_eq!(failed["response"], Value::Null);
    assert_eq!(
        failed["error"],
        "the function's handler answered 500 Internal Server Error"
    );
    let requests = handler.requests();
    assert_eq!(requests.len(), 5);
    let ids: Vec<_> = requests.iter().map(|r| r.header("webhook-id")).collect();
    assert!(
        ids.windows(2).all(|w| w[0] == w[1]),
        "one webhook-id: {ids:?}"
    );
    let gaps: Vec<Duration> = requests.windows(2).map(|w| w[1].at - w[0].at).collect();
    for (gap, least) in gaps.iter().zip([1, 2, 4, 8]) {
        assert!(
            *gap >= Duration::from_millis(least * 1000 - 100),
            "{gaps:?}"
        );
    }
}

#[tokio::test]
async fn a_queued_invocation_survives_an_api_restart() {
    let handler = RecordingHandler::start(Behaviour::Respond(
        json!({"Outputs": {"res": {"body": "late but done"}}}),
    ))
    .await
    .unwrap();
    handler.script(vec![Behaviour::Status(503)]);
    let (mut app, token) = setup(handler.url().as_str(), json!({})).await;
    let accepted = invoke(&app, &token, &format!("{WEBHOOK}?mode=async"))
        .fetch()
        .await;
    assert_eq!(accepted.status(), StatusCode::ACCEPTED);
    let location = accepted.headers()["location"].to_str().unwrap().to_owned();
    let path = path_of(&app, &location);
    handler.wait_for(1, Duration::from_secs(10)).await.unwrap();

    // The first attempt failed; its retry is queued in Postgres when the process goes away.
    app.restart().await;

    let done = wait_for_status(&app, &token, &format!("{}{path}", app.base), "succeeded").await;
    assert_eq!(done["attempts"], 2);
    assert_eq!(done["response"]["body"], "late but done");
    let requests = handler.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].header("webhook-id"),
        requests[1].header("webhook-id")
    );
}

fn path_of(app: &TestApp, url: &str) -> String {
    url.strip_prefix(&app.base).unwrap().to_owned()
}

async fn wait_for_status(app: &TestApp, token: &str, url: &str, status: &str) -> Value {
    let path = path_of(app, url);
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let body = app
            .request(Method::GET, &path, Some(token))
            .fetch_json()
            .await;
        if body["status"] == status {
            return body;
        }
        assert!(
            Instant::now() < deadline,
            "still {} after 40 s: {body}",
            body["status"]
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Retries `probe` until it yields something (configuration changes reach the catalog
/// through a notification, within moments).
async fn eventually<T, F, Fut>(mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(found) = probe().await {
            return found;
        }
        assert!(Instant::now() < deadline, "not within 10 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn webhook_limits_are_validated_with_their_paths_and_read_back_with_defaults() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    let read = app.get("/v1/tenants/contoso/apps/orders").await;
    let body: Value = read.json().await.unwrap();
    assert_eq!(
        body["webhooks"],
        json!({"maxRequestBodyBytes": 4194304, "requestsPerSecond": 100, "burst": 200})
    );

    let bad = app
        .put_app(
            "contoso",
            "orders",
            &json!({"handler": {"url": "http://127.0.0.1:7071"},
                    "webhooks": {"maxRequestBodyBytes": 104857601, "requestsPerSecond": 0, "burst": 0, "rps": 1}}),
        )
        .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error_paths(&problem(bad).await), ["webhooks.rps"]);
    let bad = app
        .put_app(
            "contoso",
            "orders",
            &json!({"handler": {"url": "http://127.0.0.1:7071"},
                    "webhooks": {"maxRequestBodyBytes": 104857601, "requestsPerSecond": 0, "burst": 0}}),
        )
        .await;
    assert_eq!(
        error_paths(&problem(bad).await),
        [
            "webhooks.maxRequestBodyBytes",
            "webhooks.requestsPerSecond",
            "webhooks.burst"
        ]
    );

    let patched = app
        .admin(Method::PATCH, "/v1/tenants/contoso/apps/orders")
        .header("content-type", "application/merge-patch+json")
        .body(r#"{"webhooks": {"requestsPerSecond": 10}}"#)
        .fetch_json()
        .await;
    assert_eq!(
        patched["webhooks"],
        json!({"maxRequestBodyBytes": 4194304, "requestsPerSecond": 10, "burst": 20})
    );
}
