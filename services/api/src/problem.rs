//! Middleware that makes every error response a complete problem document: it fills in
//! `instance` and `requestId` for our own problems, and rewrites the plain-text rejections
//! produced by axum and tower-http (unknown route, wrong method, oversized body, a path that
//! is not UTF-8) into problem+json so clients parse one error shape. Endpoints that speak
//! another protocol (OAuth 2.0, managed identity) mark their errors [`ProtocolError`].

use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

use crate::error::{PROBLEM_JSON, Problem, ProblemKind};

pub const REQUEST_ID: &str = "x-request-id";

/// Marks an error response whose body follows another protocol's error format (OAuth 2.0's
/// `{"error": …}`, App Service managed identity's): it is passed through untouched.
#[derive(Debug, Clone, Copy)]
pub struct ProtocolError;

/// Plain-text bodies longer than this are not copied into `detail`.
const MAX_DETAIL: usize = 300;

pub async fn complete_problems(request: Request, next: Next) -> Response {
    let instance = request.uri().path().to_string();
    let request_id = request
        .headers()
        .get(REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let response = next.run(request).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    if response.extensions().get::<ProtocolError>().is_some() {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let problem = match parts.extensions.remove::<Problem>() {
        Some(problem) => problem,
        None => {
            let is_problem = parts
                .headers
                .get(header::CONTENT_TYPE)
                .is_some_and(|v| v.as_bytes().starts_with(PROBLEM_JSON.as_bytes()));
            if is_problem {
                return Response::from_parts(parts, body);
            }
            foreign_problem(status, body).await
        }
    };
    let problem = Problem {
        instance: Some(instance),
        request_id,
        ..problem
    };
    let bytes = serde_json::to_vec(&problem).unwrap_or_default();
    parts
        .headers
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(bytes))
}

/// A problem for a response some other layer produced.
async fn foreign_problem(status: StatusCode, body: Body) -> Problem {
    let text = to_bytes(body, 64 * 1024).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let kind = ProblemKind::of_status(status);
    let default_detail = match kind {
        ProblemKind::NotFound => "no such resource",
        ProblemKind::MethodNotAllowed => "this method is not allowed here",
        ProblemKind::PayloadTooLarge => "the request body is too large",
        ProblemKind::UnsupportedMediaType => "unsupported content type",
        ProblemKind::Timeout => "the request took too long",
        ProblemKind::Internal => "an internal error occurred; it has been logged",
        _ => "the request is malformed",
    };
    let detail = if status.is_client_error() && !text.trim().is_empty() && text.len() <= MAX_DETAIL
    {
        text.trim().to_string()
    } else {
        default_detail.to_string()
    };
    Problem::with_status(status, kind, detail)
}
