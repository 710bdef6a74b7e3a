//! OpenTelemetry's standard variables for trace export (docs/operating/tracing.md), for the
//! processes that make spans (`serve`, `worker`, `scheduler`, `dev`). Read by clap so they show
//! in `--help` and an unread one is never set by the chart or Compose; checked by
//! `shoal_trace_export::settings`, which refuses a value Shoal would not act on.

use clap::Args;

#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "OpenTelemetry trace export (off without an endpoint)")]
pub struct TracingArgs {
    /// The collector's OTLP/gRPC endpoint, e.g. http://otel-collector:4317.
    #[arg(long, env = "OTEL_EXPORTER_OTLP_ENDPOINT")]
    pub otel_exporter_otlp_endpoint: Option<String>,
    /// The traces endpoint, in place of OTEL_EXPORTER_OTLP_ENDPOINT.
    #[arg(long, env = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")]
    pub otel_exporter_otlp_traces_endpoint: Option<String>,
    /// grpc (the only protocol Shoal speaks).
    #[arg(long, env = "OTEL_EXPORTER_OTLP_PROTOCOL")]
    pub otel_exporter_otlp_protocol: Option<String>,
    /// grpc, in place of OTEL_EXPORTER_OTLP_PROTOCOL.
    #[arg(long, env = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")]
    pub otel_exporter_otlp_traces_protocol: Option<String>,
    /// `service.name` of the spans (default: shoal-api, shoal-worker, shoal-scheduler or
    /// shoal-dev).
    #[arg(long, env = "OTEL_SERVICE_NAME")]
    pub otel_service_name: Option<String>,
    /// parentbased_always_on (default), parentbased_traceidratio, parentbased_always_off,
    /// traceidratio, always_on or always_off.
    #[arg(long, env = "OTEL_TRACES_SAMPLER")]
    pub otel_traces_sampler: Option<String>,
    /// The fraction (0 to 1) a *traceidratio sampler keeps.
    #[arg(long, env = "OTEL_TRACES_SAMPLER_ARG")]
    pub otel_traces_sampler_arg: Option<String>,
    /// otlp (default) or none.
    #[arg(long, env = "OTEL_TRACES_EXPORTER")]
    pub otel_traces_exporter: Option<String>,
    /// true turns export off.
    #[arg(long, env = "OTEL_SDK_DISABLED")]
    pub otel_sdk_disabled: Option<String>,
    /// Spans waiting for export; beyond it spans are dropped and counted (default 2048).
    #[arg(long, env = "OTEL_BSP_MAX_QUEUE_SIZE")]
    pub otel_bsp_max_queue_size: Option<String>,
    /// Spans per export call (default 512).
    #[arg(long, env = "OTEL_BSP_MAX_EXPORT_BATCH_SIZE")]
    pub otel_bsp_max_export_batch_size: Option<String>,
    /// Milliseconds a span waits for its batch to fill (default 5000).
    #[arg(long, env = "OTEL_BSP_SCHEDULE_DELAY")]
    pub otel_bsp_schedule_delay: Option<String>,
    /// Milliseconds one export may take before its spans are dropped (default 30000).
    #[arg(long, env = "OTEL_BSP_EXPORT_TIMEOUT")]
    pub otel_bsp_export_timeout: Option<String>,
    /// 1 (one export at a time; no other value is accepted).
    #[arg(long, env = "OTEL_BSP_MAX_CONCURRENT_EXPORTS")]
    pub otel_bsp_max_concurrent_exports: Option<String>,
}

impl TracingArgs {
    /// The value of the variable `name`, as `shoal_trace_export::ExportSettings::from_env`
    /// looks it up.
    pub fn get(&self, name: &str) -> Option<String> {
        let value = match name {
            "OTEL_EXPORTER_OTLP_ENDPOINT" => &self.otel_exporter_otlp_endpoint,
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" => &self.otel_exporter_otlp_traces_endpoint,
            "OTEL_EXPORTER_OTLP_PROTOCOL" => &self.otel_exporter_otlp_protocol,
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL" => &self.otel_exporter_otlp_traces_protocol,
            "OTEL_SERVICE_NAME" => &self.otel_service_name,
            "OTEL_TRACES_SAMPLER" => &self.otel_traces_sampler,
            "OTEL_TRACES_SAMPLER_ARG" => &self.otel_traces_sampler_arg,
            "OTEL_TRACES_EXPORTER" => &self.otel_traces_exporter,
            "OTEL_SDK_DISABLED" => &self.otel_sdk_disabled,
            "OTEL_BSP_MAX_QUEUE_SIZE" => &self.otel_bsp_max_queue_size,
            "OTEL_BSP_MAX_EXPORT_BATCH_SIZE" => &self.otel_bsp_max_export_batch_size,
            "OTEL_BSP_SCHEDULE_DELAY" => &self.otel_bsp_schedule_delay,
            "OTEL_BSP_EXPORT_TIMEOUT" => &self.otel_bsp_export_timeout,
            "OTEL_BSP_MAX_CONCURRENT_EXPORTS" => &self.otel_bsp_max_concurrent_exports,
            _ => return None,
        };
        value.clone()
    }
}
