//! Calls an app's handler: `POST {handler.url}/{function}` with the custom-handler body,
//! signed per Standard Webhooks, and reads the response. 2xx with a well-formed body is
//! success; anything else, a timeout or a connection error is a failure. Some failures speak
//! for the handler rather than the message (no connection at all; 429 or 503): see
//! [`pressure`].
//!
//! Workers call it for queue deliveries (naming the worker and the app instance they act for,
//! `X-Shoal-Worker` and `X-Shoal-Instance`, so a handler can tell instances apart in its logs)
//! and the API's webhook ingress for HTTP triggers (forwarding the caller's `X-Request-Id`).
//! It is its own small crate so that the API does not link the worker's queue runtime and the
//! Azure SDKs just to make this one signed request.
//!
//! Every request goes through the egress policy ([`shoal_egress`]): a handler URL whose text
//! names a refused address fails without a connection, and a name is dialled only at addresses
//! the policy allows. Answers are read up to a cap ([`body`]).

mod body;
mod clients;
pub mod pressure;

use std::time::Duration;

use shoal_domain::egress::{AllowList, Refusal};
use shoal_domain::invocation::forward::{forwards_request_header, returns_response_header};
use shoal_domain::invocation::{HandlerResponse, ResponseError};
use shoal_domain::trace_context::TraceContext;
use shoal_domain::webhooks::{HEADER_ID, HEADER_SIGNATURE, HEADER_TIMESTAMP, WebhookSecret};
use shoal_egress::{Egress, refusal_in};
use url::Url;
use uuid::Uuid;

pub use body::DEFAULT_MAX_RESPONSE_BYTES;
use clients::SharedClients;
use shoal_egress::{ReadError, read_capped};

pub const HEADER_INVOCATION_ID: &str = "x-shoal-invocation-id";
pub const HEADER_WORKER: &str = "x-shoal-worker";
pub const HEADER_INSTANCE: &str = "x-shoal-instance";
pub const HEADER_REQUEST_ID: &str = "x-request-id";

/// Shared by every caller in a process, so connections to handlers are pooled.
#[derive(Clone, Debug)]
pub struct Invoker {
    egress: Egress,
    clients: SharedClients,
    max_response_bytes: usize,
}

/// One queue invocation's request.
pub struct Invocation<'a> {
    pub handler: &'a Url,
    pub function: &'a str,
    pub secret: &'a WebhookSecret,
    /// `webhook-id`: the message's id, stable across retries.
    pub webhook_id: &'a str,
    pub invocation_id: Uuid,
    /// The worker's name and the app instance's index.
    pub worker: &'a str,
    pub instance: u32,
    pub body: Vec<u8>,
    pub timeout: Duration,
    /// Output binding names the response may fill.
    pub outputs: &'a [&'a str],
    /// The attempt's place in its trace: sent as `traceparent` (and `tracestate`), so the
    /// handler's own spans join the message's trace.
    pub trace: Option<&'a TraceContext>,
}

/// One HTTP-triggered invocation's request, from the webhook ingress.
pub struct HttpInvocation<'a> {
    pub handler: &'a Url,
    pub function: &'a str,
    pub secret: &'a WebhookSecret,
    /// Both `webhook-id` and `X-Shoal-Invocation-Id`: an async invocation keeps it across
    /// retries, so the handler can use it as the idempotency key.
    pub invocation_id: Uuid,
    /// The caller's `X-Request-Id`, if any.
    pub request_id: Option<&'a str>,
    pub body: Vec<u8>,
    pub timeout: Duration,
    pub outputs: &'a [&'a str],
    /// The call's place in the caller's trace (`traceparent`, `tracestate`).
    pub trace: Option<&'a TraceContext>,
}

/// An HTTP-triggered invocation forwarded as is (`customHandler.enableForwardingHttpRequest`):
/// the caller's method, query, headers and body go to `{handler.url}/{function}`, signed like
/// every delivery, and the handler's response comes back whatever its status.
pub struct ForwardedRequest<'a> {
    pub handler: &'a Url,
    pub function: &'a str,
    pub secret: &'a WebhookSecret,
    /// `webhook-id` and `X-Shoal-Invocation-Id`.
    pub invocation_id: Uuid,
    pub method: &'a str,
    /// The raw query string without `?` (Shoal's own `mode` parameter already removed).
    pub query: Option<&'a str>,
    /// The caller's headers; those [`forwards_request_header`] refuses are dropped here.
    pub headers: &'a [(&'a str, &'a [u8])],
    pub body: Vec<u8>,
    pub timeout: Duration,
}

/// The handler's raw answer to a forwarded request.
#[derive(Debug)]
pub struct ForwardedResponse {
    pub status: u16,
    /// In the order received, without the headers [`returns_response_header`] refuses.
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
pub enum InvocationError {
    #[error("the handler did not answer within {0:?}")]
    Timeout(Duration),
    /// No connection was made: refused, a connect timeout, a name that does not resolve.
    #[error("the handler could not be reached: {0}")]
    Unreachable(String),
    /// The request failed after a connection was made (reset, closed mid-request).
    #[error("the handler could not be reached: {0}")]
    Connect(String),
    #[error("the handler answered {status}{}", if .body.is_empty() { String::new() } else { format!(": {}", .body) })]
    Status {
        status: u16,
        body: String,
        /// Its `Retry-After` header, as sent (see [`pressure::parse_retry_after`]).
        retry_after: Option<String>,
    },
    #[error("the handler's response is malformed: {0}")]
    Malformed(#[from] ResponseError),
    #[error("reading the handler's response failed: {0}")]
    Read(String),
    /// Nothing was sent: the destination is refused by the egress policy.
    #[error("not attempted: {0}")]
    Refused(Refusal),
    #[error("the handler's response is larger than {0} bytes")]
    TooLarge(usize),
}

/// How often an operator event is tried, and how long each try may take.
pub const EVENT_ATTEMPTS: u32 = 5;
const EVENT_TIMEOUT: Duration = Duration::from_secs(10);

/// How much of an error response body goes into the log line.
const ERROR_BODY_LIMIT: usize = 512;

impl Invoker {
    /// Requests go only where `egress` allows; answers are read up to
    /// [`DEFAULT_MAX_RESPONSE_BYTES`] unless [`Invoker::with_max_response_bytes`] says otherwise.
    pub fn new(egress: Egress) -> Invoker {
        Invoker {
            egress,
            clients: SharedClients::default(),
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
        }
    }

    pub fn with_max_response_bytes(mut self, limit: usize) -> Invoker {
        self.max_response_bytes = limit;
        self
    }

    pub fn max_response_bytes(&self) -> usize {
        self.max_response_bytes
    }

    /// The same pools and counters, with a tenant's allowances (set by a platform admin).
    pub fn for_tenant(&self, allow: &AllowList) -> Invoker {
        Invoker {
            egress: self.egress.for_tenant(allow),
            ..self.clone()
        }
    }

    pub fn egress(&self) -> &Egress {
        &self.egress
    }

    /// The client for `url`, after what its text decides: a refused literal address is not
    /// dialled at all.
    fn client(&self, url: &Url) -> Result<reqwest::Client, InvocationError> {
        self.egress
            .check_url(url)
            .map_err(InvocationError::Refused)?;
        let port = url.port_or_known_default().unwrap_or(80);
        self.clients
            .get(&self.egress, port)
            .map_err(|e| InvocationError::Connect(format!("building the HTTP client: {e}")))
    }

    pub async fn invoke(&self, call: Invocation<'_>) -> Result<HandlerResponse, InvocationError> {
        let invocation_id = call.invocation_id.to_string();
        let instance = call.instance.to_string();
        let trace = call.trace.map(TraceContext::headers).unwrap_or_default();
        let mut headers = vec![
            (HEADER_INVOCATION_ID, invocation_id.as_str()),
            (HEADER_WORKER, call.worker),
            (HEADER_INSTANCE, instance.as_str()),
        ];
        headers.extend(trace.iter().map(|(name, value)| (*name, value.as_str())));
        let signed = Signed {
            handler: call.handler,
            function: call.function,
            secret: call.secret,
            webhook_id: call.webhook_id,
            timeout: call.timeout,
        };
        self.post(signed, &headers, call.body, call.outputs).await
    }

    pub async fn invoke_http(
        &self,
        call: HttpInvocation<'_>,
    ) -> Result<HandlerResponse, InvocationError> {
        let invocation_id = call.invocation_id.to_string();
        let trace = call.trace.map(TraceContext::headers).unwrap_or_default();
        let mut headers = vec![(HEADER_INVOCATION_ID, invocation_id.as_str())];
        if let Some(request_id) = call.request_id {
            headers.push((HEADER_REQUEST_ID, request_id));
        }
        headers.extend(trace.iter().map(|(name, value)| (*name, value.as_str())));
        let signed = Signed {
            handler: call.handler,
            function: call.function,
            secret: call.secret,
            webhook_id: &invocation_id,
            timeout: call.timeout,
        };
        self.post(signed, &headers, call.body, call.outputs).await
    }

    /// Sends the caller's request as is. Any status the handler answers is its response to
    /// the caller, as in Azure; only a timeout or a broken connection is an error.
    pub async fn forward_http(
        &self,
        call: ForwardedRequest<'_>,
    ) -> Result<ForwardedResponse, InvocationError> {
        let mut url = function_url(call.handler, call.function);
        url.set_query(call.query);
        let method = reqwest::Method::from_bytes(call.method.as_bytes())
            .map_err(|e| InvocationError::Connect(format!("invalid method: {e}")))?;
        let webhook_id = call.invocation_id.to_string();
        let timestamp = chrono::Utc::now().timestamp();
        let signature = call.secret.sign(&webhook_id, timestamp, &call.body);
        let client = self.client(&url)?;
        let mut request = client.request(method, url).timeout(call.timeout);
        for (name, value) in call.headers {
            if forwards_request_header(name) {
                request = request.header(*name, *value);
            }
        }
        let response = request
            .header(HEADER_ID, &webhook_id)
            .header(HEADER_TIMESTAMP, timestamp.to_string())
            .header(HEADER_SIGNATURE, signature)
            .header(HEADER_INVOCATION_ID, &webhook_id)
            .body(call.body)
            .send()
            .await
            .map_err(|e| classify(e, call.timeout))?;
        let status = response.status().as_u16();
        let hop_by_hop = connection_tokens(response.headers());
        let headers = response
            .headers()
            .iter()
            .filter(|(name, _)| {
                returns_response_header(name.as_str()) && !hop_by_hop.contains(name.as_str())
            })
            .map(|(name, value)| (name.as_str().to_owned(), value.as_bytes().to_vec()))
            .collect();
        let body = self.read(response, call.timeout).await?;
        Ok(ForwardedResponse {
            status,
            headers,
            body,
        })
    }

    /// Posts an operator event (a circuit breaker's transition) to `url`, signed like every
    /// delivery with the app's secret; any 2xx is success. The caller retries.
    pub async fn post_event(
        &self,
        url: &Url,
        secret: &WebhookSecret,
        webhook_id: &str,
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<(), InvocationError> {
        let timestamp = chrono::Utc::now().timestamp();
        let signature = secret.sign(webhook_id, timestamp, &body);
        let response = self
            .client(url)?
            .post(url.clone())
            .timeout(timeout)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(HEADER_ID, webhook_id)
            .header(HEADER_TIMESTAMP, timestamp.to_string())
            .header(HEADER_SIGNATURE, signature)
            .body(body)
            .send()
            .await
            .map_err(|e| classify(e, timeout))?;
        let status = response.status();
        if !status.is_success() {
            let retry_after = retry_after(&response);
            let body = self.read(response, timeout).await.unwrap_or_default();
            return Err(InvocationError::Status {
                status: status.as_u16(),
                body: truncate(&String::from_utf8_lossy(&body), ERROR_BODY_LIMIT),
                retry_after,
            });
        }
        Ok(())
    }

    /// [`Invoker::post_event`] until it succeeds, at most [`EVENT_ATTEMPTS`] times, 1 s, 2 s,
    /// 4 s … apart; false when every attempt failed (each failure is logged).
    pub async fn deliver_event(
        &self,
        url: &Url,
        secret: &WebhookSecret,
        webhook_id: &str,
        body: Vec<u8>,
    ) -> bool {
        let mut delay = Duration::from_secs(1);
        for attempt in 1..=EVENT_ATTEMPTS {
            match self
                .post_event(url, secret, webhook_id, body.clone(), EVENT_TIMEOUT)
                .await
            {
                Ok(()) => return true,
                Err(InvocationError::Refused(refusal)) => {
                    // Trying again would be refused again; the refusal is counted and logged.
                    tracing::warn!(webhook_id, %refusal, "an operator event was not posted");
                    return false;
                }
                Err(e) => {
                    tracing::warn!(%url, webhook_id, attempt, error = %e, "posting an operator event failed");
                }
            }
            if attempt < EVENT_ATTEMPTS {
                tokio::time::sleep(delay).await;
                delay *= 2;
            }
        }
        false
    }

    async fn post(
        &self,
        call: Signed<'_>,
        headers: &[(&'static str, &str)],
        body: Vec<u8>,
        outputs: &[&str],
    ) -> Result<HandlerResponse, InvocationError> {
        let url = function_url(call.handler, call.function);
        let timestamp = chrono::Utc::now().timestamp();
        let signature = call.secret.sign(call.webhook_id, timestamp, &body);
        let mut request = self
            .client(&url)?
            .post(url)
            .timeout(call.timeout)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(HEADER_ID, call.webhook_id)
            .header(HEADER_TIMESTAMP, timestamp.to_string())
            .header(HEADER_SIGNATURE, signature);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request
            .body(body)
            .send()
            .await
            .map_err(|e| classify(e, call.timeout))?;
        let status = response.status();
        let retry_after = retry_after(&response);
        let body = self.read(response, call.timeout).await?;
        if !status.is_success() {
            return Err(InvocationError::Status {
                status: status.as_u16(),
                body: truncate(&String::from_utf8_lossy(&body), ERROR_BODY_LIMIT),
                retry_after,
            });
        }
        Ok(HandlerResponse::parse(&body, outputs)?)
    }
}

impl Invoker {
    /// A `GET` of `url` (the handler's base URL, or its declared health endpoint): the
    /// answer's status. Whether the handler takes connections is whether any answer came (as
    /// Azure's readiness check decides, see [`pressure`]); a health check passes on 200–399.
    /// Nothing of the body is read, redirects are not followed, and it goes through the
    /// egress policy like every call.
    pub async fn probe(&self, url: &Url, timeout: Duration) -> Result<u16, InvocationError> {
        self.client(url)?
            .get(url.clone())
            .timeout(timeout)
            .send()
            .await
            .map(|response| response.status().as_u16())
            .map_err(|e| classify(e, timeout))
    }

    /// The body up to the cap; the rest is never read.
    async fn read(
        &self,
        response: reqwest::Response,
        timeout: Duration,
    ) -> Result<Vec<u8>, InvocationError> {
        read_capped(response, self.max_response_bytes)
            .await
            .map_err(|e| match e {
                ReadError::TooLarge => InvocationError::TooLarge(self.max_response_bytes),
                ReadError::Failed(e) => match classify(e, timeout) {
                    InvocationError::Connect(m) | InvocationError::Unreachable(m) => {
                        InvocationError::Read(m)
                    }
                    other => other,
                },
            })
    }
}

/// The header names a response's `Connection` header lists, lower-cased.
fn connection_tokens(headers: &reqwest::header::HeaderMap) -> std::collections::HashSet<String> {
    headers
        .get_all(reqwest::header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

/// Where a signed request goes and what signs it.
struct Signed<'a> {
    handler: &'a Url,
    function: &'a str,
    secret: &'a WebhookSecret,
    webhook_id: &'a str,
    timeout: Duration,
}

/// `{handler.url}/{function}`, whether or not the handler URL ends with a slash.
pub fn function_url(handler: &Url, function: &str) -> Url {
    let mut url = handler.clone();
    if let Ok(mut segments) = url.path_segments_mut() {
        segments.pop_if_empty().push(function);
    }
    url
}

fn retry_after(response: &reqwest::Response) -> Option<String> {
    response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

fn classify(error: reqwest::Error, timeout: Duration) -> InvocationError {
    if let Some(refusal) = refusal_in(&error) {
        return InvocationError::Refused(refusal);
    }
    // Before the timeout: a connect timeout is both, and no request reached the handler.
    if error.is_connect() {
        return InvocationError::Unreachable(chain(&error));
    }
    if error.is_timeout() {
        return InvocationError::Timeout(timeout);
    }
    InvocationError::Connect(chain(&error))
}

/// The chain carries the useful part ("connection refused"); the URL is the tenant's own.
fn chain(error: &reqwest::Error) -> String {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(s) = source {
        message = format!("{message}: {s}");
        source = s.source();
    }
    message
}

fn truncate(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.trim().to_owned();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", text[..end].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_url_joins_with_or_without_trailing_slash() {
        for base in ["http://h:1/api", "http://h:1/api/"] {
            let url = function_url(&Url::parse(base).unwrap(), "orders");
            assert_eq!(url.as_str(), "http://h:1/api/orders");
        }
        let root = function_url(&Url::parse("http://h:1").unwrap(), "f");
        assert_eq!(root.as_str(), "http://h:1/f");
    }

    #[test]
    fn long_error_bodies_are_cut_on_a_character_boundary() {
        let text = "é".repeat(400);
        let cut = truncate(&text, 511);
        assert!(cut.ends_with('…'));
        assert!(cut.len() <= 511 + '…'.len_utf8());
    }
}
