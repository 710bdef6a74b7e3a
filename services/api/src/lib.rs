//! Shoal's HTTP API: the management REST API under `/v1`, the OpenAPI document and its
//! browsable reference, health and readiness probes, Prometheus metrics, and Shoal as a token
//! issuer (OIDC discovery, the JWK set, the client credentials token endpoint and apps'
//! managed-identity endpoints).
//!
//! [`Application::build`] binds the listener (port 0 in tests) and [`Application::port`]
//! tells which port it got; [`Application::run_until_stopped`] serves until the cancellation
//! token fires, then finishes in-flight requests.

pub mod access;
pub mod auth;
pub mod dashboard;
pub mod error;
pub mod expiring;
pub mod external_issuers;
pub mod extract;
pub mod identity;
mod identity_headers;
pub mod issuance;
pub mod metrics;
mod notifications;
mod openapi;
mod problem;
mod request_spans;
pub mod routes;
pub mod state;
pub mod throttle;
pub mod tokens;
pub mod webhooks;

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::HeaderName;
use axum::routing::{get, post};
use shoal_domain::egress::{AllowList, EgressPolicy};
use shoal_egress::Egress;
use shoal_invoker::Invoker;
use shoal_store::StoreError;
use shoal_store::crypto::{Cipher, SecretKey};
use shoal_store::pool::{DatabaseUrl, PoolConfig, connect_lazy};
use tokio_util::sync::CancellationToken;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::CompressionLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_swagger_ui::SwaggerUi;

use crate::state::{AppState, StateParts};
use crate::tokens::TokenService;

/// Default request body limit: app bodies with many settings fit comfortably.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;

#[derive(Debug, Clone)]
pub struct ApiConfig {
    pub listen: SocketAddr,
    /// `Debug` shows it without its password.
    pub database_url: DatabaseUrl,
    pub secret_key: SecretKey,
    pub issuer: String,
    pub audience: String,
    pub max_body_bytes: usize,
    pub pool: PoolConfig,
    /// The token service and external issuers.
    pub identity: IdentityConfig,
    /// The dashboard's files and what it shows about this deployment.
    pub dashboard: dashboard::DashboardConfig,
    /// Where the API may connect on a tenant's behalf, and how much of an answer it reads.
    pub outbound: OutboundConfig,
    /// How many requests principals and tenants may make, the tenants' default quotas, and how
    /// long `/readyz` may take.
    pub limits: ApiLimits,
    /// The name the webhook ingress's calls carry in the invocation log (as a worker's name
    /// marks its deliveries), or none to record nothing (`--invocation-telemetry off`).
    pub record_invocations_as: Option<String>,
}

/// The API's protections of itself and of tenants from each other.
#[derive(Debug, Clone, Copy)]
pub struct ApiLimits {
    /// The quotas of tenants whose own limits do not say (`--tenant-defaults`).
    pub tenant_defaults: shoal_domain::quotas::Quotas,
    /// Management API requests per principal and per tenant (`--principal-rate`,
    /// `--tenant-rate`).
    pub rates: throttle::RequestRates,
    /// The longest a throttled request's 429 is held before it is answered
    /// (`--throttle-hold`; see `throttle::RequestThrottle`).
    pub throttle_hold: Duration,
    /// The longest `/readyz` takes to answer (`--ready-timeout`): a probe that waits on a
    /// stalled database is as good as none, so past it the answer is 503.
    pub ready_timeout: Duration,
}

/// `/readyz`'s default deadline, Kubernetes' default probe timeout: a probe that has not
/// answered by then counts as failed anyway.
pub const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(1);

impl Default for ApiLimits {
    fn default() -> Self {
        ApiLimits {
            tenant_defaults: shoal_domain::quotas::Quotas::default(),
            rates: throttle::RequestRates::default(),
            throttle_hold: throttle::DEFAULT_HOLD,
            ready_timeout: DEFAULT_READY_TIMEOUT,
        }
    }
}

/// The egress policy's allowances beyond the public internet (`--egress-allow`) and the cap on
/// a handler's answer (`--max-response-bytes`). The default is strict, with a 16 MiB cap.
#[derive(Debug, Clone)]
pub struct OutboundConfig {
    pub egress_allow: AllowList,
    pub max_response_bytes: usize,
}

impl Default for OutboundConfig {
    fn default() -> OutboundConfig {
        OutboundConfig {
            egress_allow: AllowList::default(),
            max_response_bytes: shoal_invoker::DEFAULT_MAX_RESPONSE_BYTES,
        }
    }
}

/// How Shoal issues and trusts tokens beyond its signing keys.
#[derive(Debug, Clone, Default)]
pub struct IdentityConfig {
    /// Shoal's own token endpoints: public URL, token lifetime, key reloads.
    pub tokens: issuance::TokenConfig,
    /// OIDC issuers whose tokens identify registered users (`--external-issuer`).
    pub external_issuers: external_issuers::ExternalIssuersConfig,
}

fn api_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .merge(routes::tenants::router())
        .merge(routes::apps::router())
        .merge(routes::settings::router())
        .merge(routes::signing_secret::router())
        .merge(routes::workers::router())
        .merge(routes::diagnostics::router())
        .merge(routes::scale::router())
        .merge(routes::scale_history::router())
        .merge(routes::functions::router())
        .merge(routes::breakers::router())
        .merge(routes::poison::router())
        .merge(routes::send::router())
        .merge(routes::invocations::router())
        .merge(routes::invocation_log::router())
        .merge(routes::webhooks::router())
        .merge(routes::identity_endpoint::router())
        .merge(routes::signing_keys::router())
        .merge(routes::identities::router())
        .merge(routes::service_principals::router())
        .merge(routes::users::router())
        .merge(routes::roles::router())
        .merge(routes::audit::router())
        .merge(routes::caller::router())
        .merge(routes::binding_types::router())
        .merge(routes::access_check::router())
}

/// The OpenAPI document (what `shoal openapi` prints and `/openapi.json` serves).
pub fn openapi() -> utoipa::openapi::OpenApi {
    let (_, mut doc) = api_routes().split_for_parts();
    utoipa::Modify::modify(&openapi::ProblemResponses, &mut doc);
    openapi::add_write_schemas(&mut doc);
    doc.info.version = env!("CARGO_PKG_VERSION").to_string();
    doc
}

/// The complete router with every middleware layer.
pub fn router(
    state: AppState,
    max_body_bytes: usize,
    dashboard: &dashboard::DashboardConfig,
) -> Router {
    let (api, _) = api_routes().split_for_parts();
    let request_id = HeaderName::from_static(problem::REQUEST_ID);
    Router::new()
        .merge(api)
        .merge(SwaggerUi::new("/docs").url("/openapi.json", openapi()))
        .route("/healthz", get(routes::health::healthz))
        .route("/readyz", get(routes::health::readyz))
        .route("/metrics", get(metrics::render))
        .route(routes::oidc::JWKS_PATH, get(routes::health::jwks))
        .route(
            "/.well-known/openid-configuration",
            get(routes::oidc::openid_configuration),
        )
        .route(
            routes::oidc::FEDERATION_DISCOVERY_PATH,
            get(routes::oidc::federation_configuration),
        )
        .route(routes::oidc::TOKEN_PATH, post(routes::oauth2::token))
        .route("/msi/{tenant}/{app}/token", get(routes::msi::token))
        // The dashboard's files, and the API's 404 for every other path.
        .merge(dashboard::routes(dashboard))
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .layer(CatchPanicLayer::new())
        .layer(axum::middleware::from_fn_with_state(
            state.metrics.clone(),
            metrics::track,
        ))
        .layer(axum::middleware::from_fn(request_spans::trace))
        .layer(axum::middleware::from_fn(problem::complete_problems))
        // gzip or br, as the client's `Accept-Encoding` prefers: a page of 1,000 apps is
        // kilobytes instead of megabytes. Outside the problem completion, so problems are
        // compressed as they finally read. tower-http's predicate leaves alone what is already
        // encoded, event streams, images and bodies under 32 bytes. Compression leaks lengths
        // (BREACH) only where an attacker can make a victim's client send authenticated
        // requests mixing their input with secrets; bearer tokens are never sent by a browser
        // on its own, unlike cookies.
        .layer(CompressionLayer::new())
        .layer(TraceLayer::new_for_http())
        .layer(PropagateRequestIdLayer::new(request_id.clone()))
        .layer(SetRequestIdLayer::new(request_id, MakeRequestUuid))
        .with_state(state)
}

/// Retries loading (or creating) the signing keys until Postgres answers.
async fn load_keys_until_available(tokens: TokenService, pool: sqlx::PgPool, cipher: Cipher) {
    let mut delay = Duration::from_millis(250);
    loop {
        tokio::time::sleep(delay).await;
        match tokens.load_or_create(&pool, &cipher).await {
            Ok(()) => {
                tracing::info!("signing keys loaded");
                return;
            }
            Err(StoreError::Unavailable(_)) => delay = (delay * 2).min(Duration::from_secs(5)),
            Err(err) => {
                tracing::error!(error = %err, "cannot load the signing keys; tokens will not verify");
                return;
            }
        }
    }
}

pub struct Application {
    listener: tokio::net::TcpListener,
    router: Router,
    state: AppState,
    port: u16,
    key_reload_interval: Duration,
}

impl Application {
    /// Connects to Postgres, loads (or creates) the token signing key and binds the listener.
    pub async fn build(config: ApiConfig) -> anyhow::Result<Application> {
        Self::build_with_collectors(config, Vec::new()).await
    }

    /// [`Application::build`] with more series for `/metrics` (`shoal dev` adds its worker's
    /// listener statistics).
    pub async fn build_with_collectors(
        config: ApiConfig,
        collectors: Vec<Box<dyn prometheus_client::collector::Collector>>,
    ) -> anyhow::Result<Application> {
        let pool = connect_lazy(config.database_url.expose(), &config.pool)?;
        let cipher = Cipher::new(&config.secret_key);
        let tokens = TokenService::new(&config.issuer, &config.audience);
        match tokens.load_or_create(&pool, &cipher).await {
            Ok(()) => {}
            // Postgres is not up yet: serve anyway (readiness and authenticated requests answer
            // 503) and keep trying, so start-up order does not matter to an orchestrator.
            Err(StoreError::Unavailable(err)) => {
                tracing::warn!(error = %err, "Postgres unavailable; loading signing keys in the background");
                tokio::spawn(load_keys_until_available(
                    tokens.clone(),
                    pool.clone(),
                    cipher.clone(),
                ));
            }
            Err(err) => anyhow::bail!("could not load the token signing keys: {err}"),
        }
        let external_issuers =
            external_issuers::ExternalIssuers::new(&config.identity.external_issuers)?;
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", config.listen))?;
        let bound = listener.local_addr()?;
        // The API's own address is refused even where the operator allows its network, so a
        // forwarding webhook cannot be aimed back at the API.
        let egress = Egress::new(EgressPolicy::new(
            config.outbound.egress_allow.clone(),
            vec![bound],
        ));
        let mut collectors = collectors;
        collectors.push(Box::new(egress.metrics()));
        let invoker =
            Invoker::new(egress).with_max_response_bytes(config.outbound.max_response_bytes);
        let recording = match config.record_invocations_as {
            Some(name) => webhooks::recording::Recording::on(name),
            None => webhooks::recording::Recording::default(),
        };
        let webhooks = webhooks::Webhooks::new(pool.clone(), cipher.clone(), invoker, recording);
        let port = bound.port();
        let tokens_config = &config.identity.tokens;
        let public_url = match &tokens_config.public_url {
            Some(url) => url.clone(),
            None => url::Url::parse(&format!("http://{bound}"))?,
        };
        let state = AppState::new(StateParts {
            pool,
            cipher,
            tokens,
            metrics: metrics::Metrics::with_collectors(collectors),
            issuance: issuance::Issuance::new(&public_url, tokens_config.lifetime),
            external_issuers,
            webhooks,
            limits: config.limits,
        });
        Ok(Application {
            listener,
            router: router(state.clone(), config.max_body_bytes, &config.dashboard),
            state,
            port,
            key_reload_interval: tokens_config.key_reload_interval,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Serves until `shutdown` fires, then lets in-flight requests finish (at most 30 s).
    pub async fn run_until_stopped(self, shutdown: CancellationToken) -> std::io::Result<()> {
        // The change listener (webhook catalog, dispatcher, access cache) and the dispatcher
        // stop with the server.
        let webhooks = &self.state.webhooks;
        tokio::spawn(notifications::listen(
            self.state.pool.clone(),
            webhooks.catalog().clone(),
            webhooks.dispatch_wake().clone(),
            self.state.access.clone(),
            shutdown.child_token(),
        ));
        let recorded = webhooks.start(shutdown.child_token());
        let background = shutdown.child_token();
        let _stop_background = background.clone().drop_guard();
        tokio::spawn(tokens::rotation::reload_periodically(
            self.state.tokens.clone(),
            self.state.pool.clone(),
            self.state.cipher.clone(),
            self.key_reload_interval,
            background,
        ));
        let drain = shutdown.clone();
        let serve = axum::serve(self.listener, self.router)
            .with_graceful_shutdown(async move { drain.cancelled().await });
        let served = tokio::select! {
            result = serve => result,
            _ = async { shutdown.cancelled().await; tokio::time::sleep(Duration::from_secs(30)).await } => {
                tracing::warn!("in-flight requests did not finish within 30 s; stopping anyway");
                Ok(())
            }
        };
        // The calls of the last second are written before the process ends.
        recorded.stop().await;
        served
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_of_the_config_shows_no_secret() {
        let key = SecretKey::generate();
        let config = ApiConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            database_url: "postgres://shoal:hunter2-db-password@db.example.com/shoal".into(),
            secret_key: key.clone(),
            issuer: tokens::DEFAULT_ISSUER.into(),
            audience: tokens::DEFAULT_AUDIENCE.into(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            pool: PoolConfig::default(),
            identity: IdentityConfig::default(),
            dashboard: dashboard::DashboardConfig::default(),
            outbound: OutboundConfig::default(),
            limits: ApiLimits::default(),
            record_invocations_as: None,
        };
        let printed = format!("{config:?}");
        assert!(!printed.contains("hunter2"), "{printed}");
        assert!(!printed.contains(&key.to_base64()), "{printed}");
        assert!(printed.contains("db.example.com"), "{printed}");
    }
}
