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
    /// A caller over its request rate: 429 with `Retry-After`.
    #[error("{detail}; retry after {} s", .retry_after.as_secs().max(1))]
    TooManyRequests {
        detail: String,
        retry_after: std::time::Duration,
    },
    #[error("the database is unavailable")]
    Unavailable,
    /// A storage service the request needs (an app's queue) failed or could not be reached.
    #[error("{0}")]
    Storage(String),
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

/// Every kind of problem the API answers with: the one table of statuses and `type` slugs,
/// for the management API's errors, the webhook ingress's and the rejections of other layers
/// alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemKind {
    BadRequest,
    Unauthorized,
    Forbidden,
    NotFound,
    MethodNotAllowed,
    Timeout,
    Conflict,
    PreconditionFailed,
    PayloadTooLarge,
    UnsupportedMediaType,
    Validation,
    TooManyRequests,
    Internal,
    /// The function's handler failed or answered something that is not a response.
    HandlerFailed,
    Unavailable,
    /// An app's storage (its trigger's queues) failed or could not be reached.
    StorageFailed,
    /// A webhook for an app whose `state` is `Stopped`.
    AppStopped,
    /// `?mode=async` for a function whose request is forwarded as is.
    AsyncNotForwarded,
}

impl ProblemKind {
    pub fn status_and_slug(self) -> (StatusCode, &'static str) {
        match self {
            ProblemKind::BadRequest => (StatusCode::BAD_REQUEST, "bad-request"),
            ProblemKind::Unauthorized => (StatusCode::UNAUTHORIZED, "unauthorized"),
            ProblemKind::Forbidden => (StatusCode::FORBIDDEN, "forbidden"),
            ProblemKind::NotFound => (StatusCode::NOT_FOUND, "not-found"),
            ProblemKind::MethodNotAllowed => (StatusCode::METHOD_NOT_ALLOWED, "method-not-allowed"),
            ProblemKind::Timeout => (StatusCode::REQUEST_TIMEOUT, "timeout"),
            ProblemKind::Conflict => (StatusCode::CONFLICT, "conflict"),
            ProblemKind::PreconditionFailed => {
                (StatusCode::PRECONDITION_FAILED, "precondition-failed")
            }
            ProblemKind::PayloadTooLarge => (StatusCode::PAYLOAD_TOO_LARGE, "payload-too-large"),
            ProblemKind::UnsupportedMediaType => {
                (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported-media-type")
            }
            ProblemKind::Validation => (StatusCode::UNPROCESSABLE_ENTITY, "validation"),
            ProblemKind::TooManyRequests => (StatusCode::TOO_MANY_REQUESTS, "too-many-requests"),
            ProblemKind::Internal => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
            ProblemKind::HandlerFailed => (StatusCode::BAD_GATEWAY, "handler-failed"),
            ProblemKind::Unavailable => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            ProblemKind::StorageFailed => (StatusCode::BAD_GATEWAY, "storage-failed"),
            ProblemKind::AppStopped => (StatusCode::SERVICE_UNAVAILABLE, "app-stopped"),
            ProblemKind::AsyncNotForwarded => (StatusCode::BAD_REQUEST, "async-not-forwarded"),
        }
    }

    /// The kind of an error response another layer (axum, tower-http) produced: what its
    /// status means, else a malformed request (4xx) or an internal error (5xx).
    pub fn of_status(status: StatusCode) -> ProblemKind {
        match status {
            StatusCode::NOT_FOUND => ProblemKind::NotFound,
            StatusCode::METHOD_NOT_ALLOWED => ProblemKind::MethodNotAllowed,
            StatusCode::PAYLOAD_TOO_LARGE => ProblemKind::PayloadTooLarge,
            StatusCode::UNSUPPORTED_MEDIA_TYPE => ProblemKind::UnsupportedMediaType,
            StatusCode::REQUEST_TIMEOUT => ProblemKind::Timeout,
            s if s.is_server_error() => ProblemKind::Internal,
            _ => ProblemKind::BadRequest,
        }
    }
}

impl Problem {
    pub fn new(kind: ProblemKind, detail: impl Into<String>) -> Problem {
        let (status, _) = kind.status_and_slug();
        Problem::with_status(status, kind, detail)
    }

    /// A problem of `kind` answered with another layer's own status.
    pub fn with_status(
        status: StatusCode,
        kind: ProblemKind,
        detail: impl Into<String>,
    ) -> Problem {
        let (_, slug) = kind.status_and_slug();
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

    fn kind(&self) -> ProblemKind {
        match self {
            ApiError::BadRequest(_) => ProblemKind::BadRequest,
            ApiError::Unauthorized(_) => ProblemKind::Unauthorized,
            ApiError::Forbidden(_) => ProblemKind::Forbidden,
            ApiError::NotFound | ApiError::NotFoundDetail(_) => ProblemKind::NotFound,
            ApiError::Conflict(_) => ProblemKind::Conflict,
            ApiError::PreconditionFailed => ProblemKind::PreconditionFailed,
            ApiError::UnsupportedMediaType(_) => ProblemKind::UnsupportedMediaType,
            ApiError::PayloadTooLarge => ProblemKind::PayloadTooLarge,
            ApiError::Validation(_) => ProblemKind::Validation,
            ApiError::TooManyRequests { .. } => ProblemKind::TooManyRequests,
            ApiError::Unavailable => ProblemKind::Unavailable,
            ApiError::Storage(_) => ProblemKind::StorageFailed,
            ApiError::Internal(_) => ProblemKind::Internal,
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
        let kind = self.kind();
        let detail = match &self {
            ApiError::Internal(err) => {
                tracing::error!(error = ?err, "internal error");
                "an internal error occurred; it has been logged".to_string()
            }
            ApiError::NotFound => "no such resource".to_string(),
            other => other.to_string(),
        };
        let mut problem = Problem::new(kind, detail);
        let status =
            StatusCode::from_u16(problem.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let retry_after = match &self {
            ApiError::TooManyRequests { retry_after, .. } => Some(retry_after.as_secs().max(1)),
            _ => None,
        };
        if let ApiError::Validation(errors) = self {
            problem.errors = errors;
        }
        let mut response = problem_response(problem);
        if let Some(seconds) = retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problem_kinds_have_their_status_and_slug() {
        let cases = [
            (ProblemKind::BadRequest, 400, "bad-request"),
            (ProblemKind::Unauthorized, 401, "unauthorized"),
            (ProblemKind::Forbidden, 403, "forbidden"),
            (ProblemKind::NotFound, 404, "not-found"),
            (ProblemKind::MethodNotAllowed, 405, "method-not-allowed"),
            (ProblemKind::Timeout, 408, "timeout"),
            (ProblemKind::Conflict, 409, "conflict"),
            (ProblemKind::PreconditionFailed, 412, "precondition-failed"),
            (ProblemKind::PayloadTooLarge, 413, "payload-too-large"),
            (
                ProblemKind::UnsupportedMediaType,
                415,
                "unsupported-media-type",
            ),
            (ProblemKind::Validation, 422, "validation"),
            (ProblemKind::TooManyRequests, 429, "too-many-requests"),
            (ProblemKind::Internal, 500, "internal"),
            (ProblemKind::HandlerFailed, 502, "handler-failed"),
            (ProblemKind::Unavailable, 503, "unavailable"),
            (ProblemKind::StorageFailed, 502, "storage-failed"),
            (ProblemKind::AppStopped, 503, "app-stopped"),
            (ProblemKind::AsyncNotForwarded, 400, "async-not-forwarded"),
        ];
        for (kind, status, slug) in cases {
            let problem = Problem::new(kind, "x");
            assert_eq!(problem.status, status, "{kind:?}");
            assert_eq!(
                problem.kind,
                format!("https://shoal.dev/problems/{slug}"),
                "{kind:?}"
            );
        }
    }

    #[test]
    fn other_layers_statuses_keep_their_status() {
        let cases = [
            (404, "not-found"),
            (405, "method-not-allowed"),
            (408, "timeout"),
            (413, "payload-too-large"),
            (415, "unsupported-media-type"),
            (400, "bad-request"),
            (414, "bad-request"),
            (500, "internal"),
            (504, "internal"),
        ];
        for (status, slug) in cases {
            let status = StatusCode::from_u16(status).unwrap();
            let problem = Problem::with_status(status, ProblemKind::of_status(status), "x");
            assert_eq!(problem.status, status.as_u16());
            assert!(
                problem.kind.ends_with(&format!("/{slug}")),
                "{status}: {}",
                problem.kind
            );
        }
    }

    #[test]
    fn api_errors_map_through_the_table() {
        let cases = [
            (ApiError::NotFoundDetail("x".into()), 404),
            (ApiError::validation("tenant", "bad"), 422),
            (ApiError::Unavailable, 503),
            (ApiError::PreconditionFailed, 412),
        ];
        for (error, status) in cases {
            assert_eq!(error.into_response().status().as_u16(), status);
        }
    }
}
