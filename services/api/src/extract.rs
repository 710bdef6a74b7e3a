//! Request extraction that answers bad input with problem+json: JSON bodies (malformed →
//! 400, wrong media type → 415, too large → 413 via the body limit), names in paths (422
//! with the parameter as the path), pagination and conditional-request headers.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use serde::Deserialize;
use shoal_store::Precondition;
use shoal_store::page::{DEFAULT_LIMIT, MAX_LIMIT, PageRequest, decode_token};
use utoipa::IntoParams;

use crate::error::ApiError;

/// A JSON request body as a `serde_json::Value`; the handlers parse it with path-aware
/// validation from the domain crate.
pub struct JsonBody(pub serde_json::Value);

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let content_type = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let essence = content_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        if !(essence == "application/json"
            || essence == "application/merge-patch+json"
            || essence.ends_with("+json"))
        {
            return Err(ApiError::UnsupportedMediaType(
                "send the body as application/json (or application/merge-patch+json for PATCH)"
                    .into(),
            ));
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            // The body limit answers 413 through its own response; keep that status.
            if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::PayloadTooLarge
            } else {
                ApiError::BadRequest(format!("could not read the body: {rejection}"))
            }
        })?;
        serde_json::from_slice(&bytes)
            .map(JsonBody)
            .map_err(|e| ApiError::BadRequest(format!("the body is not valid JSON: {e}")))
    }
}

/// Conditional-request headers as a store precondition. Weak validators are refused (our
/// ETags are strong), and a malformed header is a 400 rather than being ignored.
pub struct Conditional(pub Precondition);

impl<S: Send + Sync> FromRequestParts<S> for Conditional {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        precondition(&parts.headers).map(Conditional)
    }
}

fn precondition(headers: &HeaderMap) -> Result<Precondition, ApiError> {
    if let Some(value) = headers.get(header::IF_NONE_MATCH) {
        return match value.to_str().map(str::trim) {
            Ok("*") => Ok(Precondition::Absent),
            _ => Err(ApiError::BadRequest(
                "If-None-Match supports only \"*\" on writes".into(),
            )),
        };
    }
    let Some(value) = headers.get(header::IF_MATCH) else {
        return Ok(Precondition::None);
    };
    let text = value
        .to_str()
        .map(str::trim)
        .map_err(|_| ApiError::BadRequest("If-Match is not ASCII".into()))?;
    if text == "*" {
        return Ok(Precondition::Exists);
    }
    parse_etag(text).map(Precondition::Matches).ok_or_else(|| {
        ApiError::BadRequest(format!(
            "If-Match must be \"*\" or an ETag we issued, got {text}"
        ))
    })
}

/// Renders an entity tag as a strong HTTP ETag.
pub fn format_etag(etag: &uuid::Uuid) -> String {
    format!("\"{etag}\"")
}

fn parse_etag(text: &str) -> Option<uuid::Uuid> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    uuid::Uuid::parse_str(inner).ok()
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Items per page, 1–1000 (default 100). Read as text so a bad value gets our 422.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 1000)]
    pub limit: Option<String>,
    /// Token from the previous page's `continuationToken`.
    pub continuation_token: Option<String>,
}

impl ListQuery {
    pub fn page(&self) -> Result<PageRequest, ApiError> {
        let limit = match self.limit.as_deref() {
            None => DEFAULT_LIMIT,
            Some(text) => match text.parse::<u32>() {
                Ok(n) if (1..=MAX_LIMIT).contains(&n) => n,
                _ => {
                    return Err(ApiError::validation(
                        "limit",
                        format!("must be an integer between 1 and {MAX_LIMIT}"),
                    ));
                }
            },
        };
        let after = match self.continuation_token.as_deref() {
            None => None,
            Some(token) => Some(decode_token(token).ok_or_else(|| {
                ApiError::validation("continuationToken", "is not a token this API issued")
            })?),
        };
        Ok(PageRequest { limit, after })
    }
}

/// Query strings that do not decode (e.g. `?limit=%FF`) become a 400 problem.
pub struct Query<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|q| Query(q.0))
            .map_err(|e| ApiError::BadRequest(format!("invalid query string: {}", e.body_text())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with(name: header::HeaderName, value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(name, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn conditional_headers() {
        let id = uuid::Uuid::new_v4();
        assert_eq!(precondition(&HeaderMap::new()).unwrap(), Precondition::None);
        assert_eq!(
            precondition(&with(header::IF_MATCH, "*")).unwrap(),
            Precondition::Exists
        );
        assert_eq!(
            precondition(&with(header::IF_NONE_MATCH, "*")).unwrap(),
            Precondition::Absent
        );
        assert_eq!(
            precondition(&with(header::IF_MATCH, &format_etag(&id))).unwrap(),
            Precondition::Matches(id)
        );
        assert!(precondition(&with(header::IF_MATCH, "W/\"x\"")).is_err());
        assert!(precondition(&with(header::IF_MATCH, &id.to_string())).is_err());
    }

    #[test]
    fn pagination_bounds() {
        let q = |limit: &str| {
            ListQuery {
                limit: Some(limit.into()),
                continuation_token: None,
            }
            .page()
        };
        assert_eq!(q("1").unwrap().limit, 1);
        assert_eq!(q("1000").unwrap().limit, 1000);
        for bad in ["0", "1001", "-1", "abc", "99999999999999999999"] {
            assert!(q(bad).is_err(), "{bad}");
        }
        let bad_token = ListQuery {
            limit: None,
            continuation_token: Some("%%".into()),
        };
        assert!(bad_token.page().is_err());
    }
}
