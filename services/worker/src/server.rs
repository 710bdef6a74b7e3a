//! A standalone worker's small HTTP endpoint: `/metrics` (listener statistics) and `/healthz`.
//! In `shoal dev` the API's `/metrics` carries the same series instead.

use std::sync::Arc;

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use prometheus_client::registry::Registry;
use tokio_util::sync::CancellationToken;

use crate::metrics::ListenerMetrics;
use crate::stats::StatsRegistry;

/// `extra`: more series (the worker's egress refusals).
pub async fn serve(
    listener: tokio::net::TcpListener,
    stats: Arc<StatsRegistry>,
    extra: Vec<Box<dyn prometheus_client::collector::Collector>>,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let mut registry = Registry::with_prefix("shoal");
    registry.register_collector(Box::new(ListenerMetrics(vec![stats])));
    for collector in extra {
        registry.register_collector(collector);
    }
    shoal_store::metrics::register(&mut registry);
    let registry = Arc::new(registry);
    let app = Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route(
            "/metrics",
            get(move || {
                let registry = registry.clone();
                async move {
                    let mut text = String::new();
                    match prometheus_client::encoding::text::encode(&mut text, &registry) {
                        Ok(()) => (
                            [(
                                header::CONTENT_TYPE,
                                "application/openmetrics-text; version=1.0.0; charset=utf-8",
                            )],
                            text,
                        )
                            .into_response(),
                        Err(_) => axum::http::StatusCode::INTERNAL_SERVER_ERROR.into_response(),
                    }
                }
            }),
        );
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await
}
