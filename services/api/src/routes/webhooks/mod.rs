//! The webhook ingress's two endpoints (the ingress itself is `crate::webhooks`): invoking an
//! HTTP-triggered function and reading an async invocation's status.

mod caller;
mod invoke;
mod status;

use axum::extract::DefaultBodyLimit;
use axum::routing::get;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::state::AppState;

pub const TAG_WEBHOOKS: &str = "webhooks";
const INVOKE_PATH: &str = "/webhooks/{tenant}/{app}/{function}";

/// The ingress's routes; their handlers find the ingress in the application state.
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
