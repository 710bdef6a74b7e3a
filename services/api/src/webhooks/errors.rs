//! The ingress's own failures as problem+json, beside the API's ([`ApiError`]) for what the
//! two share (401, 403, 404, 503 for an unreachable database).
//!
//! A handler failure is a 502 that says what went wrong in the tenant's terms (unreachable,
//! too slow, which status, which field of its response) and nothing else: no connection error
//! chain, no address, never the signing secret. The full error goes to the log.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use shoal_domain::invocation::http::ResponseFieldError;
use shoal_domain::validation::FieldError;
use shoal_invoker::InvocationError;

use crate::error::{ApiError, Problem, ProblemKind, problem_response};

#[derive(Debug)]
pub enum WebhookError {
    Api(ApiError),
    MethodNotAllowed {
        allowed: Vec<String>,
    },
    TooLarge {
        limit: u64,
    },
    RateLimited {
        retry_after_seconds: u64,
    },
    /// The app's `state` is `Stopped`.
    AppStopped,
    /// `?mode=async` for a function whose request is forwarded as is.
    AsyncNotForwarded,
    Handler(HandlerFailure),
}

impl From<ApiError> for WebhookError {
    fn from(error: ApiError) -> Self {
        WebhookError::Api(error)
    }
}

impl From<shoal_store::StoreError> for WebhookError {
    fn from(error: shoal_store::StoreError) -> Self {
        WebhookError::Api(error.into())
    }
}

/// Why the handler's answer could not be passed on.
#[derive(Debug, Clone, PartialEq)]
pub struct HandlerFailure {
    /// One sentence, safe to show the caller and to store.
    pub detail: String,
    /// The field of the handler's response at fault, if one is.
    pub field: Option<FieldError>,
}

impl HandlerFailure {
    pub fn from_invocation(error: &InvocationError) -> HandlerFailure {
        let detail = match error {
            InvocationError::Timeout(after) => {
                format!(
                    "the function's handler did not answer within {} s",
                    after.as_secs_f64()
                )
            }
            InvocationError::Connect(_) | InvocationError::Unreachable(_) => {
                "the function's handler could not be reached".into()
            }
            InvocationError::Read(_) => {
                "the function's handler closed the connection before its response was complete"
                    .into()
            }
            InvocationError::Status { status, .. } => {
                let reason = StatusCode::from_u16(*status)
                    .ok()
                    .and_then(|s| s.canonical_reason())
                    .map(|r| format!(" {r}"))
                    .unwrap_or_default();
                format!("the function's handler answered {status}{reason}")
            }
            InvocationError::Malformed(e) => {
                format!("the function's handler answered with a malformed response: {e}")
            }
            // The rule only: the caller need not learn what the handler's name resolves to
            // (the log and the metrics have the whole reason).
            InvocationError::Refused(refusal) => format!(
                "the function's handler was not called: its address is {} and the platform's \
                 egress policy refuses it",
                refusal.rule
            ),
            InvocationError::TooLarge(limit) => {
                format!("the function's handler answered with more than {limit} bytes")
            }
        };
        HandlerFailure {
            detail,
            field: None,
        }
    }

    pub fn from_response_field(error: ResponseFieldError) -> HandlerFailure {
        HandlerFailure {
            detail: format!(
                "the function's handler answered with an invalid HTTP response at {}",
                error.path
            ),
            field: Some(FieldError {
                path: error.path,
                message: error.message,
            }),
        }
    }

    /// As stored for an async invocation.
    pub fn message(&self) -> String {
        match &self.field {
            Some(field) => format!("{}: {}", self.detail, field.message),
            None => self.detail.clone(),
        }
    }
}

impl IntoResponse for WebhookError {
    fn into_response(self) -> Response {
        let (problem, extra) = match self {
            WebhookError::Api(error) => return error.into_response(),
            WebhookError::MethodNotAllowed { allowed } => (
                Problem::new(
                    ProblemKind::MethodNotAllowed,
                    format!("this function accepts {}", allowed.join(", ")),
                ),
                HeaderValue::from_str(&allowed.join(", "))
                    .ok()
                    .map(|v| (header::ALLOW, v)),
            ),
            WebhookError::TooLarge { limit } => (
                Problem::new(
                    ProblemKind::PayloadTooLarge,
                    format!(
                        "the request body is larger than the app's webhooks.maxRequestBodyBytes ({limit} bytes)"
                    ),
                ),
                None,
            ),
            WebhookError::RateLimited {
                retry_after_seconds,
            } => (
                Problem::new(
                    ProblemKind::TooManyRequests,
                    "the app's webhooks.requestsPerSecond and burst are used up; retry after the time in Retry-After",
                ),
                Some((header::RETRY_AFTER, HeaderValue::from(retry_after_seconds))),
            ),
            WebhookError::AppStopped => (
                Problem::new(
                    ProblemKind::AppStopped,
                    "the app is stopped; set its state to Running to accept invocations",
                ),
                None,
            ),
            WebhookError::AsyncNotForwarded => (
                Problem::new(
                    ProblemKind::AsyncNotForwarded,
                    "mode=async is not available for this function: the app sets customHandler.enableForwardingHttpRequest, so its handler expects the caller's request as is, and queued invocations are delivered in the custom-handler envelope",
                ),
                None,
            ),
            WebhookError::Handler(failure) => {
                let mut problem = Problem::new(ProblemKind::HandlerFailed, failure.detail);
                problem.errors.extend(failure.field);
                (problem, None)
            }
        };
        let mut response = problem_response(problem);
        if let Some((name, value)) = extra {
            response.headers_mut().insert(name, value);
        }
        response
    }
}
