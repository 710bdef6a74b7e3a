//! Why a client command failed, and the exit code scripts see for it (docs/cli.md, "Exit
//! codes"): 0 done, 1 the API refused or failed (including a 422 with its field paths),
//! 2 a usage error (clap's own code), 3 not logged in or not allowed, 4 not found, 5 changed
//! concurrently (409/412: read again and retry).

use shoal_client::{ApiError, Problem, TokenError};

pub const API_ERROR: u8 = 1;
pub const USAGE: u8 = 2;
pub const AUTH: u8 = 3;
pub const NOT_FOUND: u8 = 4;
pub const CONFLICT: u8 = 5;

/// A failed client command: what to print on stderr and the exit code.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

impl Failure {
    pub fn new(code: u8, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
        }
    }

    pub fn usage(message: impl Into<String>) -> Failure {
        Failure::new(USAGE, message)
    }

    /// The API's answer `status` with its problem document (or whatever body it sent), as
    /// the transport hands it over in [`Failure::from_api`]; the unit tests start from bytes.
    #[cfg(test)]
    pub fn from_answer(method: &str, path: &str, status: u16, body: &[u8]) -> Failure {
        Failure::refused(
            method,
            path,
            status,
            Problem::parse(body).as_ref(),
            &shoal_client::body_text(body),
        )
    }

    fn refused(
        method: &str,
        path: &str,
        status: u16,
        problem: Option<&Problem>,
        text: &str,
    ) -> Failure {
        let code = match status {
            401 | 403 => AUTH,
            404 => NOT_FOUND,
            409 | 412 => CONFLICT,
            _ => API_ERROR,
        };
        Failure::new(code, describe(method, path, status, problem, text))
    }

    /// A call that failed: refused by the API, unanswered, or without a token.
    pub fn from_api(error: ApiError) -> Failure {
        match error {
            ApiError::Refused(refusal) => Failure::refused(
                refusal.method,
                refusal.url.path(),
                refusal.status,
                refusal.problem.as_ref(),
                &refusal.text,
            ),
            ApiError::Unreachable { url, reason, .. } => {
                Failure::new(API_ERROR, format!("cannot reach {url}: {reason}"))
            }
            ApiError::NotJson {
                method,
                path,
                status,
                reason,
                ..
            } => Failure::new(
                API_ERROR,
                format!("{method} {path} answered {status} with a body that is not JSON: {reason}"),
            ),
            ApiError::Token(error) => Failure::new(AUTH, token_message(error)),
        }
    }
}

/// Why the token endpoint gave no token.
fn token_message(error: TokenError) -> String {
    match error {
        TokenError::Unreachable { url, reason } => format!("cannot reach {url}: {reason}"),
        TokenError::UnexpectedBody { url, reason } => {
            format!("{url} answered an unexpected body: {reason}")
        }
        TokenError::Refused {
            url,
            client_id,
            status,
            error,
            description,
        } => format!("{url} refused client id {client_id}: {status} {error} {description}"),
    }
}

/// `GET /v1/… answered 422 Unprocessable Entity: detail` and one line per invalid field,
/// `  handler.url: must be an absolute http(s) URL`; a body that is not a problem document
/// (a proxy's error page) is shown as its text.
fn describe(
    method: &str,
    path: &str,
    status: u16,
    problem: Option<&Problem>,
    text: &str,
) -> String {
    let Some(problem) = problem else {
        return format!("{method} {path} answered {status}: {}", text.trim());
    };
    let mut out = format!("{method} {path} answered {status} {}", problem.title);
    if !problem.detail.is_empty() {
        out.push_str(": ");
        out.push_str(&problem.detail);
    }
    for error in &problem.errors {
        let at = if error.path.is_empty() {
            "(body)"
        } else {
            &error.path
        };
        out.push_str(&format!("\n  {at}: {}", error.message));
    }
    if status == 401 {
        out.push_str("\n  the token was refused (expired?): log in again with `shoal login`");
    }
    if status == 412 {
        out.push_str("\n  it changed since it was read; read it again and retry");
    }
    if let Some(id) = &problem.request_id {
        out.push_str(&format!("\n  request id: {id}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_exit_codes_and_fields_are_listed() {
        let problem = br#"{"type":"about:blank","title":"Unprocessable Entity","status":422,
            "detail":"the request body is invalid","requestId":"r1",
            "errors":[{"path":"handler.url","message":"must be an absolute URL"}]}"#;
        let cases = [
            (422, API_ERROR),
            (500, API_ERROR),
            (401, AUTH),
            (403, AUTH),
            (404, NOT_FOUND),
            (409, CONFLICT),
            (412, CONFLICT),
        ];
        for (status, code) in cases {
            let failure = Failure::from_answer("PUT", "/v1/x", status, problem);
            assert_eq!(failure.code, code, "{status}");
        }
        let text = Failure::from_answer("PUT", "/v1/x", 422, problem).message;
        assert!(
            text.contains("the request body is invalid\n  handler.url: must be an absolute URL"),
            "{text}"
        );
        assert!(text.contains("request id: r1"), "{text}");
        let plain = Failure::from_answer("GET", "/v1/x", 502, b"bad gateway");
        assert_eq!(plain.message, "GET /v1/x answered 502: bad gateway");
    }
}
