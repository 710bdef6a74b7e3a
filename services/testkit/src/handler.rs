//! A function-app handler for tests: records every request the worker makes (function,
//! headers, JSON body, when), tracks how many run at once (overall, per function and per
//! `webhook-id`), and answers as the test tells it to.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Result, bail};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use serde_json::Value;
use tokio::time::Instant;

/// How the handler answers.
#[derive(Clone, Debug)]
pub enum Behaviour {
    /// 200 with this JSON body.
    Respond(Value),
    /// 200 with this raw body (for malformed responses).
    RespondRaw(&'static str),
    /// This status with an empty body.
    Status(u16),
    /// Wait, then 200 with this JSON body.
    Delay(Duration, Value),
    /// Wait a random time in the range, then 200 with this JSON body.
    RandomDelay(std::ops::Range<Duration>, Value),
    /// Wait as long as the function says for this request body, then 200 with this JSON body
    /// (e.g. some messages quick and others slow).
    DelayBy(fn(&Value) -> Duration, Value),
    /// 200 with the JSON body the function makes of this request body (e.g. a batch handler
    /// that reports some of its events failed).
    RespondBy(fn(&Value) -> Value),
    /// Never answer (until the connection is dropped).
    Hang,
    /// This status, headers and raw body: a plain HTTP answer, as a handler gives to a request
    /// forwarded with `customHandler.enableForwardingHttpRequest`.
    RespondHttp {
        status: u16,
        headers: Vec<(&'static str, &'static str)>,
        body: &'static str,
    },
}

#[derive(Clone, Debug)]
pub struct Recorded {
    pub function: String,
    pub method: Method,
    /// The raw query string, if the request had one.
    pub query: Option<String>,
    pub headers: HeaderMap,
    pub body: Value,
    pub raw: Bytes,
    pub at: Instant,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

#[derive(Default)]
struct Inner {
    requests: Mutex<Vec<Recorded>>,
    behaviour: Mutex<Option<Behaviour>>,
    /// Behaviours used for the first requests, in order, before `behaviour`.
    script: Mutex<Vec<Behaviour>>,
    running: AtomicUsize,
    max_running: AtomicUsize,
    running_ids: Mutex<HashMap<String, usize>>,
    overlapping_ids: AtomicUsize,
    /// Per function: (running now, most running at once).
    by_function: Mutex<HashMap<String, (usize, usize)>>,
    /// What `GET /healthz` answers (0 until set: 200), and how often it was called.
    health: std::sync::atomic::AtomicU16,
    health_checks: AtomicUsize,
}

/// Started on a free port; stops when dropped.
pub struct RecordingHandler {
    url: url::Url,
    inner: Arc<Inner>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for RecordingHandler {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl RecordingHandler {
    pub async fn start(behaviour: Behaviour) -> Result<RecordingHandler> {
        RecordingHandler::start_on(0, behaviour).await
    }

    /// A loopback port nothing listens on (bound, then closed): the URL of a handler that is
    /// down, to [`RecordingHandler::start_on`] later.
    pub async fn closed_port() -> Result<(u16, url::Url)> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        drop(listener);
        Ok((
            port,
            url::Url::parse(&format!("http://127.0.0.1:{port}/api"))?,
        ))
    }

    /// Started on this loopback port (0: a free one).
    pub async fn start_on(port: u16, behaviour: Behaviour) -> Result<RecordingHandler> {
        let inner = Arc::new(Inner::default());
        *lock(&inner.behaviour) = Some(behaviour);
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let port = listener.local_addr()?.port();
        let app = Router::new()
            // Any method: forwarded requests keep the caller's.
            .route("/api/{function}", any(handle))
            // A health endpoint (`handler.health.path`), not recorded with the invocations.
            .route("/healthz", axum::routing::get(health))
            .with_state(inner.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(RecordingHandler {
            url: url::Url::parse(&format!("http://127.0.0.1:{port}/api"))?,
            inner,
            task,
        })
    }

    /// The base URL to put in the app's `handler.url`.
    pub fn url(&self) -> &url::Url {
        &self.url
    }

    pub fn set_behaviour(&self, behaviour: Behaviour) {
        *lock(&self.inner.behaviour) = Some(behaviour);
    }

    /// Answer the next requests with these, in order, then fall back to the behaviour.
    pub fn script(&self, first: Vec<Behaviour>) {
        let mut script = lock(&self.inner.script);
        *script = first;
        script.reverse();
    }

    /// What `GET /healthz` answers from now on (200 until set).
    pub fn set_health(&self, status: u16) {
        self.inner.health.store(status, Ordering::SeqCst);
    }

    /// How many health checks (`GET /healthz`) arrived.
    pub fn health_checks(&self) -> usize {
        self.inner.health_checks.load(Ordering::SeqCst)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.inner.requests).clone()
    }

    pub fn count(&self) -> usize {
        lock(&self.inner.requests).len()
    }

    /// The most requests that were in progress at the same time.
    pub fn max_concurrent(&self) -> usize {
        self.inner.max_running.load(Ordering::SeqCst)
    }

    /// The most requests of `function` that were in progress at the same time.
    pub fn max_concurrent_of(&self, function: &str) -> usize {
        lock(&self.inner.by_function)
            .get(function)
            .map_or(0, |(_, max)| *max)
    }

    /// How many requests of `function` are in progress now.
    pub fn running_of(&self, function: &str) -> usize {
        lock(&self.inner.by_function)
            .get(function)
            .map_or(0, |(now, _)| *now)
    }

    /// How often a request arrived while another with the same `webhook-id` was in progress.
    pub fn overlapping_deliveries(&self) -> usize {
        self.inner.overlapping_ids.load(Ordering::SeqCst)
    }

    /// Waits until at least `n` requests have arrived.
    pub async fn wait_for(&self, n: usize, timeout: Duration) -> Result<Vec<Recorded>> {
        let deadline = Instant::now() + timeout;
        loop {
            let requests = self.requests();
            if requests.len() >= n {
                return Ok(requests);
            }
            if Instant::now() >= deadline {
                bail!("the handler saw {} requests, expected {n}", requests.len());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

async fn health(State(inner): State<Arc<Inner>>) -> StatusCode {
    inner.health_checks.fetch_add(1, Ordering::SeqCst);
    match inner.health.load(Ordering::SeqCst) {
        0 => StatusCode::OK,
        code => StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
    }
}

async fn handle(
    State(inner): State<Arc<Inner>>,
    Path(function): Path<String>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    raw: Bytes,
) -> Response {
    let id = headers
        .get("webhook-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    {
        let mut by_function = lock(&inner.by_function);
        let (now, max) = by_function.entry(function.clone()).or_default();
        *now += 1;
        *max = (*max).max(*now);
    }
    let body: Value = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    lock(&inner.requests).push(Recorded {
        function: function.clone(),
        method,
        query: uri.query().map(str::to_owned),
        body: body.clone(),
        headers,
        raw,
        at: Instant::now(),
    });
    let now = inner.running.fetch_add(1, Ordering::SeqCst) + 1;
    inner.max_running.fetch_max(now, Ordering::SeqCst);
    {
        let mut ids = lock(&inner.running_ids);
        let n = ids.entry(id.clone()).or_default();
        if *n > 0 {
            inner.overlapping_ids.fetch_add(1, Ordering::SeqCst);
        }
        *n += 1;
    }
    let _running = Running {
        inner: inner.clone(),
        id,
        function,
    };
    let behaviour = lock(&inner.script)
        .pop()
        .or_else(|| lock(&inner.behaviour).clone())
        .unwrap_or(Behaviour::Respond(Value::Null));
    match behaviour {
        Behaviour::Respond(body) => axum::Json(body).into_response(),
        Behaviour::RespondRaw(body) => body.into_response(),
        Behaviour::Status(code) => StatusCode::from_u16(code)
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
            .into_response(),
        Behaviour::Delay(wait, body) => {
            tokio::time::sleep(wait).await;
            axum::Json(body).into_response()
        }
        Behaviour::RandomDelay(range, body) => {
            let wait =
                rand::random_range(range.start.as_millis() as u64..range.end.as_millis() as u64);
            tokio::time::sleep(Duration::from_millis(wait)).await;
            axum::Json(body).into_response()
        }
        Behaviour::DelayBy(wait, answer) => {
            tokio::time::sleep(wait(&body)).await;
            axum::Json(answer).into_response()
        }
        Behaviour::RespondBy(answer) => axum::Json(answer(&body)).into_response(),
        Behaviour::RespondHttp {
            status,
            headers,
            body,
        } => {
            let mut response = body.into_response();
            *response.status_mut() =
                StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            for (name, value) in headers {
                if let (Ok(name), Ok(value)) = (
                    axum::http::HeaderName::from_bytes(name.as_bytes()),
                    axum::http::HeaderValue::from_str(value),
                ) {
                    response.headers_mut().insert(name, value);
                }
            }
            response
        }
        Behaviour::Hang => {
            std::future::pending::<()>().await;
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// Counts a request as running until its response is produced or it is dropped.
struct Running {
    inner: Arc<Inner>,
    id: String,
    function: String,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.inner.running.fetch_sub(1, Ordering::SeqCst);
        if let Some((now, _)) = lock(&self.inner.by_function).get_mut(&self.function) {
            *now -= 1;
        }
        let mut ids = lock(&self.inner.running_ids);
        if let Some(n) = ids.get_mut(&self.id) {
            *n -= 1;
            if *n == 0 {
                ids.remove(&self.id);
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
