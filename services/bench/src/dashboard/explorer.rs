//! The invocation explorer's first page: an app whose functions hold 10,000 invocations (each
//! function at the log's cap, `shoal_store::invocation_log::KEPT_INVOCATIONS`, three attempts
//! apiece, written as workers write them), and the page the dashboard asks for first
//! (`GET …/invocationLog?limit=50`) of one of them, timed on loopback against the same page of
//! a function with none. The request time includes the HTTP round trip on loopback, so it
//! bounds the server's time from above.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use bytes::Bytes;
use chrono::Utc;
use http::Method;
use shoal_store::invocation_log::{AttemptRecord, KEPT_INVOCATIONS, Status, TraceIds, record};
use shoal_store::pool::{PoolConfig, connect_lazy};
use uuid::Uuid;

use super::median;
use crate::http::Connection;
use crate::server::Server;

/// Invocations in the app, over its functions.
pub const INVOCATIONS: usize = 10_000;
/// The explorer's page size (`web/src/views/explorer/model.ts`, `PAGE_SIZE`).
const PAGE: usize = 50;
/// Timed loads of each page; the median is reported.
const LOADS: usize = 21;
/// Attempts of each invocation (a failure, a retry, a success).
const ATTEMPTS: usize = 3;

pub struct ExplorerPage {
    pub invocations: usize,
    pub loads: usize,
    pub full: Duration,
    pub empty: Duration,
    pub full_slowest: Duration,
}

/// Fills the log of `tenant`'s app `app` and times the first pages.
pub async fn measure(
    server: &Server,
    database_url: &str,
    token: &str,
    tenant: &str,
    app: &str,
) -> Result<ExplorerPage> {
    let functions = INVOCATIONS.div_ceil(KEPT_INVOCATIONS as usize);
    let mut connection = Connection::open(server.addr(), Some(token)).await?;
    let trigger = Bytes::from_static(
        br#"{"bindings": [{"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "orders"}]}"#,
    );
    for function in 0..=functions {
        let path = format!("/v1/tenants/{tenant}/apps/{app}/functions/f{function}");
        let (status, body) = connection
            .send(Method::PUT, &path, Some(trigger.clone()))
            .await?;
        if !status.is_success() {
            bail!("PUT {path}: {status} {}", String::from_utf8_lossy(&body));
        }
    }
    // Functions f0..f{functions-1} hold the invocations; f{functions} none.
    let pool = connect_lazy(database_url, &PoolConfig::default())?;
    let start = Utc::now() - chrono::Duration::hours(1);
    let per_function = KEPT_INVOCATIONS as usize;
    for function in 0..functions {
        for chunk in (0..per_function).collect::<Vec<_>>().chunks(250) {
            let mut attempts = Vec::with_capacity(chunk.len() * ATTEMPTS);
            for &i in chunk {
                for attempt in 0..ATTEMPTS {
                    let failed = attempt + 1 < ATTEMPTS;
                    attempts.push(AttemptRecord {
                        tenant: tenant.to_owned(),
                        app: app.to_owned(),
                        function: format!("f{function}"),
                        delivery_key: format!("m-{function}-{i}"),
                        message_id: Some(format!("m-{function}-{i}")),
                        invocation_id: Uuid::now_v7(),
                        at: start + chrono::Duration::milliseconds((i * 100 + attempt * 10) as i64),
                        retry_count: attempt as i32,
                        delivery_count: Some(attempt as i64 + 1),
                        worker: "bench".into(),
                        duration_ms: 12,
                        status: if failed {
                            Status::Failed
                        } else {
                            Status::Succeeded
                        },
                        error: failed.then(|| "the handler answered 500".to_owned()),
                        logs: vec![format!("order {i} attempt {attempt}")],
                        // As a worker records it: one trace per message, a span per attempt.
                        trace: Some(TraceIds {
                            trace_id: format!(
                                "{:032x}",
                                ((function as u128) << 64) + i as u128 + 1
                            ),
                            span_id: format!("{:016x}", attempt + 1),
                        }),
                        payload_preview: Some(format!(r#"{{"order":{i}}}"#)),
                        payload_truncated: false,
                    });
                }
            }
            let mut tx = shoal_store::begin_platform(&pool).await?;
            record(&mut tx, &attempts).await?;
            shoal_store::commit(tx).await?;
        }
    }
    pool.close().await;
    let page = |function: usize| {
        format!("/v1/tenants/{tenant}/apps/{app}/functions/f{function}/invocationLog?limit={PAGE}")
    };
    let (full_path, empty_path) = (page(0), page(functions));
    let (mut full, mut empty) = (Vec::new(), Vec::new());
    // Alternating, after one warm-up each, so both see the same machine.
    for load in 0..=LOADS {
        for (path, loads) in [(&full_path, &mut full), (&empty_path, &mut empty)] {
            let started = Instant::now();
            let (status, body) = connection.send(Method::GET, path, None).await?;
            let took = started.elapsed();
            if !status.is_success() {
                bail!("GET {path}: {status} {}", String::from_utf8_lossy(&body));
            }
            if load > 0 {
                loads.push(took);
            }
        }
    }
    Ok(ExplorerPage {
        invocations: functions * per_function,
        loads: full.len(),
        full: median(&full),
        empty: median(&empty),
        full_slowest: full.iter().copied().max().unwrap_or_default(),
    })
}
