//! The webhook ingress (DESIGN §7): callers holding a bearer token invoke an app's
//! HTTP-triggered functions at `/webhooks/{tenant}/{app}/{function}`; the request is delivered
//! to the app's handler as Azure Functions' custom handlers receive an HTTP trigger, and the
//! handler's response is returned, or, with `?mode=async`, queued in Postgres and delivered
//! with retries by a dispatcher in every API process.
//!
//! * [`catalog`]: the apps' handlers, secrets, bindings and limits in memory, kept fresh by
//!   `LISTEN/NOTIFY` ([`crate::notifications`]), so a request needs no database round trip;
//! * [`invoke`] and [`status`]: the two endpoints; [`body`]: the per-app body limit;
//! * [`delivery`]: one handler call through the shared [`Invoker`], shared by the synchronous
//!   path and the [`dispatcher`];
//! * [`forward`]: the raw request and response of `customHandler.enableForwardingHttpRequest`;
//! * [`errors`]: the ingress's problem+json answers (400, 405, 413, 429, 502, 503).
//!
//! A stopped app answers 503 `app-stopped`, not Azure's 403 "site stopped": the caller is not
//! refused permission, the function is unavailable until its owner starts it again.

mod body;
pub(crate) mod catalog;
mod delivery;
mod dispatcher;
mod errors;
mod forward;
mod invoke;
mod status;

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::routing::get;
use shoal_invoker::Invoker;
use shoal_store::crypto::Cipher;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::state::AppState;

pub use dispatcher::DispatchConfig;

pub const TAG_WEBHOOKS: &str = "webhooks";
const INVOKE_PATH: &str = "/webhooks/{tenant}/{app}/{function}";

/// Shared by the ingress's handlers (an axum `Extension`) and its background tasks.
#[derive(Clone)]
pub struct Webhooks(Arc<Ingress>);

struct Ingress {
    pool: sqlx::PgPool,
    cipher: Cipher,
    catalog: Arc<catalog::Catalog>,
    invoker: Invoker,
    /// Wakes the dispatcher when an invocation was queued.
    dispatch: Arc<Notify>,
    config: DispatchConfig,
}

impl Webhooks {
    pub fn new(pool: sqlx::PgPool, cipher: Cipher) -> anyhow::Result<Webhooks> {
        Self::with_config(pool, cipher, DispatchConfig::default())
    }

    pub fn with_config(
        pool: sqlx::PgPool,
        cipher: Cipher,
        config: DispatchConfig,
    ) -> anyhow::Result<Webhooks> {
        Ok(Webhooks(Arc::new(Ingress {
            catalog: Arc::new(catalog::Catalog::new(pool.clone(), cipher.clone())),
            invoker: Invoker::new()?,
            dispatch: Arc::new(Notify::new()),
            pool,
            cipher,
            config,
        })))
    }

    /// Starts the catalog's listener and the dispatcher; both end when `stop` fires.
    /// Starts the process's change listener (which also keeps `access` fresh) and the
    /// async dispatcher.
    pub fn start(&self, stop: CancellationToken, access: Arc<crate::access::AccessCache>) {
        let ingress = &self.0;
        tokio::spawn(crate::notifications::listen(
            ingress.pool.clone(),
            ingress.catalog.clone(),
            ingress.dispatch.clone(),
            access,
            stop.clone(),
        ));
        let dispatcher = dispatcher::Dispatcher {
            pool: ingress.pool.clone(),
            cipher: ingress.cipher.clone(),
            catalog: ingress.catalog.clone(),
            invoker: ingress.invoker.clone(),
            wake: ingress.dispatch.clone(),
            config: ingress.config.clone(),
            claimant: format!("api-{}-{}", std::process::id(), uuid::Uuid::new_v4()),
        };
        tokio::spawn(Arc::new(dispatcher).run(stop));
    }
}

/// The ingress's routes. Its handlers take the [`Webhooks`] extension, which
/// `Application::build` layers onto the router.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(invoke::invoke))
        .routes(routes!(status::invocation_status))
        // The other methods an httpTrigger's `methods` may allow (TRACE is never routed).
        .route(
            INVOKE_PATH,
            get(invoke::invoke)
                .put(invoke::invoke)
                .patch(invoke::invoke)
                .delete(invoke::invoke)
                .head(invoke::invoke)
                .options(invoke::invoke),
        )
        // The management API's body limit is not the ingress's: each app has its own.
        .layer(DefaultBodyLimit::disable())
}
