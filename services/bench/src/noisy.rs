//! The noisy-neighbour figure of the `api` part: tenant A's `GET app` p99 at a steady 20
//! requests a second (inside its principal's budget) while tenant B's principal sends as fast
//! as the bench's connections allow, against A at the same pace alone, on the same server
//! (goal: at most 2x). B runs into its throttle within the first seconds, so the figure is what
//! B's flood costs A even though B's requests are refused before any database work (and their
//! answers held, `--throttle-hold`). B's connections retry the moment they are answered, as a
//! client that ignores `Retry-After` would.

use std::time::Duration;

use anyhow::Result;
use bytes::Bytes;
use hyper::Method;

use crate::args::Args;
use crate::load::{self, LoadPlan, LoadResult};
use crate::report::{millis, thousands};
use crate::server::{Server, ShoalBin};

const QUIET: &str = "quiet";
const NOISY: &str = "noisy";
/// Apps per tenant; each request picks one.
const APPS: usize = 10;
/// A's pace: one connection, a request every 50 ms (the default principal rate is 25 a
/// second).
const QUIET_PACE: Duration = Duration::from_millis(50);
/// The most A's p99 with B at full load may be, as a multiple of A's alone.
const GOAL: f64 = 2.0;

pub async fn measure(
    args: &Args,
    shoal: &ShoalBin,
    server: &Server,
    admin: &str,
) -> Result<String> {
    let body = Bytes::from_static(load::APP_BODY.as_bytes());
    for tenant in [QUIET, NOISY] {
        load::create_tenant_and_apps(server.addr(), admin, tenant, APPS, &body).await?;
    }
    let quiet = shoal.tenant_token(server, QUIET, "Reader").await?;
    let noisy = shoal.tenant_token(server, NOISY, "Reader").await?;
    let plan = |token: &str, tenant: &'static str, connections, pace| LoadPlan {
        addr: server.addr(),
        token: token.to_owned(),
        tenant,
        apps: APPS,
        connections,
        pace,
        warmup: Duration::from_secs(args.warmup_secs),
        duration: Duration::from_secs(args.duration_secs),
        method: Method::GET,
        body: None,
    };
    eprintln!("shoal-bench: noisy neighbour: tenant A alone");
    let alone = load::run(plan(&quiet, QUIET, 1, Some(QUIET_PACE))).await?;
    eprintln!(
        "shoal-bench: noisy neighbour: tenant A with tenant B on {} connections",
        args.connections
    );
    let (beside, flood) = tokio::try_join!(
        load::run(plan(&quiet, QUIET, 1, Some(QUIET_PACE))),
        load::run(plan(&noisy, NOISY, args.connections, None)),
    )?;
    Ok(line(&alone, &beside, &flood))
}

/// `noisy neighbour: A's GET p99 1.9 ms alone, 2.6 ms beside B (B sent 90 req/s, 25 admitted,
/// 72.2 % refused) | ratio 1.37 (goal <= 2.00)`
fn line(alone: &LoadResult, beside: &LoadResult, flood: &LoadResult) -> String {
    let (alone_p99, beside_p99) = (alone.quantile(0.99), beside.quantile(0.99));
    let ratio = beside_p99.as_secs_f64() / alone_p99.as_secs_f64().max(1e-9);
    let refused = 100.0 * flood.error_rate();
    let sent = flood.requests as f64 / flood.duration.as_secs_f64();
    let mut line = format!(
        "noisy neighbour: A's GET p99 {} alone, {} beside B (B sent {} req/s, {} admitted, \
         {refused:.1} % refused) | ratio {ratio:.2} (goal <= {GOAL:.2})",
        millis(alone_p99),
        millis(beside_p99),
        thousands(sent),
        thousands(flood.per_second()),
    );
    if ratio > GOAL {
        line.push_str("  [missed: ratio]");
    }
    if alone.errors + beside.errors > 0 {
        line.push_str(&format!(
            "; A had {} failed requests: {}",
            alone.errors + beside.errors,
            alone
                .first_error
                .as_deref()
                .or(beside.first_error.as_deref())
                .unwrap_or("")
        ));
    }
    line
}
