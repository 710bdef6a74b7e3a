//! The apps view's first render in headless Chromium against a real `shoal serve` on a scratch
//! database: one tenant with `--dashboard-apps` apps and one with none, written through the
//! API; web/bench/first-render.mjs loads each view in turn in a fresh browser context and
//! reports, per load, the milliseconds from navigation start to the list being in the DOM.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use http::header::ACCEPT_ENCODING;
use http::{HeaderValue, Method};
use shoal_testkit::ScratchDatabase;

use super::explorer::{self, ExplorerPage};
use super::{DashboardPlan, median};
use crate::http::Connection;
use crate::load;
use crate::server::Server;

const FULL: &str = "bench-apps";
const EMPTY: &str = "bench-empty";
/// Apps as the API part writes them: a handler and two settings, one of them secret.
const APP_BODY: &str = crate::load::APP_BODY;

pub struct FirstRender {
    pub apps: usize,
    pub loads: usize,
    /// The median load of the full list and of the empty one.
    pub full: Duration,
    pub empty: Duration,
    /// The slowest load of the full list.
    pub full_slowest: Duration,
    /// The apps list response the view asks for (every app, with status), as sent with
    /// `Accept-Encoding: gzip` and as sent without.
    pub list: ListSize,
    /// The invocation explorer's first page on the same server (see `super::explorer`).
    pub explorer: ExplorerPage,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListSize {
    pub gzip_bytes: u64,
    pub bytes: u64,
}

/// The request the apps view makes for its first page (`web/src/views/apps/list.ts`).
fn list_path(tenant: &str) -> String {
    format!("/v1/tenants/{tenant}/apps?limit=1000&expand=status")
}

/// The apps list's size on the wire, compressed as the browser asks and not.
async fn list_size(server: &Server, token: &str, tenant: &str) -> Result<ListSize> {
    let mut connection = Connection::open(server.addr(), Some(token)).await?;
    let path = list_path(tenant);
    let gzip = [(ACCEPT_ENCODING, HeaderValue::from_static("gzip"))];
    let (status, compressed) = connection
        .send_with(Method::GET, &path, &gzip, None)
        .await?;
    if !status.is_success() {
        bail!("GET {path}: {status}");
    }
    let (_, plain) = connection.send(Method::GET, &path, None).await?;
    if compressed.len() >= plain.len() {
        bail!(
            "GET {path} with Accept-Encoding: gzip sent {} bytes, no fewer than without ({}): not compressed",
            compressed.len(),
            plain.len()
        );
    }
    Ok(ListSize {
        gzip_bytes: compressed.len() as u64,
        bytes: plain.len() as u64,
    })
}

pub async fn measure(plan: &DashboardPlan<'_>) -> Result<FirstRender> {
    if plan.apps == 0 || plan.loads == 0 {
        bail!("--dashboard-apps and --dashboard-loads must be positive");
    }
    if !plan.web_dist.join("index.html").is_file() {
        bail!(
            "{} has no index.html: build the dashboard first (`make web`)",
            plan.web_dist.display()
        );
    }
    let database = ScratchDatabase::create(plan.admin_url, "shoal_bench_dashboard").await?;
    let measured = with_database(plan, &database).await;
    let dropped = database.drop_now().await;
    let measured = measured?;
    dropped?;
    Ok(measured)
}

async fn with_database(
    plan: &DashboardPlan<'_>,
    database: &ScratchDatabase,
) -> Result<FirstRender> {
    plan.shoal.migrate(database.url()).await?;
    let server = Server::start_serving(plan.shoal, database.url(), Some(&plan.web_dist)).await?;
    let measured = with_server(plan, &server, database.url()).await;
    let stopped = server.stop().await;
    let measured = measured?;
    stopped?;
    Ok(measured)
}

async fn with_server(
    plan: &DashboardPlan<'_>,
    server: &Server,
    database_url: &str,
) -> Result<FirstRender> {
    let token = plan.shoal.platform_admin_token(server).await?;
    let body = Bytes::from_static(APP_BODY.as_bytes());
    load::create_tenant_and_apps(server.addr(), &token, FULL, plan.apps, &body).await?;
    load::create_tenant_and_apps(server.addr(), &token, EMPTY, 0, &body).await?;
    let list = list_size(server, &token, FULL).await?;
    let explorer = explorer::measure(server, database_url, &token, FULL, "app-1").await?;
    eprintln!(
        "shoal-bench: dashboard: tenant `{FULL}` with {} apps and `{EMPTY}` with none; {} cold loads of each apps view",
        plan.apps, plan.loads
    );
    let output = tokio::process::Command::new(&plan.node)
        .arg(&plan.first_render_script)
        .args(["--base", &format!("http://{}", server.addr())])
        .args(["--token", &token])
        .args(["--loads", &plan.loads.to_string()])
        .args(["--tenant", &format!("{FULL}:{}", plan.apps)])
        .args(["--tenant", &format!("{EMPTY}:0")])
        .arg("--chromium")
        .arg(&plan.chromium)
        .kill_on_drop(true)
        .output()
        .await
        .with_context(|| format!("cannot run {}", plan.node.display()))?;
    if !output.status.success() {
        bail!(
            "{} failed ({}): {}",
            plan.first_render_script.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let samples: HashMap<String, Vec<f64>> =
        serde_json::from_slice(&output.stdout).with_context(|| {
            format!(
                "{} printed no samples: {}",
                plan.first_render_script.display(),
                String::from_utf8_lossy(&output.stdout)
            )
        })?;
    let of = |tenant: &str| -> Result<Vec<Duration>> {
        let millis = samples.get(tenant).filter(|s| !s.is_empty());
        let Some(millis) = millis else {
            bail!("no loads of {tenant}'s apps view");
        };
        Ok(millis
            .iter()
            .map(|ms| Duration::from_secs_f64(ms.max(0.0) / 1000.0))
            .collect())
    };
    let (full, empty) = (of(FULL)?, of(EMPTY)?);
    eprintln!(
        "shoal-bench: dashboard:   {FULL}: {} ms; {EMPTY}: {} ms",
        as_millis(&full),
        as_millis(&empty)
    );
    Ok(FirstRender {
        apps: plan.apps,
        loads: full.len(),
        full: median(&full),
        empty: median(&empty),
        full_slowest: full.iter().copied().max().unwrap_or_default(),
        list,
        explorer,
    })
}

fn as_millis(loads: &[Duration]) -> String {
    loads
        .iter()
        .map(|d| format!("{:.0}", d.as_secs_f64() * 1000.0))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_middle_load() {
        let ms = |v: &[u64]| {
            v.iter()
                .map(|m| Duration::from_millis(*m))
                .collect::<Vec<_>>()
        };
        assert_eq!(median(&ms(&[300, 100, 200])), Duration::from_millis(200));
        assert_eq!(
            median(&ms(&[400, 100, 200, 300])),
            Duration::from_millis(250)
        );
        assert_eq!(median(&[]), Duration::ZERO);
    }
}
