//! The one place errors become HTTP: `application/problem+json` (RFC 9457) with `type`,
//! `title`, `status`, `detail`, `instance`, the request id, and `errors[].path` for
//! validation. Internals are logged, never returned: a 5xx body says only what happened.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use shoal_domain::validation::{FieldError, ValidationError};
use shoal_store::StoreError;
use utoipa::ToSchema;

pub const PROBLEM_JSON: &str = "application/problem+json";

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("not found")]
    NotFound,
    /// A 404 that may say what is missing (only where the caller may know it exists).
    #[error("{0}")]
    NotFoundDetail(String),
    #[error("{0}")]
    Conflict(String),
    #[error("the resource's ETag does not match If-Match / If-None-Match")]
    PreconditionFailed,
    #[error("{0}")]
    UnsupportedMediaType(String),
    #[error("the request body is too large")]
    PayloadTooLarge,
    #[error("the request has invalid fields")]
    Validation(Vec<FieldError>),
    #[error("the database is unavailable")]
    Unavailable,
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

/// The problem document. `instance` and `requestId` are filled in by the problem middleware,
/// which knows the request.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub status: u16,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldError>,
}

impl Problem {
    pub fn new(status: StatusCode, slug: &str, detail: impl Into<String>) -> Problem {
        Problem {
            kind: format!("https://shoal.dev/problems/{slug}"),
            title: status.canonical_reason().unwrap_or("Error").to_string(),
            status: status.as_u16(),
            detail: detail.into(),
            instance: None,
            request_id: None,
            errors: Vec::new(),
        }
    }
}

impl ApiError {
    pub fn validation(path: impl Into<String>, message: impl Into<String>) -> ApiError {
        ApiError::Validation(vec![FieldError {
            path: path.into(),
            message: message.into(),
        }])
    }

    fn status_and_slug(&self) -> (StatusCode, &'static str) {
        match self {
            ApiError::BadRequest(_) => (StatusCode::BAD_REQUEST, "bad-request"),
            ApiError::Unauthorized(_) => (StatusCode::UNAUTHORIZED, "unauthorized"),
            ApiError::Forbidden(_) => (StatusCode::FORBIDDEN, "forbidden"),
            ApiError::NotFound | ApiError::NotFoundDetail(_) => {
                (StatusCode::NOT_FOUND, "not-found")
            }
            ApiError::Conflict(_) => (StatusCode::CONFLICT, "conflict"),
            ApiError::PreconditionFailed => {
                (StatusCode::PRECONDITION_FAILED, "precondition-failed")
            }
            ApiError::UnsupportedMediaType(_) => {
                (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported-media-type")
            }
            ApiError::PayloadTooLarge => (StatusCode::PAYLOAD_TOO_LARGE, "payload-too-large"),
            ApiError::Validation(_) => (StatusCode::UNPROCESSABLE_ENTITY, "validation"),
            ApiError::Unavailable => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            ApiError::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        }
    }
}

impl From<ValidationError> for ApiError {
    fn from(err: ValidationError) -> Self {
        ApiError::Validation(err.errors)
    }
}

impl From<StoreError> for ApiError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::NotFound => ApiError::NotFound,
            StoreError::PreconditionFailed => ApiError::PreconditionFailed,
            StoreError::Conflict(m) => ApiError::Conflict(m),
            StoreError::QuotaExceeded(m) => ApiError::Conflict(m),
            StoreError::InvalidValue(m) => ApiError::BadRequest(format!(
                "the request holds a value that cannot be stored ({m})"
            )),
            StoreError::Unavailable(e) => {
                tracing::warn!(error = %e, "database unavailable");
                ApiError::Unavailable
            }
            other => ApiError::Internal(other.into()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, slug) = self.status_and_slug();
        let detail = match &self {
            ApiError::Internal(err) => {
                tracing::error!(error = ?err, "internal error");
                "an internal error occurred; it has been logged".to_string()
            }
            ApiError::NotFound => "no such resource".to_string(),
            other => other.to_string(),
        };
        let mut problem = Problem::new(status, slug, detail);
        if let ApiError::Validation(errors) = self {
            problem.errors = errors;
        }
        let mut response = problem_response(problem);
        match status {
            StatusCode::SERVICE_UNAVAILABLE => {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
            }
            StatusCode::UNAUTHORIZED => {
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer error=\"invalid_token\""),
                );
            }
            _ => {}
        }
        response
    }
}

/// A problem response whose body the middleware completes (it carries the Problem as an
/// extension until then).
pub fn problem_response(problem: Problem) -> Response {
    let status = StatusCode::from_u16(problem.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (status, [(header::CONTENT_TYPE, PROBLEM_JSON)]).into_response();
    response.extensions_mut().insert(problem);
    response
}
