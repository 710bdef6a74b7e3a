//! What admits webhook ingress requests: the invoked app's bucket (`webhooks.requestsPerSecond`),
//! not the management API's request throttle, which still admits the same principal's
//! management requests; and a principal's refused ingress requests (not allowed, or naming
//! nothing) counted per principal and tenant, so a flood of them is turned away before it
//! costs database work.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_api::identity::Role;
use shoal_testkit::handler::{Behaviour, RecordingHandler};

use crate::helpers::{Fetch, TestApp, problem};
use crate::throttling::throttled;

const WEBHOOK: &str = "/webhooks/contoso/orders/order";

/// `contoso/orders` calling `handler` with `webhooks`, and its HTTP-triggered function `order`.
async fn with_webhook(app: &TestApp, handler: &RecordingHandler, webhooks: Value) {
    assert_eq!(
        app.put_tenant("contoso").await.status(),
        StatusCode::CREATED
    );
    let body = json!({"handler": {"url": handler.url().as_str()}, "webhooks": webhooks});
    assert_eq!(
        app.put_app("contoso", "orders", &body).await.status(),
        StatusCode::CREATED
    );
    let response = app
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/apps/orders/functions/order",
        )
        .json(&json!({"bindings": [
            {"type": "httpTrigger", "direction": "in", "name": "req", "methods": ["post", "get"]},
            {"type": "http", "direction": "out", "name": "res"}
        ]}))
        .fetch()
        .await;
    assert!(response.status().is_success(), "{}", response.status());
}

/// Sends `method path` with `token` (a fresh `{i}` in the path each time) while the answer is
/// `expected`, until one is not (at most `limit`); returns how many were `expected` and the
/// 429 problem that ended them.
async fn until_throttled(
    app: &TestApp,
    token: &str,
    method: Method,
    path: &str,
    expected: StatusCode,
    limit: usize,
) -> (usize, Value) {
    for answered in 0..limit {
        let path = path.replace("{i}", &answered.to_string());
        let response = app
            .request(method.clone(), &path, Some(token))
            .fetch()
            .await;
        match response.status() {
            status if status == expected => continue,
            StatusCode::TOO_MANY_REQUESTS => {
                assert!(response.headers().contains_key("retry-after"));
                return (answered, problem(response).await);
            }
            other => panic!("{method} {path}: {other}"),
        }
    }
    panic!("{limit} of {method} {path} were all {expected}");
}

#[tokio::test]
async fn webhooks_are_admitted_by_the_apps_rate_and_management_requests_still_by_the_throttle() {
    let handler = RecordingHandler::start(Behaviour::Respond(json!({})))
        .await
        .unwrap();
    // The management throttle's burst for a principal (250), refilled slowly enough (one a
    // second) that the counts below are the burst's.
    let app = throttled(250, None).await;
    with_webhook(
        &app,
        &handler,
        json!({"requestsPerSecond": 1000, "burst": 2000}),
    )
    .await;
    let owner = app.token_for("contoso", Role::Owner);

    // More invocations than the management throttle's burst, as fast as they go: the app
    // allows 1000 a second, so all of them are delivered.
    for i in 0..260 {
        let response = app
            .request(Method::POST, WEBHOOK, Some(&owner))
            .fetch()
            .await;
        let status = response.status();
        assert_eq!(
            status,
            StatusCode::NO_CONTENT,
            "invocation {i}: {}",
            response.text().await.unwrap()
        );
    }
    assert_eq!(handler.count(), 260);

    // So are reads of an async invocation's status.
    let accepted = app
        .request(Method::POST, &format!("{WEBHOOK}?mode=async"), Some(&owner))
        .fetch()
        .await;
    assert_eq!(accepted.status(), StatusCode::ACCEPTED);
    let location = accepted.headers()["location"].to_str().unwrap().to_owned();
    let status_path = location.strip_prefix(&app.base).unwrap().to_owned();
    for i in 0..260 {
        let response = app
            .request(Method::GET, &status_path, Some(&owner))
            .fetch()
            .await;
        let status = response.status();
        assert_eq!(
            status,
            StatusCode::OK,
            "status read {i}: {}",
            response.text().await.unwrap()
        );
    }

    // The same principal's management requests are throttled as ever, and none of its
    // webhook requests was taken from their budget.
    let (admitted, refused) = until_throttled(
        &app,
        &owner,
        Method::GET,
        "/v1/tenants/contoso/apps/orders",
        StatusCode::OK,
        400,
    )
    .await;
    assert!((250..=260).contains(&admitted), "{admitted} admitted");
    let detail = refused["detail"].as_str().unwrap();
    assert!(
        detail.contains("this principal has used its 250 requests (1 a second)"),
        "{detail}"
    );
}

#[tokio::test]
async fn the_apps_rate_admits_invocations_and_status_reads_alike() {
    let handler = RecordingHandler::start(Behaviour::Respond(json!({})))
        .await
        .unwrap();
    let app = TestApp::spawn().await;
    with_webhook(&app, &handler, json!({"requestsPerSecond": 1, "burst": 3})).await;
    let invoker = app.token_for("contoso", Role::FunctionInvoker);

    let accepted = app
        .request(
            Method::POST,
            &format!("{WEBHOOK}?mode=async"),
            Some(&invoker),
        )
        .fetch()
        .await;
    assert_eq!(accepted.status(), StatusCode::ACCEPTED);
    let location = accepted.headers()["location"].to_str().unwrap().to_owned();
    let status_path = location.strip_prefix(&app.base).unwrap().to_owned();
    for _ in 0..2 {
        let read = app
            .request(Method::GET, &status_path, Some(&invoker))
            .fetch()
            .await;
        assert_eq!(read.status(), StatusCode::OK);
    }
    for (method, path) in [(Method::GET, status_path.as_str()), (Method::POST, WEBHOOK)] {
        let refused = app.request(method, path, Some(&invoker)).fetch().await;
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS, "{path}");
        let body = problem(refused).await;
        assert!(
            !body["detail"].as_str().unwrap().contains("principal"),
            "the app's rate, not a principal's: {body}"
        );
    }
}

#[tokio::test]
async fn refused_webhook_requests_are_counted_per_principal_and_tenant() {
    let handler = RecordingHandler::start(Behaviour::Respond(json!({})))
        .await
        .unwrap();
    // One token a second refills so little over this test that the counts are the bursts'.
    let app = throttled(20, Some(30)).await;
    with_webhook(&app, &handler, json!({})).await;

    // Another tenant's principal aiming at contoso's function: each is a 404 and an audit
    // entry, until its own budget of refusals is used up (not contoso's).
    let outsider = app.token_for("fabrikam", Role::Owner);
    let (hidden, refused) = until_throttled(
        &app,
        &outsider,
        Method::POST,
        WEBHOOK,
        StatusCode::NOT_FOUND,
        60,
    )
    .await;
    assert!((20..=22).contains(&hidden), "{hidden} answered 404");
    let detail = refused["detail"].as_str().unwrap();
    assert!(
        detail.contains("this principal has used its 20 refused webhook requests (1 a second)"),
        "{detail}"
    );

    // Contoso's invoker is untouched, and more than the management burst of 20 get through.
    let invoker = app.token_for("contoso", Role::FunctionInvoker);
    for i in 0..25 {
        let response = app
            .request(Method::POST, WEBHOOK, Some(&invoker))
            .fetch()
            .await;
        assert_eq!(response.status(), StatusCode::NO_CONTENT, "invocation {i}");
    }

    // A contoso principal that may not invoke uses its own budget…
    let reader = app.token_for("contoso", Role::Reader);
    let (forbidden, refused) = until_throttled(
        &app,
        &reader,
        Method::POST,
        WEBHOOK,
        StatusCode::FORBIDDEN,
        60,
    )
    .await;
    assert!((20..=22).contains(&forbidden), "{forbidden} answered 403");
    assert!(
        refused["detail"]
            .as_str()
            .unwrap()
            .contains("this principal has used its 20 refused webhook requests"),
        "{refused}"
    );

    // …and one that may invoke anything, naming apps that do not exist, the rest of the
    // tenant's.
    let owner = app.token_for("contoso", Role::Owner);
    let (unknown, refused) = until_throttled(
        &app,
        &owner,
        Method::POST,
        "/webhooks/contoso/nosuch{i}/order",
        StatusCode::NOT_FOUND,
        60,
    )
    .await;
    assert!(unknown < 20, "refused by the tenant first: {unknown}");
    assert!(
        refused["detail"]
            .as_str()
            .unwrap()
            .contains("tenant contoso has used its 30 refused webhook requests (1 a second)"),
        "{refused}"
    );

    // Every denial that was answered was audited, and no more were.
    let log = app
        .admin(Method::GET, "/v1/tenants/contoso/auditLog?limit=1000")
        .fetch_json()
        .await;
    let denied = log["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["outcome"] == "denied")
        .count();
    assert_eq!(denied, hidden + forbidden);
}
