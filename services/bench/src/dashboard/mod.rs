//! The dashboard figures, each against a goal and, where the issue asks for a ratio, a
//! reference measured in the same run:
//!
//! * bundle: what the page loads from `web/dist` (the HTML, scripts, styles and any other
//!   asset; source maps excluded), each file compressed with gzip at level 9 and added up,
//!   against the goal of 200 KB. `shoal serve` sends the files uncompressed; level 9 is what
//!   a compressing proxy or CDN in front of it would send at best (see [`bundle`]);
//! * first render: the apps view of a tenant with 1,000 apps (written through the API) on a
//!   real `shoal serve` and Postgres, in headless Chromium, from navigation start to the
//!   list's rows being in the DOM, median of several cold loads; the reference is the same
//!   view of a tenant with no apps, loaded alternately in the same run (see [`first_render`]),
//!   with the apps list response's size gzipped, and the invocation explorer's first page with
//!   10,000 invocations in the app against a function with none (see [`explorer`]);
//! * invocation telemetry: one `shoal worker` draining a preloaded queue through a trivial
//!   handler with `--invocation-telemetry on` against `off`, each side on an Azurite of its
//!   own, in alternating order from round to round, as the breaker part's counting figures
//!   (see [`telemetry`]).
//!
//! A figure that fails is named in its line; the part fails when any of them was not measured.

pub mod bundle;
pub mod explorer;
pub mod first_render;
pub mod telemetry;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;

use crate::queue::figures::{NotMeasured, Rate};
use crate::server::ShoalBin;

pub struct DashboardPlan<'a> {
    pub shoal: &'a ShoalBin,
    pub admin_url: &'a str,
    /// The built dashboard (`make web`).
    pub web_dist: PathBuf,
    /// web/bench/first-render.mjs, which drives Chromium.
    pub first_render_script: PathBuf,
    pub node: PathBuf,
    pub chromium: PathBuf,
    /// Apps of the first render's tenant.
    pub apps: usize,
    /// Cold loads of each view (median reported).
    pub loads: usize,
    /// Rounds of the telemetry figures, and messages preloaded per round and side.
    pub rounds: u32,
    pub messages: u64,
    pub batch_size: u8,
    pub new_batch_threshold: u8,
    /// The longest one drain may take.
    pub timeout: Duration,
}

pub struct DashboardFigures {
    pub bundle: Result<bundle::Bundle, NotMeasured>,
    pub first_render: Result<first_render::FirstRender, NotMeasured>,
    pub rounds: u32,
    pub telemetry_on: Rate,
    pub telemetry_off: Rate,
}

impl DashboardFigures {
    /// Why the part failed: the first figure that was not measured.
    pub fn failure(&self) -> Option<String> {
        let why = |figure: &str, not_measured: &NotMeasured| format!("{figure}: {not_measured}");
        [
            self.bundle.as_ref().err().map(|n| why("bundle", n)),
            self.first_render
                .as_ref()
                .err()
                .map(|n| why("first render", n)),
            self.telemetry_on
                .as_ref()
                .err()
                .map(|n| why("telemetry on", n)),
            self.telemetry_off
                .as_ref()
                .err()
                .map(|n| why("telemetry off", n)),
        ]
        .into_iter()
        .flatten()
        .next()
    }
}

pub async fn run(plan: &DashboardPlan<'_>) -> Result<DashboardFigures> {
    let could_not = |error: anyhow::Error| {
        eprintln!("shoal-bench: dashboard: {error:#}");
        NotMeasured::CouldNotRun(format!("{error:#}"))
    };
    let bundle = bundle::measure(&plan.web_dist).map_err(could_not);
    if let Ok(bundle) = &bundle {
        for file in &bundle.files {
            eprintln!(
                "shoal-bench: dashboard: bundle: {} {} bytes, {} gzipped",
                file.path.display(),
                file.bytes,
                file.gzip_bytes
            );
        }
    }
    let first_render = first_render::measure(plan).await.map_err(could_not);
    let (telemetry_on, telemetry_off) = telemetry::measure(plan).await?;
    Ok(DashboardFigures {
        bundle,
        first_render,
        rounds: plan.rounds,
        telemetry_on,
        telemetry_off,
    })
}

/// The middle load (the mean of the two middle ones for an even count).
pub fn median(loads: &[Duration]) -> Duration {
    let mut sorted = loads.to_vec();
    sorted.sort();
    match sorted.len() {
        0 => Duration::ZERO,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2,
    }
}
