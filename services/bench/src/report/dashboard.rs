//! The dashboard lines (see `crate::dashboard`): the bundle gzipped against its goal, the apps
//! list's first render against the empty list's in the same run, the apps list response's size
//! gzipped against its goal, and dispatch with invocation telemetry on against off.

use std::time::Duration;

use super::queue::ratio_line;
use super::thousands;
use crate::dashboard::DashboardFigures;
use crate::dashboard::first_render::FirstRender;

/// Bytes of the gzipped bundle: at most this (issue goal).
pub const BUNDLE_GOAL_BYTES: u64 = 200_000;
/// The apps list's first render with 1,000 apps: under this (issue goal, on the figure's
/// machine).
pub const FIRST_RENDER_GOAL: Duration = Duration::from_millis(300);
/// The apps list response for 1,000 apps, gzipped: at most this (issue goal).
pub const LIST_GOAL_BYTES: u64 = 64_000;
/// The explorer's first page with 10,000 invocations: under this (issue goal).
pub const EXPLORER_GOAL: Duration = Duration::from_millis(200);
/// Dispatch with telemetry on, over off: at least this (issue goal).
pub const TELEMETRY_GOAL: f64 = 0.95;

pub fn lines(figures: &DashboardFigures) -> Vec<String> {
    vec![
        bundle_line(figures),
        first_render_line(figures),
        list_line(figures),
        explorer_line(figures),
        ratio_line(
            &format!(
                "Dashboard telemetry (queue dispatch, 1 worker, {} rounds)",
                figures.rounds
            ),
            &figures.telemetry_on,
            "telemetry off",
            &figures.telemetry_off,
            TELEMETRY_GOAL,
        ),
    ]
}

/// `Dashboard bundle   41.2 KB gzip -9 (143.9 KB raw, 3 files) | ratio 0.21 of the goal
/// (goal <= 200 KB)`
fn bundle_line(figures: &DashboardFigures) -> String {
    let bundle = match &figures.bundle {
        Ok(bundle) => bundle,
        Err(not_measured) => {
            return format!("Dashboard bundle   {not_measured}  [missed: not measured]");
        }
    };
    let gzip = bundle.gzip_bytes();
    let ratio = gzip as f64 / BUNDLE_GOAL_BYTES as f64;
    let mut line = format!(
        "Dashboard bundle   {} gzip -9 ({} raw, {} files) | ratio {ratio:.2} of the goal (goal <= {})",
        kilobytes(gzip),
        kilobytes(bundle.bytes()),
        bundle.files.len(),
        kilobytes(BUNDLE_GOAL_BYTES),
    );
    if gzip > BUNDLE_GOAL_BYTES {
        line.push_str("  [missed: size]");
    }
    line
}

/// `Dashboard first render   1,000 apps 212 ms | empty list 180 ms | ratio 1.18 (goal < 300 ms;
/// median of 7 cold loads each, slowest 250 ms, headless Chromium)`
fn first_render_line(figures: &DashboardFigures) -> String {
    let render = match measured(figures, "Dashboard first render") {
        Ok(render) => render,
        Err(line) => return line,
    };
    let ms = |d: Duration| format!("{:.0} ms", d.as_secs_f64() * 1000.0);
    let ratio = render.full.as_secs_f64() / render.empty.as_secs_f64().max(f64::MIN_POSITIVE);
    let mut line = format!(
        "Dashboard first render   {} apps {} | empty list {} | ratio {ratio:.2} (goal < {}; median of {} cold loads each, slowest {}, headless Chromium)",
        thousands(render.apps as f64),
        ms(render.full),
        ms(render.empty),
        ms(FIRST_RENDER_GOAL),
        render.loads,
        ms(render.full_slowest),
    );
    if render.full >= FIRST_RENDER_GOAL {
        line.push_str("  [missed: first render]");
    }
    line
}

/// `Dashboard apps list   1,000 apps 48.0 KB gzip (1,600.0 KB raw) | ratio 0.75 of the goal
/// (goal <= 64.0 KB)`
fn list_line(figures: &DashboardFigures) -> String {
    let render = match measured(figures, "Dashboard apps list") {
        Ok(render) => render,
        Err(line) => return line,
    };
    let ratio = render.list.gzip_bytes as f64 / LIST_GOAL_BYTES as f64;
    let mut line = format!(
        "Dashboard apps list   {} apps {} gzip ({} raw) | ratio {ratio:.2} of the goal (goal <= {})",
        thousands(render.apps as f64),
        kilobytes(render.list.gzip_bytes),
        kilobytes(render.list.bytes),
        kilobytes(LIST_GOAL_BYTES),
    );
    if render.list.gzip_bytes > LIST_GOAL_BYTES {
        line.push_str("  [missed: size]");
    }
    line
}

/// `Dashboard explorer first page   10,000 invocations 4.1 ms | no invocations 2.0 ms | ratio
/// 2.05 (goal < 200 ms; median of 21 loads each on loopback, slowest 6.3 ms)`
fn explorer_line(figures: &DashboardFigures) -> String {
    let page = match measured(figures, "Dashboard explorer first page") {
        Ok(render) => &render.explorer,
        Err(line) => return line,
    };
    let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1000.0);
    let ratio = page.full.as_secs_f64() / page.empty.as_secs_f64().max(f64::MIN_POSITIVE);
    let mut line = format!(
        "Dashboard explorer first page   {} invocations {} | no invocations {} | ratio {ratio:.2} (goal < {} ms; median of {} loads each on loopback, slowest {})",
        thousands(page.invocations as f64),
        ms(page.full),
        ms(page.empty),
        EXPLORER_GOAL.as_millis(),
        page.loads,
        ms(page.full_slowest),
    );
    if page.full >= EXPLORER_GOAL {
        line.push_str("  [missed: explorer]");
    }
    line
}

/// The figures measured on the first render's server, or `figure`'s line saying why not (the
/// apps list and the explorer are measured there too).
fn measured<'a>(figures: &'a DashboardFigures, figure: &str) -> Result<&'a FirstRender, String> {
    figures
        .first_render
        .as_ref()
        .map_err(|not_measured| format!("{figure}   {not_measured}  [missed: not measured]"))
}

/// 41_203 → "41.2 KB" (1 KB = 1,000 bytes).
fn kilobytes(bytes: u64) -> String {
    format!("{:.1} KB", bytes as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::dashboard::bundle::{Bundle, BundleFile};
    use crate::dashboard::explorer::ExplorerPage;
    use crate::dashboard::first_render::ListSize;
    use crate::queue::figures::NotMeasured;

    fn figures() -> DashboardFigures {
        let file = |name: &str, bytes, gzip_bytes| BundleFile {
            path: PathBuf::from(name),
            bytes,
            gzip_bytes,
        };
        DashboardFigures {
            bundle: Ok(Bundle {
                files: vec![
                    file("index.html", 900, 500),
                    file("assets/index.js", 120_000, 36_000),
                    file("assets/index.css", 23_000, 4_700),
                ],
            }),
            first_render: Ok(FirstRender {
                apps: 1_000,
                loads: 7,
                full: Duration::from_millis(212),
                empty: Duration::from_millis(180),
                full_slowest: Duration::from_millis(250),
                list: ListSize {
                    gzip_bytes: 48_000,
                    bytes: 1_600_000,
                },
                explorer: ExplorerPage {
                    invocations: 10_000,
                    loads: 21,
                    full: Duration::from_micros(4_100),
                    empty: Duration::from_micros(2_000),
                    full_slowest: Duration::from_micros(6_300),
                },
            }),
            rounds: 5,
            telemetry_on: Ok(980.0),
            telemetry_off: Ok(1_000.0),
        }
    }

    #[test]
    fn lines_show_each_figure_against_its_goal_and_reference() {
        assert_eq!(
            lines(&figures()),
            [
                "Dashboard bundle   41.2 KB gzip -9 (143.9 KB raw, 3 files) | ratio 0.21 of the goal (goal <= 200.0 KB)",
                "Dashboard first render   1,000 apps 212 ms | empty list 180 ms | ratio 1.18 (goal < 300 ms; median of 7 cold loads each, slowest 250 ms, headless Chromium)",
                "Dashboard apps list   1,000 apps 48.0 KB gzip (1600.0 KB raw) | ratio 0.75 of the goal (goal <= 64.0 KB)",
                "Dashboard explorer first page   10,000 invocations 4.1 ms | no invocations 2.0 ms | ratio 2.05 (goal < 200 ms; median of 21 loads each on loopback, slowest 6.3 ms)",
                "Dashboard telemetry (queue dispatch, 1 worker, 5 rounds)   shoal 980 msg/s | telemetry off 1,000 msg/s | ratio 0.98 (goal >= 0.95)",
            ]
        );
    }

    #[test]
    fn missed_goals_and_missing_figures_are_flagged() {
        let mut figures = figures();
        figures.first_render = Ok(FirstRender {
            full: Duration::from_millis(300),
            ..figures.first_render.unwrap()
        });
        figures.telemetry_on = Ok(900.0);
        let now = lines(&figures);
        assert!(now[1].ends_with("[missed: first render]"), "{}", now[1]);
        assert!(now[4].ends_with("[missed: ratio]"), "{}", now[4]);
        figures.first_render = Ok(FirstRender {
            list: ListSize {
                gzip_bytes: 70_000,
                bytes: 2_000_000,
            },
            ..figures.first_render.unwrap()
        });
        assert!(lines(&figures)[2].ends_with("[missed: size]"));
        figures.bundle = Err(NotMeasured::CouldNotRun(
            "web/dist has no index.html".into(),
        ));
        assert_eq!(
            lines(&figures)[0],
            "Dashboard bundle   could not run: web/dist has no index.html  [missed: not measured]"
        );
    }
}
