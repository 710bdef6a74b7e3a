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
mod custom_handler;
mod event_hubs;
mod retry;
mod schema;
pub(crate) mod section;
mod service_bus;
pub mod stored;

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use section::Section;
use utoipa::ToSchema;

use crate::binding_kinds;
use crate::binding_kinds::service_bus::HOST_SECTION as SERVICE_BUS;
use crate::binding_kinds::storage_queue::HOST_SECTION as QUEUES;
use crate::binding_kinds::stream::HOST_SECTION as EVENT_HUBS;
use crate::timespan::TimeSpan;
use crate::validation::{Problems, ValidationError};

pub use client_retry::{EventHubsRetryOptions, RetryMode, ServiceBusRetryOptions};
pub use custom_handler::CustomHandler;
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

/// The whole `hostConfig`: a `host.json` as SchemaStore's schema describes it. Absent or
/// `null` means all defaults.
///
/// Sections Shoal acts on are returned normalized, every default filled in. Sections it only
/// stores (see [`stored::NO_EFFECT`]; `diagnostics` lists them) are returned exactly as
/// written, so a pasted `host.json` reads back unchanged.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostConfig {
    /// The `host.json` schema version; only `"2.0"` exists. Returned when written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Longest a single invocation may run. Default `00:05:00`, allowed `00:00:01`–`00:10:00`:
    /// the Consumption plan's documented default and bounds. Shoal runs every tenant on a shared
    /// worker pool like Consumption does, and a queue message's 10-minute invisibility and a
    /// Service Bus lock's 5-minute renewal window are sized for invocations in that range.
    pub function_timeout: TimeSpan,
    pub extensions: Extensions,
    /// App-wide retry policy; a function's own `retry` takes precedence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetryPolicy>,
    pub custom_handler: CustomHandler,
    /// Stored as written; no effect (the Functions host's logging).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub logging: Option<Value>,
    /// Stored as written; no effect (Shoal's bindings are built in).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub extension_bundle: Option<Value>,
    /// Stored as written; no effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub aggregator: Option<Value>,
    /// Stored as written; no effect (every function written is loaded).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<String>>)]
    pub functions: Option<Value>,
    /// Stored as written; no effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub health_monitor: Option<Value>,
    /// Stored as written; no effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub language_worker: Option<Value>,
    /// Stored as written; no effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub managed_dependency: Option<Value>,
    /// Stored as written; no effect (listeners are placed with leases in Postgres).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub singleton: Option<Value>,
    /// Stored as written; no effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<String>>)]
    pub watch_directories: Option<Value>,
    /// Stored as written; no effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<String>>)]
    pub watch_files: Option<Value>,
    /// Stored as written; no effect (Shoal's concurrency limits are static).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub concurrency: Option<Value>,
    /// Stored as written; no effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<bool>)]
    pub send_canceled_invocations_to_worker: Option<Value>,
}

/// `extensions` in `host.json`: per-trigger settings shared by all functions of the app.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct Extensions {
    pub queues: QueuesOptions,
    pub service_bus: ServiceBusOptions,
    pub event_hubs: EventHubsOptions,
    /// Stored as written; no effect (the webhook ingress has its own route and limits).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub http: Option<Value>,
    /// Stored as written; no effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub durable_task: Option<Value>,
    /// Stored as written; no effect.
    #[serde(rename = "cosmosDB", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub cosmos_db: Option<Value>,
    /// Stored as written; no effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub blobs: Option<Value>,
    /// Stored as written; no effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub send_grid: Option<Value>,
    /// The sections of the kinds in `binding_kinds` (`rabbitMQ`), each read by its kind with
    /// its defaults filled in, by section name. Not in the OpenAPI schema of `Extensions`,
    /// which leaves other properties open: the kinds' own documentation describes them.
    #[serde(flatten)]
    #[schema(ignore)]
    pub kinds: KindSections,
}

impl Extensions {
    /// The section `kind` reads (see [`binding_kinds::HostSection`]), defaults filled in, as
    /// JSON: a table section as kept, one read here into a typed section (`queues`, whose
    /// defaults depend on where the worker runs; `serviceBus`, `eventHubs`) written out. None
    /// for a kind without one.
    pub fn section_of(&self, kind: &dyn binding_kinds::BindingKind) -> Option<Cow<'_, Value>> {
        let name = kind.host_section()?.name;
        let typed = match name {
            QUEUES => serde_json::to_value(&self.queues),
            SERVICE_BUS => serde_json::to_value(&self.service_bus),
            EVENT_HUBS => serde_json::to_value(&self.event_hubs),
            _ => return self.kinds.get(name).map(Cow::Borrowed),
        };
        typed.ok().map(Cow::Owned)
    }
}

/// The sections of `extensions` the kinds of `binding_kinds` read, by name; by default each
/// with its own defaults.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(transparent)]
pub struct KindSections(BTreeMap<String, Value>);

impl KindSections {
    /// The section called `name` (`rabbitMQ`), defaults filled in.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.get(name)
    }

    fn read(ext: &Section<'_>, problems: &mut Problems) -> KindSections {
        KindSections(
            binding_kinds::host_sections()
                .map(|(name, read)| {
                    let path = ext.path(name);
                    (name.to_owned(), read(ext.raw(name), &path, problems))
                })
                .collect(),
        )
    }
}

impl Default for KindSections {
    fn default() -> Self {
        let mut ignored = Problems::new();
        KindSections(
            binding_kinds::host_sections()
                .map(|(name, read)| (name.to_owned(), read(None, "", &mut ignored)))
                .collect(),
        )
    }
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
            version: None,
            function_timeout: TimeSpan::from_secs(300),
            extensions: Extensions::default(),
            retry: None,
            custom_handler: CustomHandler::default(),
            logging: None,
            extension_bundle: None,
            aggregator: None,
            functions: None,
            health_monitor: None,
            language_worker: None,
            managed_dependency: None,
            singleton: None,
            watch_directories: None,
            watch_files: None,
            concurrency: None,
            send_canceled_invocations_to_worker: None,
        }
    }
}

impl HostConfig {
    /// Parse the JSON object as the tenant wrote it (fields optional, camelCase, unknown fields
    /// rejected), validate every range and shape, and fill documented defaults. Error paths
    /// are prefixed by `prefix`. Every section SchemaStore's `host.json` schema lists is
    /// accepted; a field outside it is an error, never silently ignored.
    /// An app's `hostConfig` as stored: it was validated when written, so this reads it as
    /// it parses now, and falls back to the defaults if a later version no longer accepts it
    /// (for checks and health, which must not fail on one app's old document).
    pub fn from_stored(written: &Value) -> HostConfig {
        HostConfig::parse(written, "hostConfig").unwrap_or_default()
    }

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
            &[
                "version",
                "functionTimeout",
                "extensions",
                "retry",
                "customHandler",
                "logging",
                "extensionBundle",
                "aggregator",
                "functions",
                "healthMonitor",
                "languageWorker",
                "managedDependency",
                "singleton",
                "watchDirectories",
                "watchFiles",
                "concurrency",
                "sendCanceledInvocationsToWorker",
            ],
        );
        let version = root.raw("version");
        if version.is_some_and(|v| v.as_str() != Some("2.0")) {
            problems.push(root.path("version"), "must be \"2.0\"");
        }
        let function_timeout = root.duration(
            &mut problems,
            "functionTimeout",
            TimeSpan::from_secs(300),
            TimeSpan::from_secs(1),
            Some(TimeSpan::from_secs(600)),
        );
        let mut sections = vec![
            QUEUES,
            SERVICE_BUS,
            EVENT_HUBS,
            "http",
            "durableTask",
            "cosmosDB",
            "blobs",
            "sendGrid",
        ];
        sections.extend(binding_kinds::host_sections().map(|(name, _)| name));
        let ext = root.child(&mut problems, "extensions", &sections);
        let kinds = KindSections::read(&ext, &mut problems);
        let queues = parse_queues(&mut problems, &ext, defaults);
        let service_bus = service_bus::parse_service_bus(&mut problems, &ext);
        let event_hubs = event_hubs::parse_event_hubs(&mut problems, &ext);
        let extensions = Extensions {
            queues,
            service_bus,
            event_hubs,
            http: ext.stored(&mut problems, "http", &stored::HTTP),
            durable_task: ext.stored(&mut problems, "durableTask", &stored::DURABLE_TASK),
            cosmos_db: ext.stored(&mut problems, "cosmosDB", &stored::COSMOS_DB),
            blobs: ext.stored(&mut problems, "blobs", &stored::BLOBS),
            send_grid: ext.stored(&mut problems, "sendGrid", &stored::SEND_GRID),
            kinds,
        };
        let retry = root
            .raw("retry")
            .map(|value| RetryPolicy::parse(value, &root.path("retry")))
            .and_then(|result| result.map_err(|err| problems.absorb(err)).ok());
        let custom_handler = custom_handler::parse(&mut problems, &root);
        let p = &mut problems;
        let config = HostConfig {
            version: version.and_then(Value::as_str).map(str::to_owned),
            function_timeout,
            extensions,
            retry,
            custom_handler,
            logging: root.stored(p, "logging", &stored::LOGGING),
            extension_bundle: root.stored(p, "extensionBundle", &stored::EXTENSION_BUNDLE),
            aggregator: root.stored(p, "aggregator", &stored::AGGREGATOR),
            functions: root.stored(p, "functions", &stored::FUNCTIONS),
            health_monitor: root.stored(p, "healthMonitor", &stored::HEALTH_MONITOR),
            language_worker: root.stored(p, "languageWorker", &stored::LANGUAGE_WORKER),
            managed_dependency: root.stored(p, "managedDependency", &stored::MANAGED_DEPENDENCY),
            singleton: root.stored(p, "singleton", &stored::SINGLETON),
            watch_directories: root.stored(p, "watchDirectories", &stored::WATCHED_PATHS),
            watch_files: root.stored(p, "watchFiles", &stored::WATCHED_PATHS),
            concurrency: root.stored(p, "concurrency", &stored::CONCURRENCY),
            send_canceled_invocations_to_worker: root.stored(
                p,
                "sendCanceledInvocationsToWorker",
                &schema::Shape::Bool,
            ),
        };
        problems.finish()?;
        Ok(config)
    }
}

fn parse_queues(
    problems: &mut Problems,
    extensions: &Section,
    defaults: &HostDefaults,
) -> QueuesOptions {
    let queues = extensions.child(
        problems,
        QUEUES,
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
mod pasted_tests;
#[cfg(test)]
mod tests;
