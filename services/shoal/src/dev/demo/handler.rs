//! The demo handler: the kind of code a tenant deploys, as an Azure Functions custom handler
//! serves it (`POST {handler.url}/{function}`). It checks each request's Standard Webhooks
//! signature with the app's secret, as a real handler should, and lets the function's kind
//! answer.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::Value;
use shoal_domain::webhooks::{HEADER_ID, HEADER_SIGNATURE, HEADER_TIMESTAMP, WebhookSecret};

/// Binds the demo handler to a free port; returns the listener and the handler's base URL.
pub async fn bind() -> anyhow::Result<(tokio::net::TcpListener, String)> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://127.0.0.1:{}/api", listener.local_addr()?.port());
    Ok((listener, url))
}

/// Serves the demo handler until the process ends.
pub fn start(listener: tokio::net::TcpListener, secret: WebhookSecret) {
    let app = Router::new()
        .route("/api/{function}", post(handle))
        .with_state(Arc::new(secret));
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "the demo handler stopped");
        }
    });
}

async fn handle(
    State(secret): State<Arc<WebhookSecret>>,
    Path(function): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let verified = match (
        header(HEADER_ID),
        header(HEADER_TIMESTAMP),
        header(HEADER_SIGNATURE),
    ) {
        (Some(id), Some(ts), Some(sig)) => ts
            .parse::<i64>()
            .is_ok_and(|ts| secret.verify(id, ts, &body, sig)),
        _ => false,
    };
    if !verified {
        return (StatusCode::UNAUTHORIZED, "bad webhook signature").into_response();
    }
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "not JSON").into_response();
    };
    match super::kind_of(&function) {
        Some(kind) => axum::Json(kind.answer(&request)).into_response(),
        // A function added to the demo app by hand: this handler has no code for it.
        None => (
            StatusCode::NOT_FOUND,
            format!("the demo handler has no function {function}"),
        )
            .into_response(),
    }
}
