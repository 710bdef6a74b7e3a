//! The dashboard's static files (`web/`, built by Vite) served at `/` from the API's own origin,
//! so the single-page app calls the API without CORS and no request leaves the origin.
//!
//! Paths the API owns (`/v1`, `/docs`, `/openapi.json`, `/metrics`, `/.well-known`, …) are
//! never shadowed: the router matches them first, and an unknown path under one of their
//! prefixes stays a problem+json 404. Any other GET that names no file answers `index.html`,
//! so the app's own routes (`/tenants/contoso/apps`) survive a reload.
//!
//! `/dashboard/config` tells the app which environment it looks at, whether one-click
//! sign-in is on and where the operator's trace viewer shows a trace; `POST
//! /dashboard/devSignIn` (only in `shoal dev`, where the operator running it is the only user)
//! hands out a platform administrator's token.

use std::path::PathBuf;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Serialize;
use tower::ServiceExt;
use tower_http::services::{ServeDir, ServeFile};

use crate::error::ApiError;
use crate::identity::Principal;
use crate::state::AppState;

/// Where the dashboard is and what it says about this deployment.
#[derive(Debug, Clone, Default)]
pub struct DashboardConfig {
    /// The built app (`web/dist`); None serves no dashboard.
    pub dir: Option<PathBuf>,
    /// Shown in the dashboard's header on every view (`production`, `staging-eu`, `dev`).
    pub environment: Option<String>,
    /// One-click sign-in as a platform administrator: `shoal dev` only.
    pub dev_sign_in: bool,
    /// The operator's trace viewer (Jaeger, Grafana Tempo…) as a URL template holding
    /// `{traceId}`: the explorer links each attempt's trace id to it. Validated at start-up.
    pub trace_viewer_url: Option<String>,
}

/// The subject of tokens handed out by one-click sign-in.
pub const DEV_SUBJECT: &str = "dev-admin";
const DEV_TOKEN_LIFETIME: Duration = Duration::from_secs(8 * 3600);

/// Path prefixes the API owns: an unknown path under one is the API's 404, never the app.
const API_PREFIXES: &[&str] = &[
    "/v1",
    "/docs",
    "/openapi.json",
    "/metrics",
    "/healthz",
    "/readyz",
    "/.well-known",
    "/oauth2",
    "/msi",
    "/webhooks",
    "/dashboard",
];

/// Whether `path` belongs to the API rather than to the dashboard.
pub fn is_api_path(path: &str) -> bool {
    API_PREFIXES.iter().any(|prefix| {
        path.strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ConfigView {
    environment: Option<String>,
    dev_sign_in: bool,
    /// Null when no viewer is configured: the explorer shows trace ids as plain text.
    trace_viewer_url: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct DevToken {
    token: String,
    expires_in: u64,
}

/// The dashboard's routes and the fallback that serves its files.
pub fn routes(config: &DashboardConfig) -> Router<AppState> {
    let view = ConfigView {
        environment: config.environment.clone(),
        dev_sign_in: config.dev_sign_in,
        trace_viewer_url: config.trace_viewer_url.clone(),
    };
    let view = serde_json::to_value(view).unwrap_or_default();
    let mut router =
        Router::new().route("/dashboard/config", get(move || async move { Json(view) }));
    if config.dev_sign_in {
        router = router.route("/dashboard/devSignIn", post(dev_sign_in));
    }
    match &config.dir {
        Some(dir) => {
            let files = ServeDir::new(dir)
                .append_index_html_on_directories(true)
                .fallback(ServeFile::new(dir.join("index.html")));
            router.fallback(move |request: Request| serve_file(files.clone(), request))
        }
        None => router.fallback(|| async { ApiError::NotFound }),
    }
}

async fn serve_file(files: ServeDir<ServeFile>, request: Request) -> Response {
    if is_api_path(request.uri().path()) {
        return ApiError::NotFound.into_response();
    }
    if !matches!(*request.method(), Method::GET | Method::HEAD) {
        return ApiError::NotFound.into_response();
    }
    let hashed = request.uri().path().starts_with("/assets/");
    match files.oneshot(request).await {
        Ok(response) if response.status() == StatusCode::NOT_FOUND => {
            // No index.html either: the dashboard directory is missing or not built.
            ApiError::NotFound.into_response()
        }
        Ok(mut response) => {
            // Vite names assets by content hash: they never change. index.html must be
            // revalidated so a new build is picked up.
            let cache = if hashed {
                "public, max-age=31536000, immutable"
            } else {
                "no-cache"
            };
            if let Ok(value) = header::HeaderValue::from_str(cache) {
                response.headers_mut().insert(header::CACHE_CONTROL, value);
            }
            response.into_response()
        }
        Err(never) => match never {},
    }
}

/// Whether a `Host` header names this machine's loopback interface (any port).
fn is_loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

async fn dev_sign_in(
    State(state): State<AppState>,
    headers: header::HeaderMap,
) -> Result<Json<DevToken>, ApiError> {
    // A page on another site that a DNS name rebound to 127.0.0.1 would reach this with its own
    // host name: only requests addressed to loopback get a token.
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !is_loopback_host(host) {
        return Err(ApiError::Forbidden(
            "one-click sign-in answers only requests addressed to localhost or a loopback address"
                .into(),
        ));
    }
    let principal = Principal::PlatformAdmin {
        subject: DEV_SUBJECT.into(),
    };
    let token = state
        .tokens
        .issue(&principal, DEV_TOKEN_LIFETIME)
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("issuing the dev token: {e}")))?;
    Ok(Json(DevToken {
        token,
        expires_in: DEV_TOKEN_LIFETIME.as_secs(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_hosts_get_a_dev_token() {
        for host in [
            "127.0.0.1:8080",
            "127.0.0.1",
            "localhost:8080",
            "LOCALHOST",
            "[::1]:8080",
            "127.10.0.1:1",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "",
            "evil.example:8080",
            "10.0.0.1:8080",
            "localhost.evil.example",
            "[::2]:8080",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }

    #[test]
    fn api_prefixes_are_never_the_dashboard() {
        for path in [
            "/v1",
            "/v1/tenants",
            "/v1/nope",
            "/docs",
            "/docs/index.html",
            "/openapi.json",
            "/metrics",
            "/.well-known/jwks.json",
            "/oauth2/token",
            "/msi/t/a/token",
            "/webhooks/t/a/f",
            "/dashboard/config",
        ] {
            assert!(is_api_path(path), "{path}");
        }
        for path in [
            "/",
            "/index.html",
            "/assets/index-abc.js",
            "/tenants/contoso/apps",
            "/v1x",
            "/docsy",
            "/workers",
        ] {
            assert!(!is_api_path(path), "{path}");
        }
    }
}
