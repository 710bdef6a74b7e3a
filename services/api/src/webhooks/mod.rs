//! The webhook ingress (DESIGN §7): callers holding a bearer token invoke an app's
//! HTTP-triggered functions at `/webhooks/{tenant}/{app}/{function}`; the request is delivered
//! to the app's handler as Azure Functions' custom handlers receive an HTTP trigger, and the
//! handler's response is returned, or, with `?mode=async`, queued in Postgres and delivered
//! with retries by a dispatcher in every API process.
//!
//! * [`catalog`]: the apps' handlers, secrets, bindings and limits in memory, kept fresh by
//!   `LISTEN/NOTIFY` ([`crate::notifications`]), so a request needs no database round trip;
//! * `routes::webhooks`: the two endpoints, above the application state; [`body`]: the
//!   per-app body limit;
//! * [`delivery`]: one handler call through the shared [`Invoker`], shared by the synchronous
//!   path and the [`dispatcher`];
//! * [`forward`]: the raw request and response of `customHandler.enableForwardingHttpRequest`;
//! * [`errors`]: the ingress's problem+json answers (400, 405, 413, 429, 502, 503);
//!
//! Who is calling, admitted by the app's rate rather than the management API's request
//! throttle, is the routes' `WebhookCaller` (`routes/webhooks/caller.rs`).
//!
//! A stopped app answers 503 `app-stopped`, not Azure's 403 "site stopped": the caller is not
//! refused permission, the function is unavailable until its owner starts it again.

pub(crate) mod body;
pub(crate) mod catalog;
pub(crate) mod delivery;
mod dispatcher;
pub(crate) mod errors;
pub(crate) mod forward;
pub mod recording;

use std::sync::Arc;

use shoal_invoker::Invoker;
use shoal_store::crypto::Cipher;
use shoal_store::invocation_recorder::Flusher;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use catalog::Catalog;
use recording::Recording;

pub use dispatcher::DispatchConfig;

/// Shared by the ingress's handlers (a field of the application state) and its background
/// tasks.
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
    /// Whether calls go to the invocation log, as whose.
    recording: Recording,
}

impl Webhooks {
    /// Handlers are called through `invoker`, which carries the process's egress policy; the
    /// calls are recorded as `recording` says.
    pub fn new(
        pool: sqlx::PgPool,
        cipher: Cipher,
        invoker: Invoker,
        recording: Recording,
    ) -> Webhooks {
        Webhooks(Arc::new(Ingress {
            catalog: Arc::new(catalog::Catalog::new(
                pool.clone(),
                cipher.clone(),
                invoker.clone(),
            )),
            invoker,
            dispatch: Arc::new(Notify::new()),
            pool,
            cipher,
            config: DispatchConfig::default(),
            recording,
        }))
    }

    /// The apps' handlers, secrets, bindings and limits, as the change listener keeps them.
    pub(crate) fn catalog(&self) -> &Arc<Catalog> {
        &self.0.catalog
    }

    /// The client every handler call goes through.
    pub(crate) fn invoker(&self) -> &Invoker {
        &self.0.invoker
    }

    /// How the ingress's calls are recorded.
    pub(crate) fn recording(&self) -> &Recording {
        &self.0.recording
    }

    /// Wakes the dispatcher (the change listener rings it when an invocation was queued).
    pub(crate) fn dispatch_wake(&self) -> &Arc<Notify> {
        &self.0.dispatch
    }

    /// Starts the async dispatcher, which ends when `stop` fires, and the invocation log's
    /// flush, which the caller stops with [`Recorded::stop`] once requests are over (so the
    /// last calls are written).
    pub fn start(&self, stop: CancellationToken) -> Recorded {
        let ingress = &self.0;
        let dispatcher = dispatcher::Dispatcher {
            pool: ingress.pool.clone(),
            cipher: ingress.cipher.clone(),
            catalog: ingress.catalog.clone(),
            wake: ingress.dispatch.clone(),
            config: ingress.config.clone(),
            claimant: format!("api-{}-{}", std::process::id(), uuid::Uuid::new_v4()),
            recording: ingress.recording.clone(),
        };
        tokio::spawn(Arc::new(dispatcher).run(stop));
        Recorded(ingress.recording.start(ingress.pool.clone()))
    }
}

/// The invocation log's flush while the ingress runs.
pub struct Recorded(Option<Flusher>);

impl Recorded {
    /// Writes what is left and stops.
    pub async fn stop(self) {
        if let Some(flusher) = self.0 {
            flusher.stop().await;
        }
    }
}
