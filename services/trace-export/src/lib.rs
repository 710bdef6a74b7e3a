//! Exporting Shoal's spans to an OpenTelemetry collector over OTLP/gRPC: the settings from
//! OpenTelemetry's standard environment variables ([`settings`]), a bounded queue in front of
//! the exporter that drops and counts rather than waits ([`bounded`]), and the process-wide
//! tracer provider the worker and the API make their spans with (through the `opentelemetry`
//! API's global provider, a no-op until [`TraceExport::install`] runs: with export off, a span
//! costs nothing).
//!
//! The spans keep Shoal's own ids (`shoal_domain::trace_context`): the trace and span ids a
//! handler is sent in `traceparent` are the ones exported, so the handler's spans join them.

pub mod bounded;
pub mod settings;
pub mod span;

use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_otlp::WithTonicConfig as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider, SpanExporter};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;

pub use bounded::{BoundedProcessor, SpanCounts};
pub use settings::{ExportSettings, SamplerSetting, SettingsError};

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Says the variable and why (printed once: it is this error's whole text).
    #[error(transparent)]
    Setting(#[from] SettingsError),
    #[error("cannot build the OTLP exporter for {endpoint}: {message}")]
    Exporter { endpoint: String, message: String },
}

/// The installed export: its counts for `/metrics`, and shutdown.
#[derive(Debug, Clone)]
pub struct TraceExport {
    provider: SdkTracerProvider,
    processor: BoundedProcessor,
    counts: SpanCounts,
}

impl TraceExport {
    /// Reads the settings from the process's environment and installs the export when they
    /// turn it on (None: off). `service` names the process when `OTEL_SERVICE_NAME` does not.
    /// Must run on a Tokio runtime.
    pub fn from_env(service: &str) -> Result<Option<TraceExport>, ExportError> {
        match ExportSettings::from_env(|name| std::env::var(name).ok(), service)? {
            Some(settings) => TraceExport::install(settings).map(Some),
            None => Ok(None),
        }
    }

    /// Builds the exporter and queue and makes them the process's tracer provider.
    pub fn install(settings: ExportSettings) -> Result<TraceExport, ExportError> {
        let endpoint = settings.endpoint.as_str().trim_end_matches('/').to_owned();
        let builder = opentelemetry_otlp::SpanExporter::builder()
            .with_tonic()
            .with_endpoint(endpoint.clone());
        let builder = if settings.endpoint.scheme() == "https" {
            builder.with_tls_config(
                opentelemetry_otlp::tonic_types::transport::ClientTlsConfig::new()
                    .with_native_roots(),
            )
        } else {
            builder
        };
        let mut exporter = builder.build().map_err(|e| ExportError::Exporter {
            endpoint: endpoint.clone(),
            message: e.to_string(),
        })?;
        // `OTEL_RESOURCE_ATTRIBUTES` is read by the resource builder's detectors.
        let resource = Resource::builder()
            .with_service_name(settings.service_name.clone())
            .with_attribute(KeyValue::new("service.namespace", "shoal"))
            .build();
        exporter.set_resource(&resource);
        let counts = SpanCounts::default();
        let processor = BoundedProcessor::start(exporter, settings.queue, counts.clone());
        let provider = SdkTracerProvider::builder()
            .with_resource(resource)
            .with_sampler(sampler(settings.sampler))
            .with_span_processor(processor.clone())
            .build();
        opentelemetry::global::set_tracer_provider(provider.clone());
        tracing::info!(endpoint, service = settings.service_name, sampler = ?settings.sampler, "exporting traces over OTLP/gRPC");
        Ok(TraceExport {
            provider,
            processor,
            counts,
        })
    }

    pub fn counts(&self) -> &SpanCounts {
        &self.counts
    }

    /// Exports what is queued now (see [`BoundedProcessor::flush`]).
    pub async fn flush(&self) {
        self.processor.flush().await;
    }

    /// Exports what is queued within `deadline`; spans ended later are dropped and counted.
    pub async fn shut_down(&self, deadline: Duration) {
        self.processor.shut_down(deadline).await;
        if let Err(e) = self.provider.shutdown() {
            tracing::debug!(error = %e, "tracer provider shutdown");
        }
    }
}

impl SpanCounts {
    /// `shoal_trace_spans_exported_total` and `shoal_trace_spans_dropped_total`, for a
    /// `/metrics` registry with the `shoal` prefix (zero while export is off).
    pub fn metrics(&self) -> Box<dyn Collector> {
        Box::new(SpanMetrics(self.clone()))
    }
}

fn sampler(setting: SamplerSetting) -> Sampler {
    match setting {
        SamplerSetting::AlwaysOn => Sampler::AlwaysOn,
        SamplerSetting::AlwaysOff => Sampler::AlwaysOff,
        SamplerSetting::TraceIdRatio(ratio) => Sampler::TraceIdRatioBased(ratio),
        SamplerSetting::ParentBasedAlwaysOn => Sampler::ParentBased(Box::new(Sampler::AlwaysOn)),
        SamplerSetting::ParentBasedAlwaysOff => Sampler::ParentBased(Box::new(Sampler::AlwaysOff)),
        SamplerSetting::ParentBasedTraceIdRatio(ratio) => {
            Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(ratio)))
        }
    }
}

#[derive(Debug)]
struct SpanMetrics(SpanCounts);

impl Collector for SpanMetrics {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let series = [
            (
                "trace_spans_exported",
                "Spans the OTLP collector accepted",
                &self.0.exported,
            ),
            (
                "trace_spans_dropped",
                "Spans not exported: the export queue was full, or the collector failed or timed out",
                &self.0.dropped,
            ),
        ];
        for (name, help, counter) in series {
            let value = ConstCounter::new(counter.get());
            let metric = encoder.encode_descriptor(name, help, None, value.metric_type())?;
            value.encode(metric)?;
        }
        Ok(())
    }
}
