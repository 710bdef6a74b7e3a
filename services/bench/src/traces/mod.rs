//! `tracing`: what exporting traces over OTLP costs, each side against the same measurement
//! with export off in the same run. Export goes to the bench's own OTLP/gRPC sink on loopback
//! ([`crate::otlp_sink`], built from the official protobuf definitions, counting spans and
//! answering at once), with every trace sampled (`OTEL_TRACES_SAMPLER=always_on`) and the
//! exporter's queue and batches at their defaults:
//!
//! * **queue dispatch**: the queue part's paired drains ([`crate::queue::paired`]): one
//!   `shoal worker` drains a preloaded queue with `OTEL_EXPORTER_OTLP_ENDPOINT` set to the sink
//!   against without it, alternating from round to round, each drain on a fresh Azurite. The
//!   spans the sink received over all export-on drains (each worker sends what it still holds
//!   when it stops) are printed beside the spans the workers counted as dropped
//!   (`shoal_trace_spans_dropped_total` in their `/metrics` at the end of each drain), so the
//!   figure shows whether the spans were really exported;
//! * **webhook ingress**: the webhook part's latency figure (one client, sequential): what
//!   the ingress adds to calling the handler directly, first on a `shoal serve` with export
//!   off, then on one with export on, each against a direct call measured beside it; with the
//!   spans the sink received from the second server and those it counted as dropped.
//!
//! The part fails when a figure was not measured, or when export was on and the sink received
//! no span (then "export on" measured nothing).

use std::time::Duration;

use anyhow::{Context, Result, bail};
use shoal_testkit::ScratchDatabase;
use tokio::process::Command;

use crate::load::LoadResult;
use crate::otlp_sink::OtlpSink;
use crate::queue::figures::{NotMeasured, Rate};
use crate::queue::paired::{self, PairedPlan, Switch};
use crate::server::Server;
use crate::webhooks::{self, Registered};

/// The worker's and the API's count of spans they could not export.
const DROPPED: &str = "shoal_trace_spans_dropped_total";

pub struct TracePlan<'a> {
    /// The dispatch figure's drains; its `shoal` and `admin_url` serve the webhook figure too.
    pub dispatch: PairedPlan<'a>,
    /// Unmeasured and measured time of each webhook latency run.
    pub warmup: Duration,
    pub duration: Duration,
}

/// Spans sent to the sink by the processes of one figure's export-on side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spans {
    pub received: u64,
    pub dropped: u64,
}

pub struct DispatchFigure {
    pub rounds: u32,
    /// Messages drained with export on, over all rounds.
    pub messages: u64,
    pub on: Rate,
    pub off: Rate,
    pub spans: Spans,
}

/// The webhook latency with export off and on, each with its direct call (one client).
pub struct IngressFigure {
    pub off_shoal: LoadResult,
    pub off_direct: LoadResult,
    pub on_shoal: LoadResult,
    pub on_direct: LoadResult,
    pub spans: Spans,
}

pub struct TraceFigures {
    pub dispatch: DispatchFigure,
    pub ingress: Result<IngressFigure, NotMeasured>,
}

impl TraceFigures {
    /// Why the part failed: a figure not measured, or export on that exported nothing.
    pub fn failure(&self) -> Option<String> {
        let dispatch = &self.dispatch;
        if let Err(not_measured) = &dispatch.on {
            return Some(format!("queue dispatch with export on: {not_measured}"));
        }
        if let Err(not_measured) = &dispatch.off {
            return Some(format!("queue dispatch with export off: {not_measured}"));
        }
        if dispatch.spans.received == 0 {
            return Some("queue dispatch with export on: the sink received no span".to_owned());
        }
        match &self.ingress {
            Err(not_measured) => Some(format!("webhook ingress: {not_measured}")),
            Ok(ingress) if ingress.spans.received == 0 => {
                Some("webhook ingress with export on: the sink received no span".to_owned())
            }
            Ok(_) => None,
        }
    }
}

pub async fn run(plan: &TracePlan<'_>) -> Result<TraceFigures> {
    let dispatch = dispatch(plan).await?;
    let ingress = ingress(plan).await.map_err(|error| {
        eprintln!("shoal-bench: tracing: webhook ingress: {error:#}");
        NotMeasured::CouldNotRun(format!("{error:#}"))
    });
    Ok(TraceFigures { dispatch, ingress })
}

/// The environment that turns export on, to the sink, every trace sampled.
fn export_env(sink: &OtlpSink) -> [(&'static str, String); 2] {
    [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", sink.endpoint()),
        ("OTEL_TRACES_SAMPLER", "always_on".to_owned()),
    ]
}

/// Trace export for the paired drains; counts what the export-on workers dropped.
struct Export {
    sink: OtlpSink,
    dropped: std::sync::atomic::AtomicU64,
}

impl Switch for Export {
    fn configure(&self, on: bool, worker: &mut Command) {
        // Off is the command as it comes: `ShoalBin::command` leaves export off.
        if on {
            worker.envs(export_env(&self.sink));
        }
    }

    fn drained(&self, on: bool, metrics: &str) {
        if on {
            self.dropped.fetch_add(
                paired::counter(metrics, DROPPED),
                std::sync::atomic::Ordering::AcqRel,
            );
        }
    }
}

async fn dispatch(plan: &TracePlan<'_>) -> Result<DispatchFigure> {
    let export = Export {
        sink: OtlpSink::start().await?,
        dropped: Default::default(),
    };
    let paired = &plan.dispatch;
    let (on, off) = paired::measure(paired, &export).await?;
    Ok(DispatchFigure {
        rounds: paired.rounds,
        messages: paired.messages * u64::from(paired.rounds),
        on,
        off,
        // The workers have stopped, so each has sent what it still held.
        spans: Spans {
            received: export.sink.spans(),
            dropped: export.dropped.into_inner(),
        },
    })
}

/// Owns the scratch database: dropped whatever happens in between.
async fn ingress(plan: &TracePlan<'_>) -> Result<IngressFigure> {
    anyhow::ensure!(!plan.duration.is_zero(), "--duration-secs must be positive");
    let database =
        ScratchDatabase::create(plan.dispatch.admin_url, "shoal_bench_trace_webhooks").await?;
    let outcome = ingress_servers(plan, &database).await;
    let dropped = database.drop_now().await;
    let figure = outcome?;
    dropped?;
    Ok(figure)
}

/// A server with export off, then one with export on, on the same database; each is stopped
/// whatever happened on it.
async fn ingress_servers(
    plan: &TracePlan<'_>,
    database: &ScratchDatabase,
) -> Result<IngressFigure> {
    let url = database.url();
    plan.dispatch.shoal.migrate(url).await?;
    let server = Server::start(plan.dispatch.shoal, url)
        .await
        .context("starting shoal serve with export off")?;
    let measured = async {
        let registered = Registered::create(plan.dispatch.shoal, &server, url).await?;
        let latency = latency(plan, &registered, &server, "export off").await?;
        anyhow::Ok((registered, latency))
    }
    .await;
    let stopped = server.stop().await;
    let (registered, (off_direct, off_shoal)) = measured?;
    stopped?;

    let sink = OtlpSink::start().await?;
    let server = Server::start_with_env(plan.dispatch.shoal, url, &export_env(&sink))
        .await
        .context("starting shoal serve with export on")?;
    let measured = async {
        let latency = latency(plan, &registered, &server, "export on").await?;
        let metrics = paired::metrics(server.addr()).await?;
        anyhow::Ok((latency, paired::counter(&metrics, DROPPED)))
    }
    .await;
    // Stopping sends what the server still holds.
    let stopped = server.stop().await;
    let ((on_direct, on_shoal), dropped) = measured?;
    stopped?;
    let spans = Spans {
        received: sink.spans(),
        dropped,
    };
    if on_shoal.requests == 0 {
        bail!("no webhook request was measured with export on");
    }
    Ok(IngressFigure {
        off_shoal,
        off_direct,
        on_shoal,
        on_direct,
        spans,
    })
}

/// The direct call, then the same call through `server`'s ingress; one client each.
async fn latency(
    plan: &TracePlan<'_>,
    registered: &Registered,
    server: &Server,
    side: &str,
) -> Result<(LoadResult, LoadResult)> {
    let part = format!("tracing: webhooks, {side}");
    let direct = registered.direct(server);
    let shoal = registered.shoal(server);
    let direct = webhooks::run_load(&part, &direct, 1, plan.warmup, plan.duration).await?;
    let shoal = webhooks::run_load(&part, &shoal, 1, plan.warmup, plan.duration).await?;
    Ok((direct, shoal))
}
