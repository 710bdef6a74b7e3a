//! The webhook figures' load: `connections` keep-alive connections, each sending one request
//! after the previous answer for the warm-up and then the measured time, recording every
//! latency. The direct target's signed request is built before its clock starts.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use bytes::Bytes;
use chrono::Utc;
use http::{HeaderName, HeaderValue, Method, StatusCode};
use shoal_domain::invocation::http::{HttpDelivery, HttpRequestData, http_payload};
use shoal_domain::webhooks::{HEADER_ID, HEADER_SIGNATURE, HEADER_TIMESTAMP, WebhookSecret};
use uuid::Uuid;

use super::BODY;
use crate::http::Connection;
use crate::load::LoadResult;

#[derive(Clone)]
pub enum Target {
    /// Through the ingress, with a bearer token.
    Shoal {
        addr: SocketAddr,
        token: String,
        path: String,
    },
    /// Straight to the handler, signed as Shoal signs.
    Direct {
        addr: SocketAddr,
        secret: WebhookSecret,
        path: String,
        url: String,
    },
}

impl Target {
    pub fn name(&self) -> &'static str {
        match self {
            Target::Shoal { .. } => "shoal",
            Target::Direct { .. } => "handler direct",
        }
    }

    fn addr(&self) -> SocketAddr {
        match self {
            Target::Shoal { addr, .. } | Target::Direct { addr, .. } => *addr,
        }
    }

    async fn connect(&self) -> Result<Connection> {
        let token = match self {
            Target::Shoal { token, .. } => Some(token.as_str()),
            Target::Direct { .. } => None,
        };
        Connection::open(self.addr(), token).await
    }

    /// The next request's extra headers and body.
    fn request(&self) -> Result<(Vec<(HeaderName, HeaderValue)>, Bytes)> {
        match self {
            Target::Shoal { .. } => Ok((Vec::new(), Bytes::from_static(BODY))),
            Target::Direct { secret, url, .. } => {
                let host = url
                    .trim_start_matches("http://")
                    .split('/')
                    .next()
                    .unwrap_or_default();
                let headers = [("content-type", "application/json"), ("host", host)];
                let request = HttpRequestData {
                    method: "POST",
                    url,
                    query: None,
                    headers: &headers,
                    body: BODY,
                };
                let id = Uuid::now_v7().to_string();
                let payload = http_payload(&HttpDelivery {
                    binding: "req",
                    function: "echo",
                    request: &request,
                    now: Utc::now(),
                    rand_guid: &Uuid::new_v4().to_string(),
                });
                let body = serde_json::to_vec(&payload)?;
                let timestamp = Utc::now().timestamp();
                let signature = secret.sign(&id, timestamp, &body);
                let headers = vec![
                    (
                        HeaderName::from_static(HEADER_ID),
                        HeaderValue::from_str(&id)?,
                    ),
                    (
                        HeaderName::from_static(HEADER_TIMESTAMP),
                        HeaderValue::from(timestamp),
                    ),
                    (
                        HeaderName::from_static(HEADER_SIGNATURE),
                        HeaderValue::from_str(&signature)?,
                    ),
                    (
                        HeaderName::from_static("x-shoal-invocation-id"),
                        HeaderValue::from_str(&id)?,
                    ),
                ];
                Ok((headers, Bytes::from(body)))
            }
        }
    }

    fn path(&self) -> &str {
        match self {
            Target::Shoal { path, .. } | Target::Direct { path, .. } => path,
        }
    }

    /// Both answer 200; through the ingress the body is the function's "ok".
    fn accepts(&self, status: StatusCode, body: &[u8]) -> bool {
        match self {
            Target::Shoal { .. } => status == StatusCode::OK && body == b"ok",
            Target::Direct { .. } => status == StatusCode::OK,
        }
    }
}

pub async fn run(
    target: &Target,
    connections: usize,
    warmup: Duration,
    duration: Duration,
) -> Result<LoadResult> {
    let measure_from = Instant::now() + warmup;
    let until = measure_from + duration;
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..connections {
        let connection = target.connect().await?;
        let target = target.clone();
        tasks.spawn(async move { client(target, connection, measure_from, until, duration).await });
    }
    let mut total = LoadResult::empty(duration)?;
    while let Some(joined) = tasks.join_next().await {
        total.merge(joined.context("a webhook load task panicked")??)?;
    }
    Ok(total)
}

async fn client(
    target: Target,
    mut connection: Connection,
    measure_from: Instant,
    until: Instant,
    duration: Duration,
) -> Result<LoadResult> {
    let mut result = LoadResult::empty(duration)?;
    loop {
        let (headers, body) = target.request()?;
        let start = Instant::now();
        if start >= until {
            return Ok(result);
        }
        let sent = connection
            .send_with(Method::POST, target.path(), &headers, Some(body))
            .await;
        let elapsed = start.elapsed();
        let measured = start >= measure_from;
        if measured {
            result.requests += 1;
        }
        match sent {
            Ok((status, answer)) if target.accepts(status, &answer) => {
                if measured {
                    let micros = u64::try_from(elapsed.as_micros().max(1)).unwrap_or(u64::MAX);
                    result.latencies.saturating_record(micros);
                }
            }
            Ok((status, answer)) => {
                if measured {
                    let answer: String =
                        String::from_utf8_lossy(&answer).chars().take(300).collect();
                    result.fail(format!(
                        "{} POST {}: {status}: {answer}",
                        target.name(),
                        target.path()
                    ));
                }
            }
            Err(error) => {
                if measured {
                    result.fail(format!(
                        "{} POST {}: {error:#}",
                        target.name(),
                        target.path()
                    ));
                }
                connection = target.connect().await?;
            }
        }
    }
}
