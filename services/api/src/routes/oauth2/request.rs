//! The client credentials request as RFC 6749 defines it, and its errors: the form and the
//! client authentication (`client_secret_basic` or `client_secret_post`) checked before the
//! client is looked up, and the §5.2 error responses.

use std::collections::HashMap;

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::issuance::names_audience;
use crate::problem::ProtocolError;

const FORM: &str = "application/x-www-form-urlencoded";
const GRANT: &str = "client_credentials";

/// An RFC 6749 §5.2 error.
#[derive(Debug, PartialEq)]
pub struct OAuthError {
    status: StatusCode,
    error: &'static str,
    description: String,
    /// The client tried HTTP Basic: a 401 must carry a `WWW-Authenticate: Basic` challenge.
    basic: bool,
    retry_after: Option<u64>,
}

impl OAuthError {
    pub(super) fn invalid_request(description: impl Into<String>) -> OAuthError {
        OAuthError::new(StatusCode::BAD_REQUEST, "invalid_request", description)
    }

    pub(super) fn invalid_client(description: impl Into<String>, basic: bool) -> OAuthError {
        OAuthError {
            basic,
            ..OAuthError::new(StatusCode::UNAUTHORIZED, "invalid_client", description)
        }
    }

    pub(super) fn unavailable(
        status: StatusCode,
        description: &str,
        retry_after: u64,
    ) -> OAuthError {
        OAuthError {
            retry_after: Some(retry_after),
            ..OAuthError::new(status, "temporarily_unavailable", description)
        }
    }

    pub(super) fn new(
        status: StatusCode,
        error: &'static str,
        description: impl Into<String>,
    ) -> Self {
        OAuthError {
            status,
            error,
            description: description.into(),
            basic: false,
            retry_after: None,
        }
    }
}

impl IntoResponse for OAuthError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({
            "error": self.error,
            "error_description": self.description,
        });
        let mut response = (self.status, no_store(), Json(body)).into_response();
        if self.basic && self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"shoal\", charset=\"UTF-8\""),
            );
        }
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response.extensions_mut().insert(ProtocolError);
        response
    }
}

/// Token responses and errors must not be cached (RFC 6749 §5.1).
pub(super) fn no_store() -> [(header::HeaderName, &'static str); 2] {
    [
        (header::CACHE_CONTROL, "no-store"),
        (header::PRAGMA, "no-cache"),
    ]
}

/// A well-formed client credentials request.
#[derive(PartialEq)]
pub(super) struct ClientCredentials {
    pub client_id: String,
    pub secret: String,
    pub basic: bool,
}

impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field("basic", &self.basic)
            .finish_non_exhaustive()
    }
}

/// Checks the request's form and client authentication (without looking the client up).
pub(super) fn parse(
    content_type: Option<&str>,
    authorization: Option<&str>,
    body: &[u8],
    audience: &str,
) -> Result<ClientCredentials, OAuthError> {
    let is_form = content_type
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case(FORM));
    if !is_form {
        return Err(OAuthError::invalid_request(format!(
            "the request body must be {FORM}"
        )));
    }
    let mut params: HashMap<String, String> = HashMap::new();
    for (name, value) in url::form_urlencoded::parse(body) {
        if params.insert(name.to_string(), value.to_string()).is_some() {
            return Err(OAuthError::invalid_request(format!(
                "the parameter {name} is repeated"
            )));
        }
    }
    match params.get("grant_type").map(String::as_str) {
        None => return Err(OAuthError::invalid_request("grant_type is required")),
        Some(GRANT) => {}
        Some(_) => {
            return Err(OAuthError::new(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                "only the client_credentials grant is supported",
            ));
        }
    }
    let credentials = client_credentials(authorization, &params)?;
    match (params.get("scope"), params.get("resource")) {
        (None, None) => Err(OAuthError::invalid_request(format!(
            "scope is required ({audience}/.default)"
        ))),
        (Some(_), Some(_)) => Err(OAuthError::invalid_request(
            "send scope or resource, not both",
        )),
        (Some(requested), None) | (None, Some(requested)) => {
            let scopes: Vec<&str> = requested.split_whitespace().collect();
            if scopes.len() == 1 && names_audience(audience, scopes[0]) {
                Ok(credentials)
            } else {
                Err(OAuthError::new(
                    StatusCode::BAD_REQUEST,
                    "invalid_scope",
                    format!("Shoal issues tokens only for {audience}/.default"),
                ))
            }
        }
    }
}

/// `client_secret_basic` or `client_secret_post`, exactly one of them.
fn client_credentials(
    authorization: Option<&str>,
    params: &HashMap<String, String>,
) -> Result<ClientCredentials, OAuthError> {
    let form_id = params.get("client_id");
    let form_secret = params.get("client_secret");
    let Some(authorization) = authorization else {
        let client_id = form_id
            .filter(|id| !id.is_empty())
            .ok_or_else(|| OAuthError::invalid_request("client_id is required"))?;
        let secret = form_secret
            .filter(|s| !s.is_empty())
            .ok_or_else(|| OAuthError::invalid_client("client_secret is required", false))?;
        return Ok(ClientCredentials {
            client_id: client_id.clone(),
            secret: secret.clone(),
            basic: false,
        });
    };
    let (scheme, encoded) = authorization.split_once(' ').unwrap_or((authorization, ""));
    if !scheme.eq_ignore_ascii_case("Basic") {
        return Err(OAuthError::invalid_client(
            "client authentication must be HTTP Basic or client_secret in the form",
            true,
        ));
    }
    if form_secret.is_some() {
        return Err(OAuthError::invalid_request(
            "use one client authentication method, not Basic and client_secret both",
        ));
    }
    let malformed = || OAuthError::invalid_client("the Basic credentials are malformed", true);
    let decoded = STANDARD
        .decode(encoded.trim())
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(malformed)?;
    let (id, secret) = decoded.split_once(':').ok_or_else(malformed)?;
    // RFC 6749 §2.3.1: both parts are form-urlencoded before encoding.
    let (id, secret) = (form_decode(id), form_decode(secret));
    if id.is_empty() || secret.is_empty() {
        return Err(malformed());
    }
    if form_id.is_some_and(|form_id| *form_id != id) {
        return Err(OAuthError::invalid_request(
            "client_id differs from the Basic credentials",
        ));
    }
    Ok(ClientCredentials {
        client_id: id,
        secret,
        basic: true,
    })
}

fn form_decode(text: &str) -> String {
    let replaced = text.replace('+', " ");
    percent_encoding::percent_decode_str(&replaced)
        .decode_utf8_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const AUD: &str = "api://shoal";
    const CLIENT: &str = "00000000-0000-4000-8000-000000000001";

    fn form(body: &str) -> Result<ClientCredentials, OAuthError> {
        parse(Some(FORM), None, body.as_bytes(), AUD)
    }

    fn basic(id: &str, secret: &str) -> String {
        format!("Basic {}", STANDARD.encode(format!("{id}:{secret}")))
    }

    fn error_of(result: Result<ClientCredentials, OAuthError>) -> (u16, &'static str, bool) {
        let error = result.unwrap_err();
        (error.status.as_u16(), error.error, error.basic)
    }

    #[test]
    fn post_and_basic_credentials_are_read() {
        let ok = format!(
            "grant_type=client_credentials&client_id={CLIENT}&client_secret=s%2Bx&scope=api%3A%2F%2Fshoal%2F.default"
        );
        assert_eq!(
            form(&ok).unwrap(),
            ClientCredentials {
                client_id: CLIENT.into(),
                secret: "s+x".into(),
                basic: false
            }
        );
        let body = "grant_type=client_credentials&resource=api://shoal";
        let header = basic(CLIENT, "s%2Bx");
        let credentials = parse(
            Some("application/x-www-form-urlencoded; charset=utf-8"),
            Some(&header),
            body.as_bytes(),
            AUD,
        )
        .unwrap();
        assert_eq!(credentials.secret, "s+x");
        assert!(credentials.basic);
    }

    #[test]
    fn malformed_requests_get_the_rfc_6749_error() {
        let s = "client_secret=x";
        let c = format!("client_id={CLIENT}");
        let cases: Vec<(String, (u16, &str, bool))> = vec![
            (
                format!("{c}&{s}&scope=api://shoal/.default"),
                (400, "invalid_request", false),
            ),
            (
                format!("grant_type=password&{c}&{s}&scope=api://shoal/.default"),
                (400, "unsupported_grant_type", false),
            ),
            (
                format!("grant_type=client_credentials&{s}&scope=api://shoal/.default"),
                (400, "invalid_request", false),
            ),
            (
                format!("grant_type=client_credentials&{c}&scope=api://shoal/.default"),
                (401, "invalid_client", false),
            ),
            (
                format!(
                    "grant_type=client_credentials&{c}&client_secret=&scope=api://shoal/.default"
                ),
                (401, "invalid_client", false),
            ),
            (
                format!("grant_type=client_credentials&{c}&{s}"),
                (400, "invalid_request", false),
            ),
            (
                format!(
                    "grant_type=client_credentials&{c}&{s}&scope=https://vault.azure.net/.default"
                ),
                (400, "invalid_scope", false),
            ),
            (
                format!("grant_type=client_credentials&{c}&{s}&scope=api://shoal/.default openid"),
                (400, "invalid_scope", false),
            ),
            (
                format!("grant_type=client_credentials&{c}&{s}&resource=api://other"),
                (400, "invalid_scope", false),
            ),
            (
                format!(
                    "grant_type=client_credentials&{c}&{s}&scope=api://shoal/.default&resource=api://shoal"
                ),
                (400, "invalid_request", false),
            ),
            (
                format!(
                    "grant_type=client_credentials&grant_type=client_credentials&{c}&{s}&scope=api://shoal/.default"
                ),
                (400, "invalid_request", false),
            ),
        ];
        for (body, expected) in cases {
            assert_eq!(error_of(form(&body)), expected, "{body}");
        }
        let json = parse(Some("application/json"), None, b"{}", AUD);
        assert_eq!(error_of(json), (400, "invalid_request", false));
        assert_eq!(
            error_of(parse(None, None, b"", AUD)),
            (400, "invalid_request", false)
        );
    }

    #[test]
    fn basic_authentication_failures_carry_the_challenge() {
        let body = b"grant_type=client_credentials&scope=api://shoal/.default";
        for header in [
            "Basic !!!",
            "Basic",
            &format!("Basic {}", STANDARD.encode("no-colon")),
            "Bearer abc",
            &basic("", "x"),
        ] {
            assert_eq!(
                error_of(parse(Some(FORM), Some(header), body, AUD)),
                (401, "invalid_client", true),
                "{header}"
            );
        }
        // Two methods at once, or a form client_id contradicting Basic.
        let both = format!("{}&client_secret=x", std::str::from_utf8(body).unwrap());
        assert_eq!(
            error_of(parse(
                Some(FORM),
                Some(&basic(CLIENT, "x")),
                both.as_bytes(),
                AUD
            )),
            (400, "invalid_request", false)
        );
        let other = format!(
            "{}&client_id=someone-else",
            std::str::from_utf8(body).unwrap()
        );
        assert_eq!(
            error_of(parse(
                Some(FORM),
                Some(&basic(CLIENT, "x")),
                other.as_bytes(),
                AUD
            )),
            (400, "invalid_request", false)
        );
    }

    #[test]
    fn errors_and_debug_output_never_contain_the_secret() {
        let secret = "sp_TOP-SECRET-VALUE";
        let body = format!(
            "grant_type=client_credentials&client_id={CLIENT}&client_secret={secret}&scope=nope"
        );
        let error = form(&body).unwrap_err();
        assert!(!format!("{error:?}").contains(secret));
        let ok = form(&format!("grant_type=client_credentials&client_id={CLIENT}&client_secret={secret}&scope=api://shoal")).unwrap();
        assert!(!format!("{ok:?}").contains(secret));
    }
}
