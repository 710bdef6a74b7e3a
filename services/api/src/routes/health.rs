//! Liveness, readiness and the JWK set.

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::error::ApiError;
use crate::state::AppState;

/// The process is up.
pub async fn healthz() -> Json<serde_json::Value> {
    Json(json!({ "status": "ok" }))
}

/// The database answers and the token keys are loaded; 503 with `Retry-After` otherwise,
/// including when the database has not answered within the deadline (`--ready-timeout`): a
/// Postgres that accepts connections and then stalls must not hold the probe until the pool's
/// own acquire timeout.
pub async fn readyz(State(state): State<AppState>) -> Response {
    let ready = async { state.tokens.has_keys() && shoal_store::pool::is_ready(&state.pool).await };
    if tokio::time::timeout(state.ready_timeout, ready)
        .await
        .unwrap_or(false)
    {
        Json(json!({ "status": "ready" })).into_response()
    } else {
        ApiError::Unavailable.into_response()
    }
}

/// The public keys Shoal's tokens are signed with.
pub async fn jwks(State(state): State<AppState>) -> Json<serde_json::Value> {
    Json(state.tokens.jwks())
}
