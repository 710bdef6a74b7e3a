//! The trivial function-app handler of the queue figures: answers every request with `200 {}`
//! (success for Shoal's custom-handler protocol) after reading its body, and counts requests.
//! Shoal's worker and the Python consumer call the same one, over keep-alive HTTP/1.1. The
//! webhook figures use it too, answering with an HTTP response instead.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// What the handler has seen since it started or was last reset.
pub struct Tally {
    requests: AtomicU64,
    /// When each request arrived, kept only by a handler started with [`Handler::failing`].
    arrivals: Option<std::sync::Mutex<Vec<Instant>>>,
    /// Each request's wall-clock arrival, path and `webhook-id`, kept only by a handler
    /// started with [`Handler::stamping`] (the timer figure's).
    stamps: Option<std::sync::Mutex<Vec<Stamp>>>,
    /// Nanoseconds from `base` to the first request, plus one; 0 before the first request.
    first: AtomicU64,
    base: Instant,
}

/// One request as a stamping handler keeps it.
#[derive(Clone, Debug)]
pub struct Stamp {
    pub at: std::time::SystemTime,
    pub path: String,
    pub webhook_id: String,
}

impl Tally {
    fn new(keep: Keep) -> Tally {
        Tally {
            requests: AtomicU64::new(0),
            arrivals: (keep == Keep::Arrivals).then(|| std::sync::Mutex::new(Vec::new())),
            stamps: (keep == Keep::Stamps).then(|| std::sync::Mutex::new(Vec::new())),
            first: AtomicU64::new(0),
            base: Instant::now(),
        }
    }

    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Acquire)
    }

    /// When the first request arrived.
    pub fn first(&self) -> Option<Instant> {
        match self.first.load(Ordering::Acquire) {
            0 => None,
            nanos => Some(self.base + Duration::from_nanos(nanos - 1)),
        }
    }

    /// When the `n`th request (from 1) arrived, if the handler keeps arrivals and had that many.
    pub fn arrival(&self, n: usize) -> Option<Instant> {
        let arrivals = self.arrivals.as_ref()?;
        let mut arrivals = arrivals.lock().unwrap_or_else(|p| p.into_inner()).clone();
        arrivals.sort();
        arrivals.get(n.checked_sub(1)?).copied()
    }

    /// The requests' stamps, if the handler keeps them.
    pub fn stamps(&self) -> Vec<Stamp> {
        self.stamps.as_ref().map_or_else(Vec::new, |stamps| {
            stamps.lock().unwrap_or_else(|p| p.into_inner()).clone()
        })
    }

    /// Back to no requests, for the next round.
    pub fn reset(&self) {
        self.first.store(0, Ordering::Release);
        self.requests.store(0, Ordering::Release);
        if let Some(arrivals) = &self.arrivals {
            arrivals.lock().unwrap_or_else(|p| p.into_inner()).clear();
        }
    }

    fn stamp(&self, stamp: impl FnOnce() -> Stamp) {
        if let Some(stamps) = &self.stamps {
            let stamp = stamp();
            stamps.lock().unwrap_or_else(|p| p.into_inner()).push(stamp);
        }
    }

    fn count(&self) {
        if self.first.load(Ordering::Acquire) == 0 {
            let nanos = u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX - 1);
            let _ = self
                .first
                .compare_exchange(0, nanos + 1, Ordering::AcqRel, Ordering::Acquire);
        }
        self.requests.fetch_add(1, Ordering::AcqRel);
        if let Some(arrivals) = &self.arrivals {
            arrivals
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(Instant::now());
        }
    }
}

/// A running handler on a free loopback port; stops accepting when dropped.
pub struct Handler {
    addr: SocketAddr,
    tally: Arc<Tally>,
    task: JoinHandle<()>,
}

impl Handler {
    pub async fn start() -> Result<Handler> {
        Self::start_answering(Bytes::from_static(b"{}")).await
    }

    /// A handler answering every request with `200` and this JSON body (the webhook bench's
    /// handler sets an HTTP response).
    pub async fn start_answering(answer: Bytes) -> Result<Handler> {
        Self::start_with(
            Answer {
                status: http::StatusCode::OK,
                body: answer,
            },
            Keep::Count,
        )
        .await
    }

    /// A handler failing every request with `500` (a final failure for Shoal), keeping when
    /// each arrived: the circuit breaker figures.
    pub async fn failing() -> Result<Handler> {
        Self::start_with(
            Answer {
                status: http::StatusCode::INTERNAL_SERVER_ERROR,
                body: Bytes::new(),
            },
            Keep::Arrivals,
        )
        .await
    }

    /// A handler answering `200 {}` that keeps each request's wall-clock arrival, path and
    /// `webhook-id`: the timer figure.
    pub async fn stamping() -> Result<Handler> {
        Self::start_with(
            Answer {
                status: http::StatusCode::OK,
                body: Bytes::from_static(b"{}"),
            },
            Keep::Stamps,
        )
        .await
    }

    async fn start_with(answer: Answer, keep: Keep) -> Result<Handler> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .context("the bench handler cannot bind a port")?;
        let addr = listener.local_addr()?;
        let tally = Arc::new(Tally::new(keep));
        let task = tokio::spawn(accept(listener, tally.clone(), answer));
        Ok(Handler { addr, tally, task })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`: Shoal posts to `{url}/{function}`, the Python consumer to
    /// whatever path it is given.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn tally(&self) -> &Tally {
        &self.tally
    }
}

impl Drop for Handler {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What the handler keeps of each request besides counting it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    Count,
    Arrivals,
    Stamps,
}

/// What the handler answers every request with.
#[derive(Clone)]
struct Answer {
    status: http::StatusCode,
    body: Bytes,
}

async fn accept(listener: TcpListener, tally: Arc<Tally>, body: Answer) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let tally = tally.clone();
        let body = body.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| answer(request, tally.clone(), body.clone()));
            // A connection error (the client went away) only ends this connection.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn answer(
    request: Request<Incoming>,
    tally: Arc<Tally>,
    answer: Answer,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let at = std::time::SystemTime::now();
    tally.stamp(|| Stamp {
        at,
        path: request.uri().path().to_owned(),
        webhook_id: request
            .headers()
            .get("webhook-id")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned(),
    });
    // Read the whole body, as a real handler would, before answering.
    let _ = request.into_body().collect().await;
    tally.count();
    let mut response = Response::new(Full::new(answer.body));
    *response.status_mut() = answer.status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::Connection;
    use http::{Method, StatusCode};

    #[tokio::test]
    async fn answers_empty_json_and_counts_requests() {
        let handler = Handler::start().await.unwrap();
        assert_eq!(handler.tally().requests(), 0);
        assert!(handler.tally().first().is_none());
        let addr = handler.url().trim_start_matches("http://").parse().unwrap();
        let mut connection = Connection::open(addr, None).await.unwrap();
        for _ in 0..3 {
            let body = Bytes::from_static(br#"{"Data":{"msg":"x"},"Metadata":{}}"#);
            let (status, answer) = connection
                .send(Method::POST, "/bench", Some(body))
                .await
                .unwrap();
            assert_eq!((status, &answer[..]), (StatusCode::OK, &b"{}"[..]));
        }
        assert_eq!(handler.tally().requests(), 3);
        let first = handler.tally().first().unwrap();
        assert!(first <= Instant::now());
        handler.tally().reset();
        assert_eq!(handler.tally().requests(), 0);
        assert!(handler.tally().first().is_none());
        let body = Bytes::from_static(b"{}");
        connection
            .send(Method::POST, "/bench", Some(body))
            .await
            .unwrap();
        assert!(handler.tally().first().unwrap() > first);
    }
}
