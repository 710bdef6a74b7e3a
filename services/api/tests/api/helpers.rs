use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_api::identity::{Principal, Role};
use shoal_api::tokens::{DEFAULT_AUDIENCE, DEFAULT_ISSUER, TokenService};
use shoal_api::{ApiConfig, Application};
use shoal_domain::names::TenantName;
use shoal_store::assignments::AssignmentRecord;
use shoal_store::crypto::{Cipher, SecretKey};
use shoal_store::pool::{PoolConfig, connect_lazy, migrate};
use shoal_store::scale::DecisionRecord;
use shoal_testkit::ScratchDatabase;
use tokio_util::sync::CancellationToken;

pub use shoal_testkit::admin_url;

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub database_url: String,
    pub tokens: TokenService,
    pub admin_token: String,
    /// The server's `SHOAL_SECRET_KEY`, for tests that read or rotate its signing keys.
    pub secret_key: SecretKey,
    shutdown: CancellationToken,
    /// What the server was built with, so [`TestApp::restart`] can build another.
    config: ApiConfig,
    // Declared last: dropped after the server has been told to stop.
    _database: ScratchDatabase,
}

pub struct Options {
    /// Connect the app to its database through 127.0.0.1 on this port (a proxy) instead of
    /// straight to Postgres.
    pub through_port: Option<u16>,
    pub max_body_bytes: usize,
    /// Public URL, token lifetime, key reload interval.
    pub tokens: shoal_api::issuance::TokenConfig,
    /// OIDC issuers whose tokens identify registered users.
    pub external_issuers: shoal_api::external_issuers::ExternalIssuersConfig,
    /// The dashboard's files, environment name and one-click sign-in.
    pub dashboard: shoal_api::dashboard::DashboardConfig,
    /// The egress allowances and the answer cap: loopback is allowed, since the suites'
    /// handlers listen there (the API itself is strict by default).
    pub outbound: shoal_api::OutboundConfig,
    /// Request rates and the readiness deadline (the API's defaults unless a test sets them).
    pub limits: shoal_api::ApiLimits,
    /// As `shoal serve` does by default: the ingress's calls go to the invocation log.
    pub record_invocations_as: Option<String>,
    /// How long a request waits for a database connection (2 s unless a test sets it).
    pub acquire_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            through_port: None,
            max_body_bytes: shoal_api::DEFAULT_MAX_BODY_BYTES,
            tokens: Default::default(),
            external_issuers: Default::default(),
            dashboard: Default::default(),
            outbound: shoal_api::OutboundConfig {
                egress_allow: shoal_domain::egress::AllowList::parse(
                    shoal_testkit::EGRESS_ALLOW_LOOPBACK,
                )
                .unwrap(),
                ..Default::default()
            },
            limits: Default::default(),
            record_invocations_as: Some("api-test".into()),
            acquire_timeout: Duration::from_secs(2),
        }
    }
}

/// Creates a fresh, migrated database, dropped with the returned guard.
pub async fn fresh_database() -> ScratchDatabase {
    let database = ScratchDatabase::create(&admin_url(), "shoal_test")
        .await
        .expect("create test database");
    migrate(database.url())
        .await
        .expect("migrate test database");
    database
}

impl TestApp {
    pub async fn spawn() -> TestApp {
        Self::spawn_with(Options::default()).await
    }

    pub async fn spawn_with(options: Options) -> TestApp {
        let database = fresh_database().await;
        let database_url = database.url().to_string();
        let secret_key = SecretKey::generate();
        let config = ApiConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            database_url: match options.through_port {
                Some(port) => {
                    let mut url = url::Url::parse(&database_url).unwrap();
                    url.set_host(Some("127.0.0.1")).unwrap();
                    url.set_port(Some(port)).unwrap();
                    url.to_string().into()
                }
                None => database_url.clone().into(),
            },
            secret_key: secret_key.clone(),
            issuer: DEFAULT_ISSUER.into(),
            audience: DEFAULT_AUDIENCE.into(),
            max_body_bytes: options.max_body_bytes,
            identity: shoal_api::IdentityConfig {
                tokens: options.tokens.clone(),
                external_issuers: options.external_issuers.clone(),
            },
            pool: PoolConfig {
                max_connections: 4,
                acquire_timeout: options.acquire_timeout,
            },
            dashboard: options.dashboard.clone(),
            outbound: options.outbound.clone(),
            limits: options.limits,
            record_invocations_as: options.record_invocations_as.clone(),
        };
        let app = Application::build(config.clone())
            .await
            .expect("build application");
        let base = format!("http://127.0.0.1:{}", app.port());
        let shutdown = CancellationToken::new();
        tokio::spawn(app.run_until_stopped(shutdown.clone()));

        let pool = connect_lazy(&database_url, &PoolConfig::default()).unwrap();
        let tokens = TokenService::new(DEFAULT_ISSUER, DEFAULT_AUDIENCE);
        tokens
            .load_or_create(&pool, &Cipher::new(&secret_key))
            .await
            .unwrap();
        pool.close().await;
        let admin_token = tokens
            .issue(
                &Principal::PlatformAdmin {
                    subject: "admin".into(),
                },
                Duration::from_secs(600),
            )
            .unwrap();
        TestApp {
            base,
            client: reqwest::Client::new(),
            database_url,
            tokens,
            admin_token,
            secret_key,
            shutdown,
            config,
            _database: database,
        }
    }

    /// Stops the server and serves the same database with a new `Application` (same key,
    /// new port), as a redeployed API process would.
    pub async fn restart(&mut self) {
        self.shutdown.cancel();
        let app = Application::build(self.config.clone())
            .await
            .expect("rebuild application");
        self.base = format!("http://127.0.0.1:{}", app.port());
        self.shutdown = CancellationToken::new();
        tokio::spawn(app.run_until_stopped(self.shutdown.clone()));
    }

    pub fn token_for(&self, tenant: &str, role: Role) -> String {
        let principal = Principal::operator(
            &format!(
                "{tenant}-{}",
                role.as_str().to_lowercase().replace(' ', "-")
            ),
            &TenantName::parse(tenant).unwrap(),
            role,
        );
        self.tokens
            .issue(&principal, Duration::from_secs(600))
            .unwrap()
    }

    pub fn request(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
    ) -> reqwest::RequestBuilder {
        let builder = self.client.request(method, format!("{}{path}", self.base));
        match token {
            Some(token) => builder.bearer_auth(token),
            None => builder,
        }
    }

    /// A request as the platform admin.
    pub fn admin(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.request(method, path, Some(&self.admin_token))
    }

    /// A scheduler on the app's database with test timings (200 ms ticks, a 2 s lease, metrics
    /// read at most every 100 ms), until `stop`.
    pub fn start_scheduler(
        &self,
        stop: &tokio_util::sync::CancellationToken,
    ) -> shoal_scheduler::SchedulerHandle {
        self.scheduler(loopback_egress()).start(stop.clone())
    }

    /// [`TestApp::start_scheduler`] with a scale-in window of `window` instead of 5 minutes.
    pub fn start_scheduler_scaling_in_after(
        &self,
        window: std::time::Duration,
        stop: &tokio_util::sync::CancellationToken,
    ) -> shoal_scheduler::SchedulerHandle {
        self.scheduler_with(loopback_egress(), |c| c.scale_in_window = window)
            .start(stop.clone())
    }

    /// The scheduler [`TestApp::start_scheduler`] starts, connecting under `egress`.
    pub fn scheduler(&self, egress: shoal_egress::Egress) -> shoal_scheduler::Scheduler {
        self.scheduler_with(egress, |_| {})
    }

    fn scheduler_with(
        &self,
        egress: shoal_egress::Egress,
        configure: impl FnOnce(&mut shoal_scheduler::SchedulerConfig),
    ) -> shoal_scheduler::Scheduler {
        let mut config = shoal_scheduler::SchedulerConfig::new("s1");
        config.tick = std::time::Duration::from_millis(200);
        config.lease_ttl = std::time::Duration::from_secs(2);
        config.metrics.min_interval = std::time::Duration::from_millis(100);
        config.egress = egress;
        configure(&mut config);
        let pool = connect_lazy(&self.database_url, &PoolConfig::default()).unwrap();
        shoal_scheduler::Scheduler::new(config, pool, Cipher::new(&self.secret_key))
    }

    pub async fn put_tenant(&self, tenant: &str) -> reqwest::Response {
        self.admin(Method::PUT, &format!("/v1/tenants/{tenant}"))
            .json(&json!({"displayName": tenant}))
            .send()
            .await
            .unwrap()
    }

    pub async fn put_app(&self, tenant: &str, app: &str, body: &Value) -> reqwest::Response {
        self.admin(Method::PUT, &format!("/v1/tenants/{tenant}/apps/{app}"))
            .json(body)
            .send()
            .await
            .unwrap()
    }

    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.admin(Method::GET, path).send().await.unwrap()
    }

    /// A tenant with one app whose handler is at `url`.
    pub async fn with_app_at(&self, tenant: &str, app: &str, url: &str) {
        assert_eq!(self.put_tenant(tenant).await.status(), StatusCode::CREATED);
        let body = json!({"handler": {"url": url}});
        assert_eq!(
            self.put_app(tenant, app, &body).await.status(),
            StatusCode::CREATED
        );
    }

    /// A tenant with one app and its queue-triggered function, for tests of what the
    /// function did.
    pub async fn with_function(&self, tenant: &str, app: &str, function: &str) {
        self.with_app(tenant, app).await;
        let put = self
            .admin(
                Method::PUT,
                &format!("/v1/tenants/{tenant}/apps/{app}/functions/{function}"),
            )
            .json(&json!({"bindings": [{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": app}]}))
            .send()
            .await
            .unwrap();
        assert_eq!(put.status(), StatusCode::CREATED);
    }

    /// A read of contoso's `path` is a 404 for another tenant's Owner (it may not know it
    /// exists), and so is `missing`, a path naming what does not exist.
    pub async fn assert_hidden_from_other_tenants(&self, path: &str, missing: &str) {
        self.put_tenant("fabrikam").await;
        let outsider = self.token_for("fabrikam", Role::Owner);
        let hidden = self
            .request(Method::GET, path, Some(&outsider))
            .send()
            .await
            .unwrap();
        assert_eq!(hidden.status(), StatusCode::NOT_FOUND);
        assert_eq!(self.get(missing).await.status(), StatusCode::NOT_FOUND);
    }

    /// Each query string of `cases` on `path` is a 422 whose first error names the field.
    pub async fn assert_queries_refused(&self, path: &str, cases: &[(&str, &str)]) {
        for (query, field) in cases {
            let response = self.get(&format!("{path}?{query}")).await;
            assert_eq!(
                response.status(),
                StatusCode::UNPROCESSABLE_ENTITY,
                "{query}"
            );
            assert_eq!(
                problem(response).await["errors"][0]["path"],
                *field,
                "{query}"
            );
        }
    }

    /// A tenant with one app, for tests about something else.
    pub async fn with_app(&self, tenant: &str, app: &str) {
        assert_eq!(self.put_tenant(tenant).await.status(), StatusCode::CREATED);
        assert_eq!(
            self.put_app(tenant, app, &minimal_app()).await.status(),
            StatusCode::CREATED
        );
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// Sending a request in a test: any transport error fails the test.
pub trait Fetch {
    async fn fetch(self) -> reqwest::Response;
    /// The response body as JSON, whatever the status.
    async fn fetch_json(self) -> Value;
}

impl Fetch for reqwest::RequestBuilder {
    async fn fetch(self) -> reqwest::Response {
        self.send().await.expect("request sent")
    }

    async fn fetch_json(self) -> Value {
        self.fetch().await.json().await.expect("a JSON body")
    }
}

pub fn minimal_app() -> Value {
    json!({"handler": {"url": "http://127.0.0.1:7071/api"}})
}

/// Reads a problem+json body, checking the content type.
pub async fn problem(response: reqwest::Response) -> Value {
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string());
    assert_eq!(
        content_type.as_deref(),
        Some("application/problem+json"),
        "status {}",
        response.status()
    );
    response.json().await.unwrap()
}

/// The `errors[].path` values of a problem.
pub fn error_paths(problem: &Value) -> Vec<String> {
    problem["errors"]
        .as_array()
        .map(|errors| {
            errors
                .iter()
                .map(|e| e["path"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

pub fn etag_of(response: &reqwest::Response) -> String {
    response
        .headers()
        .get("etag")
        .expect("ETag header")
        .to_str()
        .unwrap()
        .to_string()
}

/// Scheduler state written as the leader writes it, for tests of the views that read it.
impl TestApp {
    pub async fn platform_tx(&self) -> (sqlx::PgPool, shoal_store::Tx) {
        let pool = connect_lazy(&self.database_url, &PoolConfig::default()).unwrap();
        let tx = shoal_store::begin_platform(&pool).await.unwrap();
        (pool, tx)
    }

    /// Takes (or renews) the scheduler lease and returns its epoch.
    pub async fn lead(&self) -> i64 {
        let (pool, mut tx) = self.platform_tx().await;
        let lease = shoal_store::leadership::acquire_or_renew(
            &mut tx,
            "test-scheduler",
            Duration::from_secs(60),
        )
        .await
        .unwrap()
        .expect("the lease is free");
        shoal_store::commit(tx).await.unwrap();
        pool.close().await;
        lease.epoch
    }

    /// Records one scale decision (its own transaction, as one tick records one per app).
    pub async fn record_decision(&self, decision: DecisionRecord) {
        let (pool, mut tx) = self.platform_tx().await;
        shoal_store::scale::record(&mut tx, &[decision])
            .await
            .unwrap();
        shoal_store::commit(tx).await.unwrap();
        pool.close().await;
    }

    /// Places `(tenant, app, instance, worker)` instances with `epoch`.
    pub async fn place(&self, epoch: i64, instances: &[(&str, &str, u32, &str)]) {
        let upserts: Vec<AssignmentRecord> = instances
            .iter()
            .map(|(tenant, app, instance, worker)| AssignmentRecord {
                tenant: (*tenant).into(),
                app: (*app).into(),
                instance: *instance,
                worker: (*worker).into(),
                epoch,
            })
            .collect();
        let (pool, mut tx) = self.platform_tx().await;
        shoal_store::assignments::apply(&mut tx, epoch, &upserts, &[])
            .await
            .unwrap();
        shoal_store::commit(tx).await.unwrap();
        pool.close().await;
    }
}

/// A decision for `tenant/app` taken in target mode, with one function's verdict as inputs.
pub fn decision(tenant: &str, app: &str, from: u32, to: u32, epoch: i64) -> DecisionRecord {
    DecisionRecord {
        tenant: tenant.into(),
        app: app.into(),
        at: chrono::Utc::now(),
        from,
        to,
        mode: "target".into(),
        reason: format!("ship queueLength {} / 16 per instance = {to}", to * 16),
        metrics: json!([{
            "function": "ship",
            "mode": "target",
            "metric": u64::from(to) * 16,
            "target": to,
            "perInstance": 16
        }]),
        epoch,
    }
}

/// The egress a worker in these suites gets: loopback allowed, where their handlers listen.
pub fn loopback_egress() -> shoal_egress::Egress {
    shoal_egress::Egress::new(shoal_domain::egress::EgressPolicy::new(
        shoal_domain::egress::AllowList::parse(shoal_testkit::EGRESS_ALLOW_LOOPBACK).unwrap(),
        Vec::new(),
    ))
}

/// Waits (up to 30 s) until the scale view at `path` wants `want` instances; that view.
pub async fn wait_for_desired(app: &TestApp, path: &str, want: u64) -> Value {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let scale: Value = app.admin(Method::GET, path).fetch_json().await;
        if scale["desiredInstances"] == want {
            return scale;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{want} desired instances: {scale}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// A `rabbitMQTrigger` named `order` consuming `queue` on the broker the setting `Rabbit` names.
pub fn rabbit_trigger(queue: &str) -> Value {
    json!({"type": "rabbitMQTrigger", "direction": "in", "name": "order", "queueName": queue,
        "connectionStringSetting": "Rabbit"})
}

/// The app `orders` of tenant `contoso` with `extra` beside its handler, and its function
/// `Take` with `trigger`.
pub async fn rabbit_app(extra: Value, trigger: Value) -> TestApp {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let mut body = json!({"handler": {"url": "http://127.0.0.1:9/api"}});
    if let (Value::Object(body), Value::Object(extra)) = (&mut body, extra) {
        body.extend(extra);
    }
    let put = app.put_app("contoso", "orders", &body).await;
    assert!(put.status().is_success(), "{}", put.status());
    let put = app
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/apps/orders/functions/Take",
        )
        .json(&json!({"bindings": [trigger]}))
        .fetch()
        .await;
    assert!(put.status().is_success(), "{}", put.status());
    app
}
