use std::sync::Arc;
use std::time::{Duration, Instant};

use shoal_store::crypto::Cipher;
use sqlx::PgPool;
use tokio::sync::Mutex;

use crate::access::AccessCache;
use crate::external_issuers::ExternalIssuers;
use crate::issuance::Issuance;
use crate::metrics::Metrics;
use crate::tokens::TokenService;

/// Shared by every request handler.
#[derive(Clone)]
pub struct AppState {
    pub pool: PgPool,
    pub cipher: Cipher,
    pub tokens: TokenService,
    pub metrics: Arc<Metrics>,
    /// Role assignments per principal, kept fresh by `access::listen_for_changes`.
    pub access: Arc<AccessCache>,
    /// Where the token endpoints are, what they hand out, and their failure throttle.
    pub issuance: Arc<Issuance>,
    /// The OIDC issuers whose tokens identify registered users, with their keys.
    pub external_issuers: ExternalIssuers,
    last_key_refresh: Arc<Mutex<Option<Instant>>>,
}

/// Tokens naming unknown keys trigger at most one key reload this often, so a flood of
/// forged tokens cannot turn into a flood of database reads.
const KEY_REFRESH_INTERVAL: Duration = Duration::from_secs(5);

impl AppState {
    pub fn new(pool: PgPool, cipher: Cipher, tokens: TokenService) -> AppState {
        AppState {
            pool,
            cipher,
            tokens,
            metrics: Arc::new(Metrics::new()),
            access: Arc::new(AccessCache::default()),
            issuance: Arc::new(Issuance::default()),
            external_issuers: ExternalIssuers::default(),
            last_key_refresh: Arc::new(Mutex::new(None)),
        }
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
