//! The management API as the client commands call it: a route from `shoal_client::routes`
//! with its parameters, sent by the transport the Terraform provider uses too (`shoal-client`:
//! preconditions, JSON in and out, the `ETag` of every answer); anything but a success becomes
//! a [`Failure`] with the problem's detail.

use serde_json::Value;
use shoal_client::routes::Route;
use shoal_client::{ApiClient, Credentials, Request};
use url::Url;

pub use shoal_client::{Answer, Precondition};

use super::failure::{API_ERROR, Failure};

/// A signed-in client of one API for one tenant.
#[derive(Debug)]
pub struct Api {
    client: ApiClient,
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

impl Api {
    /// The API at `base` with `credentials`, for `tenant` (empty until it is known); the HTTP
    /// client names the CLI and bounds its waits.
    pub fn new(base: Url, credentials: Credentials, tenant: String) -> Result<Api, Failure> {
        let http = shoal_client::http_client(concat!("shoal-cli/", env!("CARGO_PKG_VERSION")))
            .map_err(|e| Failure::new(API_ERROR, e))?;
        Ok(Api {
            client: ApiClient::new(http, base, credentials),
            tenant,
        })
    }

    /// A bearer token now: a refused client secret fails here, before any command runs.
    pub async fn sign_in(&self) -> Result<(), Failure> {
        self.client.bearer().await.map_err(Failure::from_api)?;
        Ok(())
    }

    pub async fn send(&self, call: Call) -> Result<Answer, Failure> {
        let path = call.route.path(&call.params);
        let method = shoal_client::Method::from_bytes(call.route.method.as_bytes())
            .map_err(|e| Failure::new(API_ERROR, e.to_string()))?;
        let request = Request {
            method,
            path: &path,
            query: &call.query,
            body: call.body.as_ref(),
            precondition: &call.precondition,
        };
        self.client.send(&request).await.map_err(Failure::from_api)
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
