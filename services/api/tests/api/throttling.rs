//! Management API requests per principal and per tenant: a caller over its budget gets 429
//! with `Retry-After` and a detail naming the budget; other tenants, and the platform's
//! administrators, are untouched.

use reqwest::{Method, StatusCode};
use shoal_api::ApiLimits;
use shoal_api::identity::Role;
use shoal_api::throttle::{Rate, RequestRates};

use crate::helpers::*;

/// An API whose management throttle admits bursts of `principal` requests per principal and
/// `tenant` per tenant (the default without), refilled at one a second: so little over a test
/// that the counts are the bursts'.
pub(crate) async fn throttled(principal: u32, tenant: Option<u32>) -> TestApp {
    let defaults = RequestRates::default();
    TestApp::spawn_with(Options {
        limits: ApiLimits {
            rates: RequestRates {
                principal: Rate {
                    per_second: 1,
                    burst: principal,
                },
                tenant: tenant.map_or(defaults.tenant, |burst| Rate {
                    per_second: 1,
                    burst,
                }),
            },
            ..ApiLimits::default()
        },
        ..Options::default()
    })
    .await
}

/// Requests `path` with `token` until one is refused (at most `limit`); returns how many were
/// admitted and the refusal's problem, after checking its `Retry-After` and that its answer was
/// held (the default `--throttle-hold` of 1 s, the whole of a 1-a-second bucket's wait).
async fn until_refused(
    app: &TestApp,
    token: &str,
    path: &str,
    limit: usize,
) -> (usize, serde_json::Value) {
    for admitted in 0..limit {
        let sent = std::time::Instant::now();
        let response = app
            .request(Method::GET, path, Some(token))
            .send()
            .await
            .unwrap();
        match response.status() {
            StatusCode::OK => continue,
            StatusCode::TOO_MANY_REQUESTS => {
                let retry_after: u64 = response.headers()["retry-after"]
                    .to_str()
                    .unwrap()
                    .parse()
                    .unwrap();
                assert!(retry_after >= 1, "Retry-After: {retry_after}");
                let held = sent.elapsed();
                assert!(held >= std::time::Duration::from_secs(1), "held {held:?}");
                return (admitted, problem(response).await);
            }
            other => panic!("{path}: {other}"),
        }
    }
    panic!("{limit} requests to {path} were all admitted");
}

#[tokio::test]
async fn a_tenant_over_its_rate_gets_429_while_other_tenants_do_not() {
    // One token a second refills so little over this test that the counts are the bursts'.
    let app = throttled(20, Some(30)).await;
    app.with_app("tenant-a", "orders").await;
    app.with_app("tenant-b", "billing").await;
    let b_app = "/v1/tenants/tenant-b/apps/billing";

    // One principal of B uses its own budget…
    let b_owner = app.token_for("tenant-b", Role::Owner);
    let (admitted, refused) = until_refused(&app, &b_owner, b_app, 40).await;
    assert!((20..=22).contains(&admitted), "{admitted} admitted");
    assert_eq!(refused["status"], 429);
    assert_eq!(
        refused["type"],
        "https://shoal.dev/problems/too-many-requests"
    );
    let detail = refused["detail"].as_str().unwrap();
    assert!(
        detail.contains("this principal has used its 20 requests (1 a second)"),
        "{detail}"
    );

    // …and another of B the rest of the tenant's.
    let b_reader = app.token_for("tenant-b", Role::Reader);
    let (admitted, refused) = until_refused(&app, &b_reader, b_app, 40).await;
    assert!(
        admitted < 20,
        "refused by the tenant before its own budget: {admitted}"
    );
    let detail = refused["detail"].as_str().unwrap();
    assert!(
        detail.contains("tenant tenant-b has used its 30 requests (1 a second)"),
        "{detail}"
    );

    // Tenant A's principals are admitted as before, and so is the platform administrator.
    let a_reader = app.token_for("tenant-a", Role::Reader);
    for _ in 0..15 {
        let response = app
            .request(
                Method::GET,
                "/v1/tenants/tenant-a/apps/orders",
                Some(&a_reader),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
    for _ in 0..40 {
        assert_eq!(app.get(b_app).await.status(), StatusCode::OK);
    }
}
