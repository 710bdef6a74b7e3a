//! Reads a webhook's request body under the app's `webhooks.maxRequestBodyBytes`: a declared
//! `Content-Length` over the limit is refused before anything is read, and a chunked body is
//! refused as soon as it passes the limit, so no more than the limit is ever held in memory.
//!
//! The management API's `DefaultBodyLimit` does not apply here: this reads the raw body, and
//! the app's own limit (up to 100 MB) is the one that counts.

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, header};
use http_body_util::{BodyExt, LengthLimitError, Limited};

use super::errors::WebhookError;
use crate::error::ApiError;

pub fn check_declared_length(headers: &HeaderMap, limit: u64) -> Result<(), WebhookError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    match declared {
        Some(length) if length > limit => Err(WebhookError::TooLarge { limit }),
        _ => Ok(()),
    }
}

pub async fn read_limited(body: Body, limit: u64) -> Result<Bytes, WebhookError> {
    let cap = usize::try_from(limit).unwrap_or(usize::MAX);
    match Limited::new(body, cap).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.downcast_ref::<LengthLimitError>().is_some() => {
            Err(WebhookError::TooLarge { limit })
        }
        Err(error) => Err(WebhookError::Api(ApiError::BadRequest(format!(
            "could not read the request body: {error}"
        )))),
    }
}
