//! The `host.json` settings an app carries as `hostConfig`, with Azure's documented defaults
//! and ranges.
//!
//! Tenants write the same JSON they would put in `host.json` (fields optional, camelCase), so
//! settings copied from Azure's documentation keep their meaning. Parsing reads the object
//! field by field instead of through serde so that *every* unknown field, wrong type and
//! out-of-range value is reported in one response, each with its path. A `null` field means
//! "not set" — the same thing JSON merge patch uses to remove a field — and gets the default.
//! What the API returns is the normalized form with every default filled in, so clients see
//! the values the workers actually use.

mod client_retry;
mod event_hubs;
mod retry;
mod section;
mod service_bus;

use serde::Serialize;
use serde_json::Value;

use section::Section;
use utoipa::ToSchema;

use crate::timespan::TimeSpan;
use crate::validation::{Problems, ValidationError};

pub use client_retry::{EventHubsRetryOptions, RetryMode, ServiceBusRetryOptions};
pub use event_hubs::{EventHubsOptions, InitialOffsetOptions, InitialOffsetType};
pub use retry::{RetryPolicy, RetryStrategy};
pub use service_bus::ServiceBusOptions;

/// Azure's option classes use .NET `int`; larger values are rejected as Azure would reject them.
const AZURE_INT_MAX: u32 = i32::MAX as u32;

/// Upper bound Shoal puts on per-instance concurrency knobs (`newBatchThreshold`,
/// `maxConcurrentCalls`, `maxConcurrentSessions`). Azure only requires them to be positive;
/// Shoal's workers are shared between tenants, so one app must not be able to ask a worker for
/// unbounded parallel handler calls. Azure's own defaults stay far below it.
pub const MAX_CONCURRENCY: u32 = 1000;

/// The whole `hostConfig` (a `host.json` subset). Absent or `null` means all defaults.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostConfig {
    /// Longest a single invocation may run. Default `00:05:00`, allowed `00:00:01`–`00:10:00`:
    /// the Consumption plan's documented default and bounds. Shoal runs every tenant on a shared
    /// worker pool like Consumption does, and a queue message's 10-minute invisibility and a
    /// Service Bus lock's 5-minute renewal window are sized for invocations in that range.
    pub function_timeout: TimeSpan,
    pub extensions: Extensions,
    /// App-wide retry policy; a function's own `retry` takes precedence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetryPolicy>,
}

/// `extensions` in `host.json`: per-trigger settings shared by all functions of the app.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct Extensions {
    pub queues: QueuesOptions,
    pub service_bus: ServiceBusOptions,
    pub event_hubs: EventHubsOptions,
}

/// Storage queue trigger settings (`extensions.queues`), as documented for Azure Functions.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QueuesOptions {
    /// Messages fetched per poll, 1–32 (the Storage API's maximum). Default 16.
    pub batch_size: u32,
    /// In-flight count at or below which the next batch is fetched; 0–[`MAX_CONCURRENCY`].
    /// Default `batchSize / 2` of the *effective* batch size. Azure's newer hosts multiply the
    /// default by the processor count; Shoal does not, so an instance's capacity
    /// (`batchSize + newBatchThreshold`, 24 by default) is the same on every worker. It may
    /// exceed `batchSize`, as Azure allows.
    pub new_batch_threshold: u32,
    /// Longest back-off between polls of an empty queue. Default 1 minute, at least 100 ms.
    pub max_polling_interval: TimeSpan,
    /// Delay before a failed message becomes visible again. Default 0, at most 7 days (the
    /// Storage service's limit for a message's visibility timeout).
    pub visibility_timeout: TimeSpan,
    /// Deliveries before a message moves to `<queue>-poison`. Default 5, at least 1.
    pub max_dequeue_count: u32,
    /// How message bodies are encoded on the queue. Default `base64`, as Azure Functions expects.
    pub message_encoding: MessageEncoding,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum MessageEncoding {
    Base64,
    None,
}

/// Defaults that differ between Azure and local development.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostDefaults {
    pub max_polling_interval: TimeSpan,
}

impl HostDefaults {
    /// Azure's documented defaults.
    pub const AZURE: HostDefaults = HostDefaults {
        max_polling_interval: TimeSpan::from_secs(60),
    };
    /// Azure Functions Core Tools poll at most every 2 s locally so a developer is not kept
    /// waiting; `shoal dev` does the same.
    pub const LOCAL_DEVELOPMENT: HostDefaults = HostDefaults {
        max_polling_interval: TimeSpan::from_secs(2),
    };
}

impl Default for QueuesOptions {
    fn default() -> Self {
        QueuesOptions {
            batch_size: 16,
            new_batch_threshold: 8,
            max_polling_interval: HostDefaults::AZURE.max_polling_interval,
            visibility_timeout: TimeSpan::ZERO,
            max_dequeue_count: 5,
            message_encoding: MessageEncoding::Base64,
        }
    }
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            function_timeout: TimeSpan::from_secs(300),
            extensions: Extensions::default(),
            retry: None,
        }
    }
}

impl HostConfig {
    /// Parse the JSON object as the tenant wrote it (fields optional, camelCase, unknown fields
    /// rejected), validate every range, and fill documented defaults. Error paths are prefixed
    /// by `prefix`. A top-level `"version": "2.0"` is accepted so a real `host.json` can be
    /// pasted; any other field outside the supported subset is an error, never silently ignored.
    pub fn parse(written: &Value, prefix: &str) -> Result<HostConfig, ValidationError> {
        Self::parse_with_defaults(written, prefix, &HostDefaults::AZURE)
    }

    /// [`HostConfig::parse`] with environment-specific defaults (see [`HostDefaults`]).
    pub fn parse_with_defaults(
        written: &Value,
        prefix: &str,
        defaults: &HostDefaults,
    ) -> Result<HostConfig, ValidationError> {
        let mut problems = Problems::new();
        let root = Section::open(
            &mut problems,
            Some(written),
            prefix.to_owned(),
            &["version", "functionTimeout", "extensions", "retry"],
        );
        if let Some(version) = root.raw("version")
            && version.as_str() != Some("2.0")
        {
            problems.push(root.path("version"), "must be \"2.0\"");
        }
        let function_timeout = root.duration(
            &mut problems,
            "functionTimeout",
            TimeSpan::from_secs(300),
            TimeSpan::from_secs(1),
            Some(TimeSpan::from_secs(600)),
        );
        let extensions = root.child(
            &mut problems,
            "extensions",
            &["queues", "serviceBus", "eventHubs"],
        );
        let queues = parse_queues(&mut problems, &extensions, defaults);
        let service_bus = service_bus::parse_service_bus(&mut problems, &extensions);
        let event_hubs = event_hubs::parse_event_hubs(&mut problems, &extensions);
        let retry = root
            .raw("retry")
            .map(|value| RetryPolicy::parse(value, &root.path("retry")))
            .and_then(|result| result.map_err(|err| problems.absorb(err)).ok());
        problems.finish()?;
        Ok(HostConfig {
            function_timeout,
            extensions: Extensions {
                queues,
                service_bus,
                event_hubs,
            },
            retry,
        })
    }
}

fn parse_queues(
    problems: &mut Problems,
    extensions: &Section,
    defaults: &HostDefaults,
) -> QueuesOptions {
    let queues = extensions.child(
        problems,
        "queues",
        &[
            "batchSize",
            "newBatchThreshold",
            "maxPollingInterval",
            "visibilityTimeout",
            "maxDequeueCount",
            "messageEncoding",
        ],
    );
    let batch_size = queues.int(problems, "batchSize", 16, 1, 32);
    let new_batch_threshold = queues.int(
        problems,
        "newBatchThreshold",
        batch_size / 2,
        0,
        MAX_CONCURRENCY,
    );
    // The documentation's older samples write this one as milliseconds (`2000`), so a number
    // is read as milliseconds; a string is a TimeSpan like everywhere else.
    let max_polling_interval = match queues.raw("maxPollingInterval") {
        Some(Value::Number(n)) => match n.as_u64() {
            Some(ms) if ms >= 100 => TimeSpan::from_millis(ms),
            _ => {
                problems.push(
                    queues.path("maxPollingInterval"),
                    "must be at least 100 (milliseconds) or a duration of at least 00:00:00.100",
                );
                defaults.max_polling_interval
            }
        },
        _ => queues.duration(
            problems,
            "maxPollingInterval",
            defaults.max_polling_interval,
            TimeSpan::from_millis(100),
            None,
        ),
    };
    QueuesOptions {
        batch_size,
        new_batch_threshold,
        max_polling_interval,
        visibility_timeout: queues.duration(
            problems,
            "visibilityTimeout",
            TimeSpan::ZERO,
            TimeSpan::ZERO,
            Some(TimeSpan::from_secs(7 * 86_400)),
        ),
        max_dequeue_count: queues.int(problems, "maxDequeueCount", 5, 1, AZURE_INT_MAX),
        message_encoding: queues.choice(
            problems,
            "messageEncoding",
            MessageEncoding::Base64,
            &[
                ("base64", MessageEncoding::Base64),
                ("none", MessageEncoding::None),
            ],
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(written: Value) -> Vec<(String, String)> {
        HostConfig::parse(&written, "hostConfig")
            .unwrap_err()
            .errors
            .into_iter()
            .map(|e| (e.path, e.message))
            .collect()
    }

    fn queues(written: Value) -> Result<QueuesOptions, ValidationError> {
        HostConfig::parse(&json!({"extensions": {"queues": written}}), "hostConfig")
            .map(|c| c.extensions.queues)
    }

    #[test]
    fn absent_or_null_or_empty_is_all_defaults() {
        for written in [
            Value::Null,
            json!({}),
            json!({"extensions": null}),
            json!({"version": "2.0"}),
        ] {
            assert_eq!(
                HostConfig::parse(&written, "hostConfig"),
                Ok(HostConfig::default())
            );
        }
        let defaults = HostConfig::default();
        assert_eq!(defaults.function_timeout, TimeSpan::from_secs(300));
        let q = &defaults.extensions.queues;
        assert_eq!(
            (q.batch_size, q.new_batch_threshold, q.max_dequeue_count),
            (16, 8, 5)
        );
        assert_eq!(q.max_polling_interval, TimeSpan::from_secs(60));
        assert_eq!(q.visibility_timeout, TimeSpan::ZERO);
        assert_eq!(q.message_encoding, MessageEncoding::Base64);
    }

    #[test]
    fn new_batch_threshold_defaults_to_half_the_effective_batch_size() {
        let cases = [(1, 0), (2, 1), (7, 3), (16, 8), (32, 16)];
        for (batch_size, want) in cases {
            let q = queues(json!({"batchSize": batch_size})).unwrap();
            assert_eq!(q.new_batch_threshold, want, "batchSize {batch_size}");
        }
        let q = queues(json!({"batchSize": 4, "newBatchThreshold": 20})).unwrap();
        assert_eq!(q.new_batch_threshold, 20);
    }

    #[test]
    fn queue_bounds_are_checked_just_inside_and_outside() {
        let cases = [
            (json!({"batchSize": 1}), None),
            (json!({"batchSize": 32}), None),
            (json!({"batchSize": 0}), Some("must be between 1 and 32")),
            (json!({"batchSize": 33}), Some("must be between 1 and 32")),
            (json!({"newBatchThreshold": 0}), None),
            (json!({"newBatchThreshold": 1000}), None),
            (
                json!({"newBatchThreshold": -1}),
                Some("must be between 0 and 1000"),
            ),
            (
                json!({"newBatchThreshold": 1001}),
                Some("must be between 0 and 1000"),
            ),
            (json!({"maxDequeueCount": 1}), None),
            (json!({"maxDequeueCount": 0}), Some("must be at least 1")),
            (json!({"maxPollingInterval": "00:00:00.100"}), None),
            (
                json!({"maxPollingInterval": "00:00:00.099"}),
                Some("must be at least 00:00:00.100"),
            ),
            (json!({"maxPollingInterval": 100}), None),
            (
                json!({"maxPollingInterval": 99}),
                Some("must be at least 100 (milliseconds)"),
            ),
            (json!({"visibilityTimeout": "7.00:00:00"}), None),
            (
                json!({"visibilityTimeout": "7.00:00:01"}),
                Some("must be at most 7.00:00:00"),
            ),
            (json!({"messageEncoding": "none"}), None),
            (json!({"messageEncoding": "Base64"}), None),
            (
                json!({"messageEncoding": "utf8"}),
                Some("must be one of \"base64\", \"none\""),
            ),
        ];
        for (written, want) in cases {
            let got = queues(written.clone())
                .err()
                .map(|e| e.errors[0].message.clone());
            match (want, got) {
                (None, None) => {}
                (Some(want), Some(got)) => assert!(got.starts_with(want), "{written}: {got}"),
                (want, got) => panic!("{written}: want {want:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn milliseconds_polling_interval_is_read_as_milliseconds() {
        let q = queues(json!({"maxPollingInterval": 2000})).unwrap();
        assert_eq!(q.max_polling_interval, TimeSpan::from_secs(2));
    }

    #[test]
    fn function_timeout_bounds() {
        let ok = |s: &str| HostConfig::parse(&json!({"functionTimeout": s}), "").is_ok();
        assert!(ok("00:00:01") && ok("00:10:00"));
        assert!(!ok("00:00:00.999") && !ok("00:10:01"));
        assert_eq!(
            errors(json!({"functionTimeout": "00:20:00"})),
            [(
                "hostConfig.functionTimeout".into(),
                "must be between 00:00:01 and 00:10:00".into()
            )]
        );
    }

    #[test]
    fn all_range_errors_are_reported_at_once() {
        let got = errors(json!({
            "functionTimeout": "01:00:00",
            "extensions": {
                "queues": {"batchSize": 64, "maxDequeueCount": 0},
                "serviceBus": {"maxConcurrentCalls": 0},
            }
        }));
        let paths: Vec<&str> = got.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            [
                "hostConfig.functionTimeout",
                "hostConfig.extensions.queues.batchSize",
                "hostConfig.extensions.queues.maxDequeueCount",
                "hostConfig.extensions.serviceBus.maxConcurrentCalls",
            ]
        );
    }

    #[test]
    fn unknown_fields_are_errors_with_their_path() {
        assert_eq!(
            errors(json!({"logging": {}, "extensions": {"queues": {"BatchSize": 1, "foo": 2}}})),
            [
                (
                    "hostConfig.logging".into(),
                    "unknown field \"logging\"".into()
                ),
                (
                    "hostConfig.extensions.queues.BatchSize".into(),
                    "unknown field \"BatchSize\", did you mean \"batchSize\"?".into()
                ),
                (
                    "hostConfig.extensions.queues.foo".into(),
                    "unknown field \"foo\"".into()
                ),
            ]
        );
    }

    #[test]
    fn wrong_types_are_errors_with_their_path() {
        assert_eq!(
            errors(
                json!({"version": "1.0", "extensions": {"queues": {"batchSize": "16", "visibilityTimeout": 5}, "serviceBus": []}})
            ),
            [
                ("hostConfig.version".into(), "must be \"2.0\"".into()),
                (
                    "hostConfig.extensions.queues.batchSize".into(),
                    "expected an integer".into()
                ),
                (
                    "hostConfig.extensions.queues.visibilityTimeout".into(),
                    "expected a duration string like \"00:01:00\"".into()
                ),
                (
                    "hostConfig.extensions.serviceBus".into(),
                    "expected an object".into()
                ),
            ]
        );
        assert_eq!(
            errors(json!([])),
            [("hostConfig".into(), "expected an object".into())]
        );
        assert_eq!(
            errors(json!({"extensions": {"queues": {"batchSize": 1.5}}})),
            [(
                "hostConfig.extensions.queues.batchSize".into(),
                "expected an integer".into()
            )]
        );
    }

    #[test]
    fn local_development_polls_every_two_seconds_unless_set() {
        let dev = HostDefaults::LOCAL_DEVELOPMENT;
        let parsed = HostConfig::parse_with_defaults(&json!({}), "", &dev).unwrap();
        assert_eq!(
            parsed.extensions.queues.max_polling_interval,
            TimeSpan::from_secs(2)
        );
        let written = json!({"extensions": {"queues": {"maxPollingInterval": "00:00:30"}}});
        let parsed = HostConfig::parse_with_defaults(&written, "", &dev).unwrap();
        assert_eq!(
            parsed.extensions.queues.max_polling_interval,
            TimeSpan::from_secs(30)
        );
    }

    #[test]
    fn serializes_full_normalized_form() {
        let parsed =
            HostConfig::parse(&json!({"extensions": {"queues": {"batchSize": 8}}}), "").unwrap();
        let json = serde_json::to_value(&parsed).unwrap();
        assert_eq!(json["functionTimeout"], "00:05:00");
        assert_eq!(
            json["extensions"]["queues"],
            json!({
                "batchSize": 8, "newBatchThreshold": 4, "maxPollingInterval": "00:01:00",
                "visibilityTimeout": "00:00:00", "maxDequeueCount": 5, "messageEncoding": "base64"
            })
        );
        assert_eq!(json["extensions"]["serviceBus"]["maxConcurrentCalls"], 16);
        assert!(json.get("retry").is_none());
        // The normalized form parses back to the same settings.
        assert_eq!(HostConfig::parse(&json, ""), Ok(parsed));
    }
}
