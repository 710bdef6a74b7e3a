//! Trace export for a process's role: on when OpenTelemetry's standard variables name a
//! collector (see `shoal_trace_export::settings` and docs/operating/tracing.md), a bad setting
//! an error at start-up, and the span counts in the role's `/metrics` either way.

use std::time::Duration;

use anyhow::Context as _;
use prometheus_client::collector::Collector;
use shoal_trace_export::{ExportError, ExportSettings, SpanCounts, TraceExport};

use crate::cli::TracingArgs;

/// How long stopping waits for the spans still queued to reach the collector.
const FLUSH_ON_STOP: Duration = Duration::from_secs(5);

pub struct Traces {
    export: Option<TraceExport>,
    counts: SpanCounts,
}

impl Traces {
    /// `service` is the `service.name` when `OTEL_SERVICE_NAME` does not give one.
    pub fn start(service: &str, args: &TracingArgs) -> anyhow::Result<Traces> {
        let export = ExportSettings::from_env(|name| args.get(name), service)
            .map_err(ExportError::from)
            .and_then(|settings| settings.map(TraceExport::install).transpose())
            .context("OpenTelemetry trace export")?;
        let counts = export
            .as_ref()
            .map(|export| export.counts().clone())
            .unwrap_or_default();
        Ok(Traces { export, counts })
    }

    pub fn metrics(&self) -> Box<dyn Collector> {
        self.counts.metrics()
    }

    pub fn counts(&self) -> &SpanCounts {
        &self.counts
    }

    /// Sends what is queued, for at most [`FLUSH_ON_STOP`].
    pub async fn stop(self) {
        if let Some(export) = self.export {
            export.shut_down(FLUSH_ON_STOP).await;
        }
    }
}
