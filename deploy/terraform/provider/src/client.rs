//! The management API as the resources use it: JSON in and out, the `ETag` of every read and
//! write, preconditions (`If-Match` for updates, `If-None-Match: *` so a create never replaces
//! something that exists), and problem documents turned into [`ApiError`]s.

use reqwest::{Method, StatusCode, header};
use serde_json::Value;

use crate::credentials::Credentials;
use crate::problem::{ApiError, Problem};

/// What a write requires of the resource's current state.
#[derive(Clone, Debug)]
pub enum Precondition {
    None,
    /// Create only: 412 when the resource exists.
    Absent,
    /// Replace only the version Terraform last read: 412 when it changed since.
    Matches(String),
}

/// A resource as the API returned it.
#[derive(Clone, Debug)]
pub struct Entity {
    pub body: Value,
    pub etag: Option<String>,
}

#[derive(Debug)]
pub struct ApiClient {
    http: reqwest::Client,
    endpoint: String,
    credentials: Credentials,
}

impl ApiClient {
    /// `endpoint` is the API's base URL (`https://shoal.example.com`), without `/v1`.
    pub fn new(endpoint: &str, credentials: Credentials) -> Result<ApiClient, String> {
        let http = reqwest::Client::builder()
            .user_agent(concat!(
                "terraform-provider-shoal/",
                env!("CARGO_PKG_VERSION")
            ))
            .timeout(std::time::Duration::from_secs(60))
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(ApiClient {
            http,
            endpoint: endpoint.trim_end_matches('/').to_owned(),
            credentials,
        })
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The resource at `path`, or `None` when it does not exist (404).
    pub async fn get(&self, path: &str) -> Result<Option<Entity>, ApiError> {
        match self
            .send(Method::GET, path, None, &Precondition::None)
            .await
        {
            Ok(entity) => Ok(Some(entity)),
            Err(e) if e.status() == Some(404) => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub async fn put(
        &self,
        path: &str,
        body: &Value,
        precondition: &Precondition,
    ) -> Result<Entity, ApiError> {
        self.send(Method::PUT, path, Some(body), precondition).await
    }

    pub async fn post(&self, path: &str, body: &Value) -> Result<Entity, ApiError> {
        self.send(Method::POST, path, Some(body), &Precondition::None)
            .await
    }

    /// Deletes the resource; one that is already gone counts as deleted.
    pub async fn delete(&self, path: &str) -> Result<(), ApiError> {
        match self
            .send(Method::DELETE, path, None, &Precondition::None)
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.status() == Some(404) => Ok(()),
            Err(e) => Err(e),
        }
    }

    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        precondition: &Precondition,
    ) -> Result<Entity, ApiError> {
        let method_name = method_name(&method);
        let url = format!("{}{path}", self.endpoint);
        let token = self.credentials.bearer(&self.http, &self.endpoint).await?;
        let mut request = self.http.request(method, &url).bearer_auth(token);
        if let Some(body) = body {
            request = request.json(body);
        }
        request = match precondition {
            Precondition::None => request,
            Precondition::Absent => request.header(header::IF_NONE_MATCH, "*"),
            Precondition::Matches(etag) => request.header(header::IF_MATCH, etag),
        };
        let response = request
            .send()
            .await
            .map_err(|e| ApiError::Transport(format!("{method_name} {url}: {e}")))?;
        let status = response.status();
        let etag = response
            .headers()
            .get(header::ETAG)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let bytes = response
            .bytes()
            .await
            .map_err(|e| ApiError::Transport(format!("{method_name} {url}: {e}")))?;
        if status.is_success() {
            let body = if bytes.is_empty() || status == StatusCode::NO_CONTENT {
                Value::Null
            } else {
                serde_json::from_slice(&bytes).map_err(|e| {
                    ApiError::Transport(format!(
                        "{method_name} {url} answered {status} with a body that is not JSON: {e}"
                    ))
                })?
            };
            // Reads also carry the tag in the body; the header wins when both are there.
            let etag = etag.or_else(|| body.get("etag").and_then(Value::as_str).map(quote));
            return Ok(Entity { body, etag });
        }
        let problem = serde_json::from_slice::<Problem>(&bytes).unwrap_or_else(|_| Problem {
            title: status.canonical_reason().unwrap_or_default().to_owned(),
            detail: String::from_utf8_lossy(&bytes).chars().take(500).collect(),
            ..Problem::default()
        });
        Err(ApiError::Status {
            status: status.as_u16(),
            method: method_name,
            path: path.to_owned(),
            problem,
        })
    }
}

/// An entity tag as `If-Match` wants it (quoted), whether the body held it quoted or not.
fn quote(tag: &str) -> String {
    if tag.starts_with('"') || tag.starts_with("W/") {
        tag.to_owned()
    } else {
        format!("\"{tag}\"")
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
    use super::quote;

    #[test]
    fn tags_are_quoted_once() {
        assert_eq!(quote("abc"), "\"abc\"");
        assert_eq!(quote("\"abc\""), "\"abc\"");
        assert_eq!(quote("W/\"abc\""), "W/\"abc\"");
    }
}
