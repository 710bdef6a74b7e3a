//! The HTTP trigger over the custom-handler protocol, as the Azure Functions host speaks it
//! when `enableForwardingHttpRequest` is off: the caller's request becomes `Data.<trigger>` =
//! `{Url, Method, Query, Headers, Params, Body}`, and the handler's `Outputs.<http output>` (or
//! `ReturnValue` for a `$return` output) becomes the response sent back to the caller.
//!
//! Everything here is pure; the API reads the request and writes the response.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value, json};

use crate::invocation::HandlerResponse;

/// Request headers never handed to the handler: the caller's credentials for Shoal (a handler
/// must not be able to replay them) and hop-by-hop headers, which describe the caller's
/// connection to Shoal, not the request.
pub(crate) const WITHHELD_REQUEST_HEADERS: [&str; 9] = [
    "authorization",
    "proxy-authorization",
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// Response headers Shoal sets itself or that describe only the handler's connection.
pub(crate) const WITHHELD_RESPONSE_HEADERS: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
];

/// The caller's request as the ingress received it.
#[derive(Clone, Debug, PartialEq)]
pub struct HttpRequestData<'a> {
    pub method: &'a str,
    /// The URL the caller used (`Data.req.Url`).
    pub url: &'a str,
    /// The raw query string, without `?`.
    pub query: Option<&'a str>,
    /// Header names (any case) and values, in the order received; repeated names allowed.
    pub headers: &'a [(&'a str, &'a str)],
    pub body: &'a [u8],
}

/// One HTTP-triggered invocation.
#[derive(Clone, Debug, PartialEq)]
pub struct HttpDelivery<'a> {
    /// The trigger binding's name (`Data.<name>`, usually `req`).
    pub binding: &'a str,
    pub function: &'a str,
    pub request: &'a HttpRequestData<'a>,
    pub now: DateTime<Utc>,
    /// `sys.RandGuid`, supplied by the caller to keep this pure.
    pub rand_guid: &'a str,
}

/// The request body for an HTTP-triggered invocation. `Metadata` carries what the host's
/// binding data holds for an HTTP trigger: `Query`, `Headers` (one string per name) and `sys`.
pub fn http_payload(delivery: &HttpDelivery<'_>) -> Value {
    let request = delivery.request;
    let query = query_object(request.query);
    let headers = header_lists(request.headers);
    let flat_headers: Map<String, Value> = headers
        .iter()
        .map(|(name, values)| (name.clone(), Value::String(values.join(", "))))
        .collect();
    let mut req = Map::new();
    req.insert("Url".into(), Value::String(request.url.to_owned()));
    req.insert("Method".into(), Value::String(request.method.to_owned()));
    req.insert("Query".into(), Value::Object(query.clone()));
    req.insert(
        "Headers".into(),
        Value::Object(
            headers
                .into_iter()
                .map(|(name, values)| {
                    let values = values.into_iter().map(Value::String).collect();
                    (name, Value::Array(values))
                })
                .collect(),
        ),
    );
    // Shoal has no route templates: the function is the whole route.
    req.insert("Params".into(), Value::Object(Map::new()));
    if !request.body.is_empty() {
        req.insert("Body".into(), body_value(request));
    }
    let mut data = Map::new();
    data.insert(delivery.binding.to_owned(), Value::Object(req));
    json!({
        "Data": data,
        "Metadata": {
            "Query": query,
            "Headers": flat_headers,
            "sys": {
                "MethodName": delivery.function,
                "UtcNow": delivery.now.to_rfc3339_opts(SecondsFormat::AutoSi, true),
                "RandGuid": delivery.rand_guid,
            }
        }
    })
}

/// `Body`: the text for textual content, base64 for `application/octet-stream` and
/// `multipart/*` (as Azure's host sends bytes) and for a body that is not UTF-8, which a JSON
/// string could not carry unchanged.
fn body_value(request: &HttpRequestData<'_>) -> Value {
    let content_type = request
        .headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-type"))
        .map(|(_, value)| value.trim().to_ascii_lowercase())
        .unwrap_or_default();
    let binary = content_type.starts_with("application/octet-stream")
        || content_type.starts_with("multipart/");
    match std::str::from_utf8(request.body) {
        Ok(text) if !binary => Value::String(text.to_owned()),
        _ => Value::String(STANDARD.encode(request.body)),
    }
}

/// Query parameters, decoded; a repeated name's values joined with `,` as ASP.NET Core's
/// `StringValues` prints them.
fn query_object(query: Option<&str>) -> Map<String, Value> {
    let mut merged: Map<String, Value> = Map::new();
    for (name, value) in url::form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        match merged.get_mut(name.as_ref()) {
            Some(Value::String(existing)) => {
                existing.push(',');
                existing.push_str(&value);
            }
            _ => {
                merged.insert(name.into_owned(), Value::String(value.into_owned()));
            }
        }
    }
    merged
}

/// Headers by canonical name (`content-type` → `Content-Type`, as the host's examples show
/// them; HTTP/2 and hyper lower-case names on the wire), each with its values in order,
/// without the withheld ones.
fn header_lists(headers: &[(&str, &str)]) -> BTreeMap<String, Vec<String>> {
    let mut lists: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, value) in headers {
        let lower = name.to_ascii_lowercase();
        if WITHHELD_REQUEST_HEADERS.contains(&lower.as_str()) {
            continue;
        }
        lists
            .entry(canonical_header_name(&lower))
            .or_default()
            .push((*value).to_owned());
    }
    lists
}

/// `x-request-id` → `X-Request-Id`.
pub fn canonical_header_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = true;
    for c in name.chars() {
        if upper {
            out.push(c.to_ascii_uppercase());
        } else {
            out.push(c.to_ascii_lowercase());
        }
        upper = c == '-';
    }
    out
}

/// Which of a function's output bindings carries the HTTP response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpOutput<'a> {
    /// An `http` output with this name: `Outputs.<name>`.
    Named(&'a str),
    /// An `http` output named `$return`: `ReturnValue`.
    Return,
    /// No `http` output: the caller gets 204, as from a function that sets no response.
    None,
}

/// The response to send back to the caller.
#[derive(Clone, Debug, PartialEq)]
pub struct HttpResult {
    pub status: u16,
    /// Validated names (as the handler wrote them) and values, hop-by-hop ones removed.
    pub headers: Vec<(String, String)>,
    pub body: HttpBody,
}

#[derive(Clone, Debug, PartialEq)]
pub enum HttpBody {
    Empty,
    /// A string `body`, sent as is.
    Text(String),
    /// Any other JSON `body`, sent serialized.
    Json(Value),
}

impl HttpBody {
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            HttpBody::Empty => Vec::new(),
            HttpBody::Text(text) => text.as_bytes().to_vec(),
            HttpBody::Json(value) => value.to_string().into_bytes(),
        }
    }

    /// The body as the invocation status shows it: a string, JSON, or null.
    pub fn to_json(&self) -> Value {
        match self {
            HttpBody::Empty => Value::Null,
            HttpBody::Text(text) => Value::String(text.clone()),
            HttpBody::Json(value) => value.clone(),
        }
    }
}

/// A response field the handler got wrong, with its path in the handler's response
/// (`Outputs.res.statusCode`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ResponseFieldError {
    pub path: String,
    pub message: String,
}

/// Statuses a handler may answer with: final responses only (a 1xx is not one, and 101 would
/// hand the caller's connection over).
pub const STATUS_RANGE: std::ops::RangeInclusive<u16> = 200..=599;

/// Maps the handler's response to the caller's. A string or other non-object value (or an
/// object with none of `statusCode`, `status`, `headers`, `body`) is a 200 body; an object
/// with them is read as Azure's HTTP response object. Keys match case-insensitively, as the
/// host's do; other keys (`cookies`, `isRaw`, …) are ignored.
pub fn http_response(
    response: &HandlerResponse,
    output: HttpOutput<'_>,
) -> Result<HttpResult, ResponseFieldError> {
    let (value, path) = match output {
        HttpOutput::None => (None, String::new()),
        HttpOutput::Return => (response.return_value.as_ref(), "ReturnValue".to_owned()),
        HttpOutput::Named(name) => (
            response
                .outputs
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v),
            format!("Outputs.{name}"),
        ),
    };
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(HttpResult {
            status: 204,
            headers: Vec::new(),
            body: HttpBody::Empty,
        });
    };
    let fields = value.as_object().filter(|object| {
        object.keys().any(|k| {
            ["statuscode", "status", "headers", "body"].contains(&k.to_ascii_lowercase().as_str())
        })
    });
    let Some(fields) = fields else {
        return Ok(with_content_type(HttpResult {
            status: 200,
            headers: Vec::new(),
            body: body_of(value),
        }));
    };
    let field = |name: &str| {
        fields
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .filter(|(_, v)| !v.is_null())
    };
    let status = match field("statusCode").or_else(|| field("status")) {
        None => 200,
        Some((key, value)) => status_of(value).ok_or_else(|| ResponseFieldError {
            path: format!("{path}.{key}"),
            message: format!(
                "must be an HTTP status between {} and {} (a number or a string of digits)",
                STATUS_RANGE.start(),
                STATUS_RANGE.end()
            ),
        })?,
    };
    let headers = match field("headers") {
        None => Vec::new(),
        Some((key, value)) => headers_of(value, &format!("{path}.{key}"))?,
    };
    let body = field("body").map_or(HttpBody::Empty, |(_, v)| body_of(v));
    Ok(with_content_type(HttpResult {
        status,
        headers,
        body,
    }))
}

fn status_of(value: &Value) -> Option<u16> {
    let status = match value {
        Value::Number(n) => u16::try_from(n.as_u64()?).ok()?,
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
            s.parse().ok()?
        }
        _ => return None,
    };
    STATUS_RANGE.contains(&status).then_some(status)
}

fn body_of(value: &Value) -> HttpBody {
    match value {
        Value::Null => HttpBody::Empty,
        Value::String(s) if s.is_empty() => HttpBody::Empty,
        Value::String(s) => HttpBody::Text(s.clone()),
        other => HttpBody::Json(other.clone()),
    }
}

fn headers_of(value: &Value, path: &str) -> Result<Vec<(String, String)>, ResponseFieldError> {
    let Value::Object(map) = value else {
        return Err(ResponseFieldError {
            path: path.to_owned(),
            message: "must be an object of header names and values".into(),
        });
    };
    let mut headers = Vec::with_capacity(map.len());
    for (name, value) in map {
        let at = format!("{path}.{name}");
        if !is_token(name) {
            return Err(ResponseFieldError {
                path: at,
                message: "is not a valid header name".into(),
            });
        }
        if WITHHELD_RESPONSE_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
            continue;
        }
        let values: Vec<&Value> = match value {
            Value::Array(items) => items.iter().collect(),
            Value::Null => Vec::new(),
            other => vec![other],
        };
        for item in values {
            let text = match item {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => {
                    return Err(ResponseFieldError {
                        path: at,
                        message: "must be a string, a number, a boolean or an array of them".into(),
                    });
                }
            };
            if !is_field_value(&text) {
                return Err(ResponseFieldError {
                    path: at,
                    message: "must not contain control characters such as CR or LF".into(),
                });
            }
            headers.push((name.clone(), text));
        }
    }
    Ok(headers)
}

/// A body without a `Content-Type` gets the one its shape implies.
fn with_content_type(mut result: HttpResult) -> HttpResult {
    let has_type = result
        .headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("content-type"));
    let implied = match &result.body {
        HttpBody::Empty => None,
        HttpBody::Text(_) => Some("text/plain; charset=utf-8"),
        HttpBody::Json(_) => Some("application/json; charset=utf-8"),
    };
    if let (false, Some(implied)) = (has_type, implied) {
        result
            .headers
            .push(("Content-Type".to_owned(), implied.to_owned()));
    }
    result
}

/// RFC 9110 `token`: what a header name may be.
pub fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// RFC 9110 `field-value`: visible characters, spaces and tabs (and non-ASCII text, which
/// travels as UTF-8 octets), never CR, LF, NUL or other controls.
fn is_field_value(value: &str) -> bool {
    value.chars().all(|c| c == '\t' || !(c.is_control()))
}

#[cfg(test)]
mod tests;
