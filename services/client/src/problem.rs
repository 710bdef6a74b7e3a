//! Why a call failed. A refusal keeps the API's problem document (services/api/src/error.rs,
//! `application/problem+json`) whole, field paths included (`handler.url`,
//! `bindings[0].queueName`); what to show of it is the caller's choice.

use reqwest::StatusCode;
use serde::Deserialize;

use crate::credentials::TokenError;

/// A problem document, as far as the clients use it.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Problem {
    pub title: String,
    pub detail: String,
    pub request_id: Option<String>,
    pub errors: Vec<FieldError>,
}

/// One invalid field: its path in the request body and what is wrong with it.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct FieldError {
    pub path: String,
    pub message: String,
}

/// How much of a body that is not a problem document (a proxy's error page) is kept.
const TEXT_CHARS: usize = 500;

impl Problem {
    /// `body` as a problem document; `None` when it is not one.
    pub fn parse(body: &[u8]) -> Option<Problem> {
        serde_json::from_slice(body).ok()
    }
}

/// The start of `body` as text, for an answer that is not a problem document.
pub fn body_text(body: &[u8]) -> String {
    String::from_utf8_lossy(body)
        .chars()
        .take(TEXT_CHARS)
        .collect()
}

/// An answer with a 4xx or 5xx status.
#[derive(Clone, Debug)]
pub struct Refusal {
    pub status: u16,
    pub method: &'static str,
    /// The API path asked for (`/v1/tenants/t/apps/a`), as the caller gave it.
    pub path: String,
    /// The whole URL asked for, base path and query included.
    pub url: url::Url,
    /// The problem document; `None` when the body was not one.
    pub problem: Option<Problem>,
    /// The start of the body, when it was not a problem document.
    pub text: String,
}

impl Refusal {
    /// The problem document, or one made of the status's reason and the body's text.
    pub fn problem_or_text(&self) -> Problem {
        self.problem.clone().unwrap_or_else(|| Problem {
            title: StatusCode::from_u16(self.status)
                .ok()
                .and_then(|s| s.canonical_reason())
                .unwrap_or_default()
                .to_owned(),
            detail: self.text.clone(),
            ..Problem::default()
        })
    }
}

/// Why a call to the API failed (small, so every `Result` that carries it stays small: the
/// refusal, with its whole problem document, is boxed).
#[derive(Clone, Debug)]
pub enum ApiError {
    /// No answer: connection refused, timeout, TLS.
    Unreachable {
        method: &'static str,
        url: String,
        reason: String,
    },
    /// A success whose body is not JSON: not the API's answer.
    NotJson {
        method: &'static str,
        url: String,
        /// The URL's path (base path included).
        path: String,
        status: StatusCode,
        reason: String,
    },
    /// An answer with a 4xx or 5xx status.
    Refused(Box<Refusal>),
    /// No bearer token could be had.
    Token(TokenError),
}

/// One line naming the request and what went wrong, for logs and warnings.
impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApiError::Unreachable {
                method,
                url,
                reason,
            } => write!(f, "{method} {url}: {reason}"),
            ApiError::NotJson {
                method,
                url,
                status,
                reason,
                ..
            } => write!(
                f,
                "{method} {url} answered {status} with a body that is not JSON: {reason}"
            ),
            ApiError::Refused(refusal) => {
                let problem = refusal.problem_or_text();
                write!(
                    f,
                    "{} {} answered {} {}: {}",
                    refusal.method, refusal.path, refusal.status, problem.title, problem.detail
                )
            }
            ApiError::Token(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for ApiError {}

impl ApiError {
    /// The status of a refusal.
    pub fn status(&self) -> Option<u16> {
        match self {
            ApiError::Refused(refusal) => Some(refusal.status),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_that_is_not_a_problem_document_becomes_one_of_its_status_and_text() {
        let refusal = Refusal {
            status: 502,
            method: "GET",
            path: "/v1/x".into(),
            url: url::Url::parse("http://127.0.0.1/v1/x").unwrap(),
            problem: Problem::parse(b"bad gateway"),
            text: body_text(b"bad gateway"),
        };
        let problem = refusal.problem_or_text();
        assert_eq!(
            (problem.title.as_str(), problem.detail.as_str()),
            ("Bad Gateway", "bad gateway")
        );
        let parsed =
            Problem::parse(br#"{"title":"T","errors":[{"path":"a.b","message":"m"}]}"#).unwrap();
        assert_eq!(parsed.errors[0].path, "a.b");
        assert_eq!(body_text("é".repeat(600).as_bytes()).chars().count(), 500);
    }
}
