//! Request extraction that answers bad input with problem+json: JSON bodies (malformed →
//! 400, wrong media type → 415, too large → 413 via the body limit), names in paths (422
//! with the parameter as the path; `path_names`), pagination and conditional-request headers.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use serde::Deserialize;
use shoal_store::page::{DEFAULT_LIMIT, MAX_LIMIT, PageRequest, decode_token};
use shoal_store::{EtagList, Precondition};
use utoipa::IntoParams;

use crate::error::ApiError;

mod path_names;
pub use path_names::{AppPath, FunctionPath, InvokedFunction, TenantPath, TenantScoped};

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

/// Conditional-request headers as a store precondition, read as RFC 9110 §13.1 defines them:
/// `*` or a list of entity tags, strong comparison for `If-Match` (a weak tag never matches)
/// and weak comparison for `If-None-Match`. A well-formed tag that is not current is the
/// handler's 412 (or 304 on a read); only a field that is not an entity-tag list is a 400.
pub struct Conditional(pub Precondition);

impl<S: Send + Sync> FromRequestParts<S> for Conditional {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        precondition(&parts.headers).map(Conditional)
    }
}

/// The conditional-request headers as the OpenAPI document describes them (read by
/// [`Conditional`], never deserialized from this struct).
#[derive(IntoParams)]
#[into_params(parameter_in = Header)]
#[allow(dead_code)]
pub struct ConditionalHeaders {
    /// `*` (any current representation) or entity tags, compared strongly: the request
    /// proceeds only when one names the current `ETag`, else 412.
    #[param(
        rename = "If-Match",
        value_type = String,
        required = false,
        pattern = r#"^(\*|(W/)?"[!#-~]*"( *, *(W/)?"[!#-~]*")*)$"#
    )]
    if_match: Option<String>,
    /// `*` or entity tags, compared weakly: when one names the current `ETag` a read answers
    /// 304 and a write 412; `*` on a write means "create only".
    #[param(
        rename = "If-None-Match",
        value_type = String,
        required = false,
        pattern = r#"^(\*|(W/)?"[!#-~]*"( *, *(W/)?"[!#-~]*")*)$"#
    )]
    if_none_match: Option<String>,
}

fn precondition(headers: &HeaderMap) -> Result<Precondition, ApiError> {
    let if_match = etag_list(headers, header::IF_MATCH, Comparison::Strong)?;
    let if_none_match = etag_list(headers, header::IF_NONE_MATCH, Comparison::Weak)?;
    Ok(if if_match.is_none() && if_none_match.is_none() {
        Precondition::None
    } else {
        Precondition::Headers {
            if_match,
            if_none_match,
        }
    })
}

/// RFC 9110 §8.8.3.2: strong comparison needs both tags strong; weak ignores `W/`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Comparison {
    Strong,
    Weak,
}

/// One header's `*` or entity tags (every field line of it, as one list), keeping the tags
/// that can equal an ETag of ours under `comparison`; None when the header is absent.
fn etag_list(
    headers: &HeaderMap,
    name: header::HeaderName,
    comparison: Comparison,
) -> Result<Option<EtagList>, ApiError> {
    let fields: Vec<&[u8]> = headers
        .get_all(&name)
        .iter()
        .map(|v| v.as_bytes())
        .collect();
    if fields.is_empty() {
        return Ok(None);
    }
    let malformed = || {
        ApiError::BadRequest(format!(
            "{name} must be \"*\" or a comma-separated list of entity tags such as \"abc\" or W/\"abc\""
        ))
    };
    if let [field] = fields[..]
        && field.trim_ascii() == b"*"
    {
        return Ok(Some(EtagList::Any));
    }
    let mut ours = Vec::new();
    for field in fields {
        for tag in entity_tags(field).ok_or_else(malformed)? {
            if tag.weak && comparison == Comparison::Strong {
                continue;
            }
            if let Some(etag) = our_etag(tag.opaque) {
                ours.push(etag);
            }
        }
    }
    Ok(Some(EtagList::Tags(ours)))
}

/// An entity tag as sent: `W/` or not, and the octets between its quotes.
#[derive(Debug, PartialEq, Eq)]
struct EntityTag<'a> {
    weak: bool,
    opaque: &'a [u8],
}

/// Parses `#entity-tag` (RFC 9110 §5.6.1, §8.8.3): tags separated by commas and optional
/// whitespace, empty elements allowed; a comma inside quotes belongs to the tag. None when the
/// field is anything else.
fn entity_tags(field: &[u8]) -> Option<Vec<EntityTag<'_>>> {
    let is_ows = |b: &u8| *b == b' ' || *b == b'\t';
    let is_etagc = |b: &u8| *b == 0x21 || (0x23..=0x7e).contains(b) || *b >= 0x80;
    let mut tags = Vec::new();
    let mut rest = field;
    loop {
        rest = rest.trim_ascii_start();
        match rest.first() {
            None => return Some(tags),
            Some(b',') => {
                rest = &rest[1..];
                continue;
            }
            Some(_) => {}
        }
        let weak = rest.starts_with(b"W/");
        if weak {
            rest = &rest[2..];
        }
        rest = rest.strip_prefix(b"\"")?;
        let len = rest.iter().take_while(|b| is_etagc(b)).count();
        let (opaque, after) = rest.split_at(len);
        rest = after.strip_prefix(b"\"")?;
        tags.push(EntityTag { weak, opaque });
        let skipped = rest.iter().take_while(|b| is_ows(b)).count();
        rest = &rest[skipped..];
        match rest.first() {
            None => return Some(tags),
            Some(b',') => rest = &rest[1..],
            Some(_) => return None,
        }
    }
}

/// The ETag an opaque tag names when it is exactly one we issue (a hyphenated lowercase UUID,
/// as [`format_etag`] writes it); any other string is a tag no representation of ours has.
fn our_etag(opaque: &[u8]) -> Option<uuid::Uuid> {
    let text = std::str::from_utf8(opaque).ok()?;
    let etag = uuid::Uuid::parse_str(text).ok()?;
    (etag.hyphenated().to_string() == text).then_some(etag)
}

/// Renders an entity tag as a strong HTTP ETag.
pub fn format_etag(etag: &uuid::Uuid) -> String {
    format!("\"{etag}\"")
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

/// An integer query parameter (`field`, as written) within `range`, `default` when absent;
/// otherwise a 422 naming the field and the range.
pub fn query_integer(
    field: &str,
    text: Option<&str>,
    default: u64,
    range: (u64, u64),
) -> Result<u64, ApiError> {
    match text {
        None => Ok(default),
        Some(text) => match text.parse::<u64>() {
            Ok(n) if (range.0..=range.1).contains(&n) => Ok(n),
            _ => Err(ApiError::validation(
                field,
                format!("must be an integer between {} and {}", range.0, range.1),
            )),
        },
    }
}

impl ListQuery {
    pub fn page(&self) -> Result<PageRequest, ApiError> {
        let limit = query_integer(
            "limit",
            self.limit.as_deref(),
            u64::from(DEFAULT_LIMIT),
            (1, u64::from(MAX_LIMIT)),
        )? as u32;
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

    fn headers(fields: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in fields {
            headers.append(name, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    fn if_match(list: Option<EtagList>) -> Precondition {
        Precondition::Headers {
            if_match: list,
            if_none_match: None,
        }
    }

    fn if_none_match(list: Option<EtagList>) -> Precondition {
        Precondition::Headers {
            if_match: None,
            if_none_match: list,
        }
    }

    /// Header field lines as sent, in order.
    type HeaderFields = Vec<(header::HeaderName, String)>;

    #[test]
    fn conditional_headers() {
        let id = uuid::Uuid::new_v4();
        let other = uuid::Uuid::new_v4();
        let tag = format_etag(&id);
        let tags = |t: &[uuid::Uuid]| Some(EtagList::Tags(t.to_vec()));
        assert_eq!(precondition(&HeaderMap::new()).unwrap(), Precondition::None);
        let cases: Vec<(&str, HeaderFields, Precondition)> = vec![
            (
                "If-Match *",
                vec![(header::IF_MATCH, " * ".into())],
                if_match(Some(EtagList::Any)),
            ),
            (
                "If-None-Match *",
                vec![(header::IF_NONE_MATCH, "*".into())],
                if_none_match(Some(EtagList::Any)),
            ),
            (
                "our tag",
                vec![(header::IF_MATCH, tag.clone())],
                if_match(tags(&[id])),
            ),
            (
                "any other string is a tag that never matches",
                vec![(header::IF_MATCH, "\"xyzzy\"".into())],
                if_match(tags(&[])),
            ),
            (
                "the empty tag",
                vec![(header::IF_MATCH, "\"\"".into())],
                if_match(tags(&[])),
            ),
            (
                "weak never matches under strong comparison",
                vec![(header::IF_MATCH, format!("W/{tag}"))],
                if_match(tags(&[])),
            ),
            (
                "weak matches under weak comparison",
                vec![(header::IF_NONE_MATCH, format!("W/{tag}"))],
                if_none_match(tags(&[id])),
            ),
            (
                "uppercase is another opaque tag",
                vec![(header::IF_MATCH, tag.to_uppercase())],
                if_match(tags(&[])),
            ),
            (
                "a list, with empty elements and a comma inside quotes",
                vec![(
                    header::IF_MATCH,
                    format!(" ,\"a,b\", W/\"{other}\" ,{tag},,\"{other}\""),
                )],
                if_match(tags(&[id, other])),
            ),
            (
                "field lines are one list",
                vec![
                    (header::IF_NONE_MATCH, "\"x\"".into()),
                    (header::IF_NONE_MATCH, tag.clone()),
                ],
                if_none_match(tags(&[id])),
            ),
            (
                "both headers",
                vec![
                    (header::IF_MATCH, tag.clone()),
                    (header::IF_NONE_MATCH, "*".into()),
                ],
                Precondition::Headers {
                    if_match: tags(&[id]),
                    if_none_match: Some(EtagList::Any),
                },
            ),
        ];
        for (name, fields, expected) in cases {
            let fields: Vec<_> = fields
                .iter()
                .map(|(n, v)| (n.clone(), v.as_str()))
                .collect();
            assert_eq!(precondition(&headers(&fields)).unwrap(), expected, "{name}");
        }
    }

    #[test]
    fn malformed_conditional_headers_are_refused() {
        let id = uuid::Uuid::new_v4();
        for bad in [
            id.to_string(),
            "not-an-etag".into(),
            "\"unterminated".into(),
            "\"a\" \"b\"".into(),
            "\"a\"x".into(),
            "w/\"a\"".into(),
            "*, \"a\"".into(),
            "\"a\"b\"\"".into(),
        ] {
            for name in [header::IF_MATCH, header::IF_NONE_MATCH] {
                assert!(
                    precondition(&headers(&[(name.clone(), &bad)])).is_err(),
                    "{name}: {bad}"
                );
            }
        }
        let two_stars = headers(&[(header::IF_MATCH, "*"), (header::IF_MATCH, "*")]);
        assert!(precondition(&two_stars).is_err());
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
