//! Postgres going away must answer 503 with Retry-After (never a 500), and the API recovers
//! by itself when it comes back. The database is cut by a TCP proxy between the API and
//! Postgres, which refuses new connections and resets the open ones.

use std::sync::Arc;

use reqwest::StatusCode;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use crate::helpers::*;

struct Proxy {
    port: u16,
    upstream: String,
    running: Arc<Mutex<Option<CancellationToken>>>,
}

impl Proxy {
    /// A proxy in front of the Postgres server `DATABASE_URL` names.
    async fn to_postgres() -> Proxy {
        let admin = url::Url::parse(&admin_url()).unwrap();
        let host = admin.host_str().unwrap_or("127.0.0.1");
        Proxy::start(format!("{host}:{}", admin.port().unwrap_or(5432))).await
    }

    async fn start(upstream: String) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let proxy = Proxy {
            port,
            upstream,
            running: Arc::new(Mutex::new(None)),
        };
        proxy.serve(listener).await;
        proxy
    }

    async fn serve(&self, listener: TcpListener) {
        let stop = CancellationToken::new();
        *self.running.lock().await = Some(stop.clone());
        let upstream = self.upstream.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = stop.cancelled() => return,
                    accepted = listener.accept() => {
                        let Ok((mut client, _)) = accepted else { return };
                        let upstream = upstream.clone();
                        let stop = stop.clone();
                        tokio::spawn(async move {
                            let Ok(mut server) = TcpStream::connect(&upstream).await else { return };
                            tokio::select! {
                                _ = stop.cancelled() => {}
                                _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                            }
                        });
                    }
                }
            }
        });
    }

    /// Refuses new connections and drops the open ones.
    async fn cut(&self) {
        if let Some(stop) = self.running.lock().await.take() {
            stop.cancel();
        }
    }

    async fn restore(&self) {
        let listener = TcpListener::bind(("127.0.0.1", self.port)).await.unwrap();
        self.serve(listener).await;
    }
}

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
    let proxy = Proxy::to_postgres().await;
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

    proxy.cut().await;
    for path in ["/v1/tenants/contoso", "/readyz"] {
        let response = app.get(path).await;
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE, "{path}");
        assert!(response.headers().contains_key("retry-after"), "{path}");
        assert_eq!(problem(response).await["status"], 503);
    }
    let write = app.put_app("contoso", "orders", &minimal_app()).await;
    assert_eq!(write.status(), StatusCode::SERVICE_UNAVAILABLE);

    proxy.restore().await;
    wait_until_ready(&app).await;
    assert_eq!(
        app.get("/v1/tenants/contoso").await.status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn api_started_while_postgres_is_down_becomes_ready_by_itself() {
    let proxy = Proxy::to_postgres().await;
    proxy.cut().await;

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

    proxy.restore().await;
    wait_until_ready(&app).await;
    assert_eq!(
        app.put_tenant("contoso").await.status(),
        StatusCode::CREATED
    );
}
