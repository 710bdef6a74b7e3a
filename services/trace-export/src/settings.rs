//! The export's settings, read from OpenTelemetry's standard environment variables
//! (<https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/>), so an
//! operator configures Shoal as any other OpenTelemetry SDK. Export is off unless an endpoint
//! is given. A value Shoal would not act on (an exporter, protocol or sampler it does not
//! implement, a malformed number) is an error at start-up, never a setting silently ignored.
//!
//! Pure: the caller hands in how to look a variable up.

use std::time::Duration;

use url::Url;

/// Everything the export needs; None from [`ExportSettings::from_env`] means export is off.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportSettings {
    /// The collector's OTLP/gRPC endpoint.
    pub endpoint: Url,
    /// `service.name` on every exported span.
    pub service_name: String,
    pub sampler: SamplerSetting,
    pub queue: QueueSettings,
}

/// `OTEL_TRACES_SAMPLER` (and its `OTEL_TRACES_SAMPLER_ARG`), the values the specification
/// names that Shoal implements.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SamplerSetting {
    AlwaysOn,
    AlwaysOff,
    TraceIdRatio(f64),
    ParentBasedAlwaysOn,
    ParentBasedAlwaysOff,
    ParentBasedTraceIdRatio(f64),
}

/// The bounded queue between span ends and the exporter (`OTEL_BSP_*`, the batch span
/// processor's variables, with the specification's defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueSettings {
    /// Spans waiting for export; a span that ends while it is full is dropped and counted.
    pub max_queue_size: usize,
    pub max_export_batch_size: usize,
    /// The longest a span waits for its batch to fill before the batch is sent anyway.
    pub schedule_delay: Duration,
    /// How long one batch's export may take before it is given up (and its spans counted as
    /// dropped).
    pub export_timeout: Duration,
}

impl Default for QueueSettings {
    fn default() -> QueueSettings {
        QueueSettings {
            max_queue_size: 2048,
            max_export_batch_size: 512,
            schedule_delay: Duration::from_millis(5000),
            export_timeout: Duration::from_millis(30000),
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{name}={value:?}: {reason}")]
pub struct SettingsError {
    pub name: &'static str,
    pub value: String,
    pub reason: String,
}

fn error(name: &'static str, value: &str, reason: impl Into<String>) -> SettingsError {
    SettingsError {
        name,
        value: value.to_owned(),
        reason: reason.into(),
    }
}

impl ExportSettings {
    /// The settings `get` gives (a variable's value, None when unset; an empty value counts as
    /// unset, as the specification says), `default_service` naming the process when
    /// `OTEL_SERVICE_NAME` does not. Every variable is checked even when export is off, so a
    /// mistake shows before the endpoint is added.
    pub fn from_env(
        get: impl Fn(&str) -> Option<String>,
        default_service: &str,
    ) -> Result<Option<ExportSettings>, SettingsError> {
        let get = |name: &str| get(name).filter(|v| !v.trim().is_empty());
        let disabled = match get("OTEL_SDK_DISABLED") {
            None => false,
            Some(v) => parse_bool("OTEL_SDK_DISABLED", &v)?,
        };
        let exporter = get("OTEL_TRACES_EXPORTER");
        let exporter_off = match exporter.as_deref().map(str::trim) {
            None | Some("otlp") => false,
            Some("none") => true,
            Some(other) => {
                return Err(error(
                    "OTEL_TRACES_EXPORTER",
                    other,
                    "Shoal exports traces over OTLP only: use `otlp` (the default) or `none`",
                ));
            }
        };
        let protocol = (
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            "OTEL_EXPORTER_OTLP_PROTOCOL",
        );
        if let Some((name, value)) = first_set(&get, protocol)
            && value.trim() != "grpc"
        {
            return Err(error(
                name,
                &value,
                "Shoal's OTLP exporter speaks gRPC only (`grpc`, port 4317 on a collector); http/protobuf and http/json are not supported",
            ));
        }
        let sampler = sampler(&get)?;
        let queue = queue(&get)?;
        let endpoint = match first_set(
            &get,
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "OTEL_EXPORTER_OTLP_ENDPOINT",
            ),
        ) {
            None => None,
            Some((name, value)) => Some(endpoint(name, &value)?),
        };
        let service_name = get("OTEL_SERVICE_NAME").unwrap_or_else(|| default_service.to_owned());
        if disabled || exporter_off {
            return Ok(None);
        }
        let Some(endpoint) = endpoint else {
            if let Some(exporter) = exporter {
                return Err(error(
                    "OTEL_TRACES_EXPORTER",
                    &exporter,
                    "no collector to export to: set OTEL_EXPORTER_OTLP_ENDPOINT (without one, export is off)",
                ));
            }
            return Ok(None);
        };
        Ok(Some(ExportSettings {
            endpoint,
            service_name,
            sampler,
            queue,
        }))
    }
}

/// The first of a specific variable and its general fallback that is set, by name.
fn first_set(
    get: &impl Fn(&str) -> Option<String>,
    (specific, general): (&'static str, &'static str),
) -> Option<(&'static str, String)> {
    get(specific)
        .map(|v| (specific, v))
        .or_else(|| get(general).map(|v| (general, v)))
}

fn parse_bool(name: &'static str, value: &str) -> Result<bool, SettingsError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(error(name, value, "expected true or false")),
    }
}

fn endpoint(name: &'static str, value: &str) -> Result<Url, SettingsError> {
    let url = Url::parse(value.trim()).map_err(|e| {
        error(
            name,
            value,
            format!("not a URL ({e}); e.g. http://collector:4317"),
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(error(
            name,
            value,
            "expected an http:// or https:// URL of the collector's OTLP/gRPC port, e.g. http://collector:4317",
        ));
    }
    Ok(url)
}

fn sampler(get: &impl Fn(&str) -> Option<String>) -> Result<SamplerSetting, SettingsError> {
    const ARG: &str = "OTEL_TRACES_SAMPLER_ARG";
    let arg = get(ARG);
    let ratio = || -> Result<f64, SettingsError> {
        let Some(arg) = &arg else {
            return Ok(1.0);
        };
        match arg.trim().parse::<f64>() {
            Ok(ratio) if (0.0..=1.0).contains(&ratio) => Ok(ratio),
            _ => Err(error(
                ARG,
                arg,
                "expected the fraction of traces to sample, from 0 to 1",
            )),
        }
    };
    let name = get("OTEL_TRACES_SAMPLER");
    let sampler = match name.as_deref().map(str::trim) {
        None | Some("parentbased_always_on") => SamplerSetting::ParentBasedAlwaysOn,
        Some("always_on") => SamplerSetting::AlwaysOn,
        Some("always_off") => SamplerSetting::AlwaysOff,
        Some("parentbased_always_off") => SamplerSetting::ParentBasedAlwaysOff,
        Some("traceidratio") => return Ok(SamplerSetting::TraceIdRatio(ratio()?)),
        Some("parentbased_traceidratio") => {
            return Ok(SamplerSetting::ParentBasedTraceIdRatio(ratio()?));
        }
        Some(other) => {
            return Err(error(
                "OTEL_TRACES_SAMPLER",
                other,
                "not a sampler Shoal implements: always_on, always_off, traceidratio, parentbased_always_on (the default), parentbased_always_off or parentbased_traceidratio",
            ));
        }
    };
    if let Some(arg) = arg {
        return Err(error(
            ARG,
            &arg,
            "only traceidratio and parentbased_traceidratio take an argument; set OTEL_TRACES_SAMPLER to one of them or unset this",
        ));
    }
    Ok(sampler)
}

fn queue(get: &impl Fn(&str) -> Option<String>) -> Result<QueueSettings, SettingsError> {
    let mut queue = QueueSettings::default();
    let number = |name: &'static str| -> Result<Option<u64>, SettingsError> {
        get(name)
            .map(|v| {
                v.trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| error(name, &v, "expected a whole number above 0"))
            })
            .transpose()
    };
    if let Some(n) = number("OTEL_BSP_MAX_QUEUE_SIZE")? {
        queue.max_queue_size = n as usize;
    }
    if let Some(n) = number("OTEL_BSP_MAX_EXPORT_BATCH_SIZE")? {
        queue.max_export_batch_size = n as usize;
    }
    if let Some(ms) = number("OTEL_BSP_SCHEDULE_DELAY")? {
        queue.schedule_delay = Duration::from_millis(ms);
    }
    if let Some(ms) = number("OTEL_BSP_EXPORT_TIMEOUT")? {
        queue.export_timeout = Duration::from_millis(ms);
    }
    if queue.max_export_batch_size > queue.max_queue_size {
        return Err(error(
            "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
            &queue.max_export_batch_size.to_string(),
            format!(
                "a batch cannot be larger than the queue (OTEL_BSP_MAX_QUEUE_SIZE, {})",
                queue.max_queue_size
            ),
        ));
    }
    // One export at a time is what the queue is built for; more would be a setting without
    // effect.
    if let Some(v) = get("OTEL_BSP_MAX_CONCURRENT_EXPORTS")
        && v.trim() != "1"
    {
        return Err(error(
            "OTEL_BSP_MAX_CONCURRENT_EXPORTS",
            &v,
            "Shoal exports one batch at a time; only 1 is accepted",
        ));
    }
    Ok(queue)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn read(vars: &[(&str, &str)]) -> Result<Option<ExportSettings>, SettingsError> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        ExportSettings::from_env(|name| vars.get(name).cloned(), "shoal-worker")
    }

    const ENDPOINT: (&str, &str) = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317");

    #[test]
    fn export_is_off_without_an_endpoint() {
        assert_eq!(read(&[]), Ok(None));
        assert_eq!(read(&[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")]), Ok(None));
        assert_eq!(read(&[("OTEL_TRACES_SAMPLER", "always_on")]), Ok(None));
    }

    #[test]
    fn an_endpoint_turns_export_on_with_the_specifications_defaults() {
        let settings = read(&[ENDPOINT]).unwrap().unwrap();
        assert_eq!(settings.endpoint.as_str(), "http://collector:4317/");
        assert_eq!(settings.service_name, "shoal-worker");
        assert_eq!(settings.sampler, SamplerSetting::ParentBasedAlwaysOn);
        assert_eq!(settings.queue, QueueSettings::default());
    }

    #[test]
    fn the_traces_endpoint_and_service_name_win() {
        let settings = read(&[
            ENDPOINT,
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://traces:4317"),
            ("OTEL_SERVICE_NAME", "shoal-eu"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(settings.endpoint.as_str(), "https://traces:4317/");
        assert_eq!(settings.service_name, "shoal-eu");
    }

    #[test]
    fn disabled_sdk_or_none_exporter_turns_export_off() {
        assert_eq!(read(&[ENDPOINT, ("OTEL_SDK_DISABLED", "TRUE")]), Ok(None));
        assert_eq!(
            read(&[ENDPOINT, ("OTEL_TRACES_EXPORTER", "none")]),
            Ok(None)
        );
        assert!(
            read(&[ENDPOINT, ("OTEL_SDK_DISABLED", "false")])
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn samplers_and_their_ratio() {
        let cases: &[(&[(&str, &str)], SamplerSetting)] = &[
            (
                &[("OTEL_TRACES_SAMPLER", "always_on")],
                SamplerSetting::AlwaysOn,
            ),
            (
                &[("OTEL_TRACES_SAMPLER", "always_off")],
                SamplerSetting::AlwaysOff,
            ),
            (
                &[("OTEL_TRACES_SAMPLER", "parentbased_always_off")],
                SamplerSetting::ParentBasedAlwaysOff,
            ),
            (
                &[("OTEL_TRACES_SAMPLER", "traceidratio")],
                SamplerSetting::TraceIdRatio(1.0),
            ),
            (
                &[
                    ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
                    ("OTEL_TRACES_SAMPLER_ARG", "0.25"),
                ],
                SamplerSetting::ParentBasedTraceIdRatio(0.25),
            ),
        ];
        for (vars, expected) in cases {
            let mut vars = vars.to_vec();
            vars.push(ENDPOINT);
            assert_eq!(read(&vars).unwrap().unwrap().sampler, *expected, "{vars:?}");
        }
    }

    #[test]
    fn settings_shoal_would_not_act_on_are_errors_naming_the_variable() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[("OTEL_TRACES_SAMPLER", "xray")], "OTEL_TRACES_SAMPLER"),
            (
                &[("OTEL_TRACES_SAMPLER", "jaeger_remote")],
                "OTEL_TRACES_SAMPLER",
            ),
            (
                &[
                    ("OTEL_TRACES_SAMPLER", "traceidratio"),
                    ("OTEL_TRACES_SAMPLER_ARG", "1.5"),
                ],
                "OTEL_TRACES_SAMPLER_ARG",
            ),
            (
                &[
                    ("OTEL_TRACES_SAMPLER", "traceidratio"),
                    ("OTEL_TRACES_SAMPLER_ARG", "half"),
                ],
                "OTEL_TRACES_SAMPLER_ARG",
            ),
            (
                &[("OTEL_TRACES_SAMPLER_ARG", "0.5")],
                "OTEL_TRACES_SAMPLER_ARG",
            ),
            (
                &[("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")],
                "OTEL_EXPORTER_OTLP_PROTOCOL",
            ),
            (
                &[("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json")],
                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            ),
            (
                &[("OTEL_TRACES_EXPORTER", "zipkin")],
                "OTEL_TRACES_EXPORTER",
            ),
            (
                &[("OTEL_TRACES_EXPORTER", "otlp,console")],
                "OTEL_TRACES_EXPORTER",
            ),
            (&[("OTEL_SDK_DISABLED", "yes")], "OTEL_SDK_DISABLED"),
            (
                &[("OTEL_BSP_MAX_QUEUE_SIZE", "0")],
                "OTEL_BSP_MAX_QUEUE_SIZE",
            ),
            (
                &[("OTEL_BSP_SCHEDULE_DELAY", "5s")],
                "OTEL_BSP_SCHEDULE_DELAY",
            ),
            (
                &[
                    ("OTEL_BSP_MAX_QUEUE_SIZE", "10"),
                    ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "11"),
                ],
                "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
            ),
            (
                &[("OTEL_BSP_MAX_CONCURRENT_EXPORTS", "4")],
                "OTEL_BSP_MAX_CONCURRENT_EXPORTS",
            ),
        ];
        for (vars, name) in cases {
            let mut with_endpoint = vars.to_vec();
            with_endpoint.push(ENDPOINT);
            // Wrong with or without an endpoint: a mistake shows before export is turned on.
            for vars in [vars.to_vec(), with_endpoint] {
                let err = read(&vars).expect_err("refused");
                assert_eq!(err.name, *name, "{vars:?}: {err}");
            }
        }
    }

    #[test]
    fn a_malformed_endpoint_or_an_exporter_without_one_is_an_error() {
        for endpoint in ["collector:4317", "ftp://collector", "not a url"] {
            let err = read(&[("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)]).expect_err(endpoint);
            assert_eq!(err.name, "OTEL_EXPORTER_OTLP_ENDPOINT", "{err}");
        }
        let err = read(&[("OTEL_TRACES_EXPORTER", "otlp")]).expect_err("no endpoint");
        assert!(err.reason.contains("OTEL_EXPORTER_OTLP_ENDPOINT"), "{err}");
    }
}
