//! The HTTP load: a fixed number of tasks, each with its own keep-alive connection, sending one
//! request after another for a fixed time and recording every latency in an HDR histogram.
//! Requests started during the warm-up are sent but not counted.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use hdrhistogram::Histogram;
use hyper::{Method, StatusCode};
use rand::Rng;
use rand::SeedableRng;
use rand::rngs::SmallRng;

use crate::http::Connection;

/// A realistic app body: a handler and a few settings, one of them a secret.
pub const APP_BODY: &str = r#"{"handler":{"url":"http://127.0.0.1:9/handler"},"appSettings":{"AzureWebJobsStorage":"UseDevelopmentStorage=true","MySecret":"s3cr3t"}}"#;

/// Latencies are recorded in microseconds, up to a minute, with 3 significant digits.
const HIGHEST_LATENCY_US: u64 = 60_000_000;

pub struct LoadPlan {
    pub addr: SocketAddr,
    pub token: String,
    pub tenant: &'static str,
    pub apps: usize,
    pub connections: usize,
    /// Each connection sends at most one request this often (None: as fast as answers come).
    pub pace: Option<Duration>,
    pub warmup: Duration,
    pub duration: Duration,
    pub method: Method,
    /// Sent with every request (PUT); none for GET.
    pub body: Option<Bytes>,
}

/// What one load run measured.
pub struct LoadResult {
    /// Requests started in the measured window, failed ones included.
    pub requests: u64,
    pub errors: u64,
    /// The first failure seen, to say what went wrong.
    pub first_error: Option<String>,
    /// Latencies of the successful requests, in microseconds.
    pub latencies: Histogram<u64>,
    pub duration: Duration,
}

impl LoadResult {
    pub fn per_second(&self) -> f64 {
        (self.requests - self.errors) as f64 / self.duration.as_secs_f64()
    }

    pub fn error_rate(&self) -> f64 {
        if self.requests == 0 {
            return 1.0;
        }
        self.errors as f64 / self.requests as f64
    }

    pub fn quantile(&self, quantile: f64) -> Duration {
        Duration::from_micros(self.latencies.value_at_quantile(quantile))
    }

    pub(crate) fn empty(duration: Duration) -> Result<LoadResult> {
        Ok(LoadResult {
            requests: 0,
            errors: 0,
            first_error: None,
            latencies: Histogram::new_with_bounds(1, HIGHEST_LATENCY_US, 3)?,
            duration,
        })
    }

    pub(crate) fn merge(&mut self, other: LoadResult) -> Result<()> {
        self.requests += other.requests;
        self.errors += other.errors;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
        self.latencies.add(&other.latencies)?;
        Ok(())
    }

    pub(crate) fn fail(&mut self, error: String) {
        self.errors += 1;
        self.first_error.get_or_insert(error);
    }
}

/// Runs the plan and merges what every connection measured.
pub async fn run(plan: LoadPlan) -> Result<LoadResult> {
    let started = Instant::now();
    let measure_from = started + plan.warmup;
    let until = measure_from + plan.duration;
    let mut tasks = tokio::task::JoinSet::new();
    for index in 0..plan.connections {
        let connection = Connection::open(plan.addr, Some(&plan.token)).await?;
        let worker = Worker {
            addr: plan.addr,
            token: plan.token.clone(),
            tenant: plan.tenant,
            apps: plan.apps,
            method: plan.method.clone(),
            body: plan.body.clone(),
            expected: StatusCode::OK,
            pace: plan.pace,
            rng: SmallRng::seed_from_u64(index as u64),
        };
        tasks.spawn(worker.run(connection, measure_from, until, plan.duration));
    }
    let mut total = LoadResult::empty(plan.duration)?;
    while let Some(joined) = tasks.join_next().await {
        total.merge(joined.context("a load task panicked")??)?;
    }
    Ok(total)
}

/// One connection's loop.
struct Worker {
    addr: SocketAddr,
    token: String,
    tenant: &'static str,
    apps: usize,
    method: Method,
    body: Option<Bytes>,
    expected: StatusCode,
    pace: Option<Duration>,
    rng: SmallRng,
}

impl Worker {
    async fn run(
        mut self,
        mut connection: Connection,
        measure_from: Instant,
        until: Instant,
        duration: Duration,
    ) -> Result<LoadResult> {
        let mut result = LoadResult::empty(duration)?;
        let mut path = String::with_capacity(64);
        let mut next = Instant::now();
        loop {
            if let Some(pace) = self.pace {
                tokio::time::sleep_until(next.into()).await;
                next += pace;
            }
            let start = Instant::now();
            if start >= until {
                return Ok(result);
            }
            let app = self.rng.random_range(1..=self.apps);
            path.clear();
            path.push_str("/v1/tenants/");
            path.push_str(self.tenant);
            path.push_str("/apps/app-");
            path.push_str(&app.to_string());
            let sent = connection
                .send(self.method.clone(), &path, self.body.clone())
                .await;
            let measured = start >= measure_from;
            if measured {
                result.requests += 1;
            }
            match sent {
                Ok((status, _)) if status == self.expected => {
                    if measured {
                        let micros = start.elapsed().as_micros().max(1);
                        result
                            .latencies
                            .saturating_record(u64::try_from(micros).unwrap_or(u64::MAX));
                    }
                }
                Ok((status, body)) => {
                    if measured {
                        result.fail(describe(&self.method, &path, status, &body));
                    }
                }
                Err(error) => {
                    if measured {
                        result.fail(format!("{} {path}: {error:#}", self.method));
                    }
                    connection = self.reconnect(until).await?;
                }
            }
        }
    }

    /// A broken connection is replaced; the server being gone for good ends the run.
    async fn reconnect(&self, until: Instant) -> Result<Connection> {
        loop {
            match Connection::open(self.addr, Some(&self.token)).await {
                Ok(connection) => return Ok(connection),
                Err(error) if Instant::now() >= until => return Err(error),
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }
}

/// `PUT /v1/tenants/{tenant}` then every app, over a few connections in parallel.
pub async fn create_tenant_and_apps(
    addr: SocketAddr,
    token: &str,
    tenant: &str,
    apps: usize,
    body: &Bytes,
) -> Result<()> {
    let mut connection = Connection::open(addr, Some(token)).await?;
    let path = format!("/v1/tenants/{tenant}");
    // Room for every app the bench creates (the platform's default quota is 100).
    let tenant_body = Bytes::from(format!(
        r#"{{"displayName":"Bench","limits":{{"maxApps":{}}}}}"#,
        apps.max(1)
    ));
    let (status, response) = connection
        .send(Method::PUT, &path, Some(tenant_body))
        .await?;
    if !status.is_success() {
        bail!("{}", describe(&Method::PUT, &path, status, &response));
    }

    const LOADERS: usize = 8;
    let mut tasks = tokio::task::JoinSet::new();
    for loader in 0..LOADERS {
        let token = token.to_owned();
        let tenant = tenant.to_owned();
        let body = body.clone();
        tasks.spawn(async move {
            let mut connection = Connection::open(addr, Some(&token)).await?;
            for app in (1..=apps).skip(loader).step_by(LOADERS) {
                let path = format!("/v1/tenants/{tenant}/apps/app-{app}");
                let (status, response) = connection
                    .send(Method::PUT, &path, Some(body.clone()))
                    .await
                    .with_context(|| format!("PUT {path}"))?;
                if status != StatusCode::OK && status != StatusCode::CREATED {
                    bail!("{}", describe(&Method::PUT, &path, status, &response));
                }
            }
            Ok(())
        });
    }
    while let Some(joined) = tasks.join_next().await {
        joined.context("a loader task panicked")??;
    }
    Ok(())
}

fn describe(method: &Method, path: &str, status: StatusCode, body: &[u8]) -> String {
    let body = String::from_utf8_lossy(body);
    let body: String = body.chars().take(300).collect();
    format!("{method} {path}: {status}: {body}")
}
