//! Postgres going away must answer 503 with Retry-After (never a 500), and the API recovers
//! by itself when it comes back. The database is cut by a TCP proxy between the API and
//! Postgres, which refuses new connections and resets the open ones.

use reqwest::StatusCode;
use shoal_testkit::proxy::Proxy;

use crate::helpers::*;

/// Polls `/readyz` until it answers 200, failing the test after 20 s.
async fn wait_until_ready(app: &TestApp) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while app.get("/readyz").await.status() != StatusCode::OK {
        assert!(
            std::time::Instant::now() < deadline,
            "the API did not become ready after Postgres came back"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn database_outage_is_503_with_retry_after_and_recovers() {
    let proxy = Proxy::to_postgres().await.unwrap();
    let app = TestApp::spawn_with(Options {
        through_port: Some(proxy.port),
        ..Options::default()
    })
    .await;
    assert_eq!(
        app.put_tenant("contoso").await.status(),
        StatusCode::CREATED
    );
    assert_eq!(
        app.get("/v1/tenants/contoso").await.status(),
        StatusCode::OK
    );

    proxy.cut();
    for path in ["/v1/tenants/contoso", "/readyz"] {
        let response = app.get(path).await;
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE, "{path}");
        assert!(response.headers().contains_key("retry-after"), "{path}");
        assert_eq!(problem(response).await["status"], 503);
    }
    let write = app.put_app("contoso", "orders", &minimal_app()).await;
    assert_eq!(write.status(), StatusCode::SERVICE_UNAVAILABLE);

    proxy.restore().await.unwrap();
    wait_until_ready(&app).await;
    assert_eq!(
        app.get("/v1/tenants/contoso").await.status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn api_started_while_postgres_is_down_becomes_ready_by_itself() {
    let proxy = Proxy::to_postgres().await.unwrap();
    proxy.cut();

    let app = TestApp::spawn_with(Options {
        through_port: Some(proxy.port),
        ..Options::default()
    })
    .await;
    let ready = app.get("/readyz").await;
    assert_eq!(ready.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(ready.headers().contains_key("retry-after"));
    let request = app.get("/v1/tenants").await;
    assert_eq!(
        request.status(),
        StatusCode::SERVICE_UNAVAILABLE,
        "an outage, not a bad token"
    );

    proxy.restore().await.unwrap();
    wait_until_ready(&app).await;
    assert_eq!(
        app.put_tenant("contoso").await.status(),
        StatusCode::CREATED
    );
}

#[tokio::test]
async fn readiness_answers_within_its_deadline_while_the_database_stalls() {
    let proxy = Proxy::to_postgres().await.unwrap();
    // Requests would wait 30 s for a connection: only the probe's own deadline (1 s by
    // default) can make it answer sooner.
    let app = TestApp::spawn_with(Options {
        through_port: Some(proxy.port),
        acquire_timeout: std::time::Duration::from_secs(30),
        ..Options::default()
    })
    .await;
    wait_until_ready(&app).await;

    proxy.stall();
    let started = std::time::Instant::now();
    let ready = app.get("/readyz").await;
    let took = started.elapsed();
    assert_eq!(ready.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(ready.headers().contains_key("retry-after"));
    // Far from both figures, so a loaded machine cannot flip it: the deadline, not the pool.
    assert!(
        took < std::time::Duration::from_secs(15),
        "/readyz waited {took:?} on a stalled database"
    );

    proxy.restore().await.unwrap();
    wait_until_ready(&app).await;
}
