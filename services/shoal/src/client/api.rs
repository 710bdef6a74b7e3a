//! The management API as the client commands call it: a route from [`super::routes`] with its
//! parameters, JSON in and out, preconditions (`If-Match`, `If-None-Match: *`) and the `ETag`
//! of every answer; anything but a success becomes a [`Failure`] with the problem's detail.

use reqwest::{Method, header};
use serde_json::Value;
use url::Url;

use super::failure::{API_ERROR, Failure};
use super::routes::Route;

/// What a write requires of the resource's current state.
#[derive(Debug, Clone)]
pub enum Precondition {
    None,
    /// Create only: 412 when it exists.
    Absent,
    /// Only the version read: 412 when it changed since.
    Matches(String),
}

/// A success: its JSON body (`Null` when empty) and `ETag`.
#[derive(Debug)]
pub struct Answer {
    pub body: Value,
    pub etag: Option<String>,
}

/// A signed-in client of one API for one tenant.
#[derive(Debug)]
pub struct Api {
    http: reqwest::Client,
    base: Url,
    token: String,
    pub tenant: String,
}

/// One request: the route, its path parameters in order, query, body and precondition.
pub struct Call {
    pub route: Route,
    pub params: Vec<String>,
    pub query: Vec<(&'static str, String)>,
    pub body: Option<Value>,
    pub precondition: Precondition,
}

impl Call {
    pub fn new(route: Route, params: &[&str]) -> Call {
        Call {
            route,
            params: params.iter().map(|p| (*p).to_owned()).collect(),
            query: Vec::new(),
            body: None,
            precondition: Precondition::None,
        }
    }

    pub fn query(mut self, name: &'static str, value: impl ToString) -> Call {
        debug_assert!(
            self.route.query.contains(&name),
            "{name} is not in the route"
        );
        self.query.push((name, value.to_string()));
        self
    }

    pub fn body(mut self, body: Value) -> Call {
        self.body = Some(body);
        self
    }

    pub fn precondition(mut self, precondition: Precondition) -> Call {
        debug_assert!(self.route.conditional || matches!(precondition, Precondition::None));
        self.precondition = precondition;
        self
    }
}

/// The HTTP client of every command: a user agent naming the CLI, bounded waits.
pub fn http_client() -> Result<reqwest::Client, Failure> {
    reqwest::Client::builder()
        .user_agent(concat!("shoal-cli/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(std::time::Duration::from_secs(10))
        .timeout(std::time::Duration::from_secs(60))
        .build()
        .map_err(|e| Failure::new(API_ERROR, format!("cannot build the HTTP client: {e}")))
}

impl Api {
    pub fn new(http: reqwest::Client, base: Url, token: String, tenant: String) -> Api {
        Api {
            http,
            base,
            token,
            tenant,
        }
    }

    pub async fn send(&self, call: Call) -> Result<Answer, Failure> {
        let mut url = self.base.clone();
        {
            let mut path = url
                .path_segments_mut()
                .map_err(|()| Failure::usage(format!("{} cannot be an API URL", self.base)))?;
            path.pop_if_empty();
            for segment in call.route.segments(&call.params) {
                path.push(&segment);
            }
        }
        if !call.query.is_empty() {
            url.query_pairs_mut().extend_pairs(&call.query);
        }
        let path = url.path().to_owned();
        let method = Method::from_bytes(call.route.method.as_bytes())
            .map_err(|e| Failure::new(API_ERROR, e.to_string()))?;
        let mut request = self
            .http
            .request(method, url.clone())
            .bearer_auth(&self.token);
        if let Some(body) = &call.body {
            let content_type = if call.route.method == "PATCH" {
                "application/merge-patch+json"
            } else {
                "application/json"
            };
            request = request
                .header(header::CONTENT_TYPE, content_type)
                .body(body.to_string());
        }
        request = match &call.precondition {
            Precondition::None => request,
            Precondition::Absent => request.header(header::IF_NONE_MATCH, "*"),
            Precondition::Matches(etag) => request.header(header::IF_MATCH, entity_tag(etag)),
        };
        let unreachable =
            |e: reqwest::Error| Failure::new(API_ERROR, format!("cannot reach {url}: {e}"));
        let response = request.send().await.map_err(unreachable)?;
        let status = response.status();
        let etag = response
            .headers()
            .get(header::ETAG)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let bytes = response.bytes().await.map_err(unreachable)?;
        if !status.is_success() {
            return Err(Failure::from_answer(
                call.route.method,
                &path,
                status.as_u16(),
                &bytes,
            ));
        }
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).map_err(|e| {
                Failure::new(
                    API_ERROR,
                    format!(
                        "{} {path} answered {status} with a body that is not JSON: {e}",
                        call.route.method
                    ),
                )
            })?
        };
        Ok(Answer { body, etag })
    }

    /// Every item of a paged list (`items`, `continuationToken`).
    pub async fn list_all(&self, route: Route, params: &[&str]) -> Result<Vec<Value>, Failure> {
        let mut items = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut call = Call::new(route, params).query("limit", 1000);
            if let Some(token) = &token {
                call = call.query("continuationToken", token);
            }
            let page = self.send(call).await?.body;
            if let Some(page_items) = page["items"].as_array() {
                items.extend(page_items.iter().cloned());
            }
            match page["continuationToken"].as_str() {
                Some(next) if !next.is_empty() => token = Some(next.to_owned()),
                _ => return Ok(items),
            }
        }
    }
}

/// `etag` as an entity tag for `If-Match`: documents carry their `etag` bare (`8f0c…`), the
/// header quoted (`"8f0c…"`); a tag already quoted (or weak, `W/"…"`) is kept as given.
fn entity_tag(etag: &str) -> String {
    if etag.starts_with('"') || etag.starts_with("W/") {
        etag.to_owned()
    } else {
        format!("\"{etag}\"")
    }
}

#[cfg(test)]
mod tests {
    use super::entity_tag;

    #[test]
    fn a_documents_bare_etag_is_quoted_and_a_quoted_or_weak_one_kept() {
        for (given, sent) in [
            ("8f0c", "\"8f0c\""),
            ("\"8f0c\"", "\"8f0c\""),
            ("W/\"8f0c\"", "W/\"8f0c\""),
        ] {
            assert_eq!(entity_tag(given), sent);
        }
    }
}
