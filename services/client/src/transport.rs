//! One call to the management API: the bearer token, the body as JSON (a merge patch for
//! `PATCH`), the precondition headers, and the answer's JSON body and `ETag`.

use std::time::Duration;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::{Method, StatusCode, header};
use serde_json::Value;
use url::Url;

use crate::credentials::Credentials;
use crate::precondition::{Precondition, entity_tag};
use crate::problem::{ApiError, Problem, Refusal, body_text};

/// What stays as it is in a path segment: RFC 3986's unreserved characters.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// `segments` as an absolute path, each percent-encoded as one segment (a name holding `/`
/// or `#` stays one segment).
pub fn encoded_path(segments: &[impl AsRef<str>]) -> String {
    let mut path = String::new();
    for segment in segments {
        path.push('/');
        path.extend(utf8_percent_encode(segment.as_ref(), SEGMENT));
    }
    path
}

/// An HTTP client naming its caller (`shoal-cli/0.1.0`) with bounded waits.
pub fn http_client(user_agent: &str) -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .user_agent(user_agent)
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(60))
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

/// A success: its JSON body (`Null` when empty) and entity tag.
#[derive(Clone, Debug)]
pub struct Answer {
    pub body: Value,
    pub etag: Option<String>,
}

/// One request: an API path from [`encoded_path`], its query, body and precondition.
pub struct Request<'a> {
    pub method: Method,
    pub path: &'a str,
    pub query: &'a [(&'a str, String)],
    pub body: Option<&'a Value>,
    pub precondition: &'a Precondition,
}

impl<'a> Request<'a> {
    pub fn new(method: Method, path: &'a str) -> Request<'a> {
        Request {
            method,
            path,
            query: &[],
            body: None,
            precondition: &Precondition::None,
        }
    }
}

/// A client of one API with one credential.
#[derive(Debug)]
pub struct ApiClient {
    http: reqwest::Client,
    /// The API's base URL (`https://shoal.example.com`, or with a path, `…/shoal`).
    base: Url,
    credentials: Credentials,
}

impl ApiClient {
    pub fn new(http: reqwest::Client, base: Url, credentials: Credentials) -> ApiClient {
        ApiClient {
            http,
            base,
            credentials,
        }
    }

    /// `path` under the base URL, whose own path (if any) it keeps.
    fn at(&self, path: &str) -> Url {
        let mut url = self.base.clone();
        let joined = format!("{}{path}", self.base.path().trim_end_matches('/'));
        url.set_path(&joined);
        url.set_query(None);
        url
    }

    /// A bearer token for the next call (renewed when a client secret's has little life left).
    pub async fn bearer(&self) -> Result<String, ApiError> {
        self.credentials
            .bearer(&self.http, &self.at("/oauth2/token"))
            .await
            .map_err(ApiError::Token)
    }

    pub async fn send(&self, request: &Request<'_>) -> Result<Answer, ApiError> {
        let method = method_name(&request.method);
        let mut url = self.at(request.path);
        if !request.query.is_empty() {
            url.query_pairs_mut().extend_pairs(request.query);
        }
        let token = self.bearer().await?;
        let mut outgoing = self
            .http
            .request(request.method.clone(), url.clone())
            .bearer_auth(token);
        if let Some(body) = request.body {
            let content_type = if request.method == Method::PATCH {
                "application/merge-patch+json"
            } else {
                "application/json"
            };
            outgoing = outgoing
                .header(header::CONTENT_TYPE, content_type)
                .body(body.to_string());
        }
        outgoing = match request.precondition {
            Precondition::None => outgoing,
            Precondition::Absent => outgoing.header(header::IF_NONE_MATCH, "*"),
            Precondition::Matches(etag) => outgoing.header(header::IF_MATCH, entity_tag(etag)),
        };
        let unreachable = |e: reqwest::Error| ApiError::Unreachable {
            method,
            url: url.to_string(),
            reason: e.to_string(),
        };
        let response = outgoing.send().await.map_err(unreachable)?;
        let status = response.status();
        let etag = response
            .headers()
            .get(header::ETAG)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let bytes = response.bytes().await.map_err(unreachable)?;
        if !status.is_success() {
            return Err(ApiError::Refused(Box::new(Refusal {
                status: status.as_u16(),
                method,
                path: request.path.to_owned(),
                url,
                problem: Problem::parse(&bytes),
                text: body_text(&bytes),
            })));
        }
        let body = if bytes.is_empty() || status == StatusCode::NO_CONTENT {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).map_err(|e| ApiError::NotJson {
                method,
                url: url.to_string(),
                path: url.path().to_owned(),
                status,
                reason: e.to_string(),
            })?
        };
        // Documents also carry their tag in the body; the header wins when both are there.
        let etag = etag.or_else(|| body.get("etag").and_then(Value::as_str).map(entity_tag));
        Ok(Answer { body, etag })
    }

    /// The resource at `path`, or `None` when it does not exist (404).
    pub async fn get(&self, path: &str) -> Result<Option<Answer>, ApiError> {
        match self.send(&Request::new(Method::GET, path)).await {
            Ok(answer) => Ok(Some(answer)),
            Err(e) if e.status() == Some(404) => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub async fn put(
        &self,
        path: &str,
        body: &Value,
        precondition: &Precondition,
    ) -> Result<Answer, ApiError> {
        self.send(&Request {
            body: Some(body),
            precondition,
            ..Request::new(Method::PUT, path)
        })
        .await
    }

    pub async fn post(&self, path: &str, body: &Value) -> Result<Answer, ApiError> {
        self.send(&Request {
            body: Some(body),
            ..Request::new(Method::POST, path)
        })
        .await
    }

    /// Deletes the resource; one that is already gone counts as deleted.
    pub async fn delete(&self, path: &str) -> Result<(), ApiError> {
        match self.send(&Request::new(Method::DELETE, path)).await {
            Ok(_) => Ok(()),
            Err(e) if e.status() == Some(404) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

fn method_name(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::PUT => "PUT",
        Method::POST => "POST",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        _ => "request",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_encoded_one_by_one() {
        assert_eq!(
            encoded_path(&["v1", "tenants", "contoso", "a#b?c/d+e", "Function Invoker"]),
            "/v1/tenants/contoso/a%23b%3Fc%2Fd%2Be/Function%20Invoker"
        );
    }

    #[test]
    fn paths_keep_the_base_urls_own_path() {
        for (base, url) in [
            ("http://127.0.0.1:8080", "http://127.0.0.1:8080/v1/me"),
            ("http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1/me"),
            (
                "https://example.com/shoal/",
                "https://example.com/shoal/v1/me",
            ),
            (
                "https://example.com/shoal",
                "https://example.com/shoal/v1/me",
            ),
        ] {
            let client = ApiClient::new(
                reqwest::Client::new(),
                Url::parse(base).unwrap(),
                Credentials::Token(String::new()),
            );
            assert_eq!(client.at("/v1/me").as_str(), url, "{base}");
        }
    }
}
