//! What every request handler shares, built whole once by `Application::build`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::FromRef;
use shoal_domain::quotas::Quotas;
use shoal_store::crypto::Cipher;
use sqlx::PgPool;
use tokio::sync::Mutex;

use crate::ApiLimits;
use crate::access::AccessCache;
use crate::external_issuers::ExternalIssuers;
use crate::identity_headers::KnownHeaders;
use crate::issuance::Issuance;
use crate::metrics::Metrics;
use crate::throttle::RequestThrottle;
use crate::tokens::TokenService;
use crate::webhooks::Webhooks;

/// Shared by every request handler.
#[derive(Clone)]
pub struct AppState {
    pub pool: PgPool,
    pub cipher: Cipher,
    pub tokens: TokenService,
    pub metrics: Arc<Metrics>,
    /// Role assignments per principal, kept fresh by the change listener (`notifications`).
    pub access: Arc<AccessCache>,
    /// Where the token endpoints are, what they hand out, and their failure throttle.
    pub issuance: Arc<Issuance>,
    /// The OIDC issuers whose tokens identify registered users, with their keys.
    pub external_issuers: ExternalIssuers,
    /// The webhook ingress: its catalog of HTTP-triggered functions and its dispatcher.
    pub webhooks: Webhooks,
    /// Management API requests per principal and per tenant.
    pub throttle: Arc<RequestThrottle>,
    /// Webhook ingress requests refused per principal and per tenant (not allowed, or naming
    /// nothing), at the management rates: the ingress is not admitted by `throttle`, and these
    /// refusals cost database work before the app's own bucket is reached
    /// (`webhooks::caller`).
    pub ingress_refusals: Arc<RequestThrottle>,
    /// How long `/readyz` may take.
    pub ready_timeout: Duration,
    /// The quotas of tenants whose own limits do not say.
    pub tenant_defaults: Quotas,
    /// Apps' identity headers the managed-identity endpoint read a moment ago.
    pub msi_headers: Arc<KnownHeaders>,
    last_key_refresh: Arc<Mutex<Option<Instant>>>,
}

/// What the state is made of; the rest (the access cache, the key-refresh throttle) it
/// creates itself.
pub struct StateParts {
    pub pool: PgPool,
    pub cipher: Cipher,
    pub tokens: TokenService,
    pub metrics: Metrics,
    pub issuance: Issuance,
    pub external_issuers: ExternalIssuers,
    pub webhooks: Webhooks,
    pub limits: ApiLimits,
}

/// Tokens naming unknown keys trigger at most one key reload this often, so a flood of
/// forged tokens cannot turn into a flood of database reads.
const KEY_REFRESH_INTERVAL: Duration = Duration::from_secs(5);

impl AppState {
    pub fn new(parts: StateParts) -> AppState {
        let StateParts {
            pool,
            cipher,
            tokens,
            metrics,
            issuance,
            external_issuers,
            webhooks,
            limits,
        } = parts;
        AppState {
            pool,
            cipher,
            tokens,
            metrics: Arc::new(metrics),
            access: Arc::new(AccessCache::default()),
            issuance: Arc::new(issuance),
            external_issuers,
            webhooks,
            throttle: Arc::new(RequestThrottle::new(limits.rates, limits.throttle_hold)),
            ingress_refusals: Arc::new(RequestThrottle::new(limits.rates, limits.throttle_hold)),
            ready_timeout: limits.ready_timeout,
            tenant_defaults: limits.tenant_defaults,
            msi_headers: Arc::new(KnownHeaders::default()),
            last_key_refresh: Arc::new(Mutex::new(None)),
        }
    }

    /// The process's egress policy, with its refusal counters.
    pub fn egress(&self) -> &shoal_egress::Egress {
        self.webhooks.invoker().egress()
    }

    pub async fn refresh_keys(&self) {
        let mut last = self.last_key_refresh.lock().await;
        if last.is_some_and(|at| at.elapsed() < KEY_REFRESH_INTERVAL) {
            return;
        }
        *last = Some(Instant::now());
        if let Err(err) = self.tokens.refresh(&self.pool, &self.cipher).await {
            tracing::warn!(error = %err, "could not reload signing keys");
        }
    }
}

/// `/metrics` and the request-tracking middleware need only the metrics.
impl FromRef<AppState> for Arc<Metrics> {
    fn from_ref(state: &AppState) -> Arc<Metrics> {
        state.metrics.clone()
    }
}
