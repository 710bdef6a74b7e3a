//! The `host.json` sections and keys Shoal accepts, validates and stores as written but does
//! not act on, with the reason each has no effect — what `diagnostics` tells the tenant.
//!
//! Shapes follow SchemaStore's `host.json` schema (`src/schemas/json/host.json`, definitions
//! `version-2` and `version-2-ext-5`), which is what editors validate a `host.json` against.
//! Where that schema leaves an object open, Shoal closes it with the keys it lists (plus
//! `logging.console`, which Azure's host.json reference documents), so a misspelled key is a
//! 422 instead of a setting that silently does nothing.

use serde_json::Value;

use super::schema::{Shape, set_keys};
use crate::validation::join_path;

const LOG_LEVELS: &[&str] = &[
    "Critical",
    "Debug",
    "Error",
    "Information",
    "None",
    "Trace",
    "Warning",
];

pub(super) const EXTENSION_BUNDLE: Shape =
    Shape::Object(&[("id", Shape::Str), ("version", Shape::Str)]);

pub(super) const AGGREGATOR: Shape =
    Shape::Object(&[("batchSize", Shape::Int), ("flushTimeout", Shape::Duration)]);

pub(super) const FUNCTIONS: Shape = Shape::Strings { non_empty: false };

pub(super) const HEALTH_MONITOR: Shape = Shape::Object(&[
    ("enabled", Shape::Bool),
    ("healthCheckInterval", Shape::Duration),
    ("healthCheckWindow", Shape::Duration),
    ("healthCheckThreshold", Shape::Int),
    ("counterThreshold", Shape::Number),
]);

pub(super) const LANGUAGE_WORKER: Shape = Shape::Object(&[("workersDirectory", Shape::Str)]);

const SAMPLING_SETTINGS: Shape = Shape::Object(&[
    ("isEnabled", Shape::Bool),
    ("maxTelemetryItemsPerSecond", Shape::Int),
    ("evaluationInterval", Shape::Duration),
    ("initialSamplingPercentage", Shape::Number),
    ("samplingPercentageIncreaseTimeout", Shape::Duration),
    ("samplingPercentageDecreaseTimeout", Shape::Duration),
    ("minSamplingPercentage", Shape::Number),
    ("maxSamplingPercentage", Shape::Number),
    ("movingAverageRatio", Shape::Number),
    ("excludedTypes", Shape::Str),
    ("includedTypes", Shape::Str),
]);

const SNAPSHOT_CONFIGURATION: Shape = Shape::Object(&[
    ("agentEndpoint", Shape::Str),
    ("captureSnapshotMemoryWeight", Shape::Number),
    ("failedRequestLimit", Shape::Int),
    ("handleUntrackedExceptions", Shape::Bool),
    ("isEnabled", Shape::Bool),
    ("isEnabledInDeveloperMode", Shape::Bool),
    ("isEnabledWhenProfiling", Shape::Bool),
    ("isExceptionSnappointsEnabled", Shape::Bool),
    ("isLowPrioritySnapshotUploader", Shape::Bool),
    ("maximumCollectionPlanSize", Shape::IntBetween(1, 9999)),
    ("maximumSnapshotsRequired", Shape::IntBetween(1, 999)),
    ("problemCounterResetInterval", Shape::Duration),
    ("provideAnonymousTelemetry", Shape::Bool),
    ("reconnectInterval", Shape::Duration),
    ("shadowCopyFolder", Shape::Str),
    ("shareUploaderProcess", Shape::Bool),
    ("snapshotInLowPriorityThread", Shape::Bool),
    ("snapshotsPerDayLimit", Shape::Int),
    ("snapshotsPerTenMinutesLimit", Shape::Int),
    ("tempFolder", Shape::Str),
    ("thresholdForSnapshotting", Shape::Int),
    ("uploaderProxy", Shape::Str),
]);

pub(super) const LOGGING: Shape = Shape::Object(&[
    ("logLevel", Shape::MapOf(&Shape::Enum(LOG_LEVELS))),
    (
        "applicationInsights",
        Shape::Object(&[
            ("samplingSettings", SAMPLING_SETTINGS),
            ("enableLiveMetrics", Shape::Bool),
            ("enableLiveMetricsFilters", Shape::Bool),
            ("enableDependencyTracking", Shape::Bool),
            ("enablePerformanceCountersCollection", Shape::Bool),
            (
                "httpAutoCollectionOptions",
                Shape::Object(&[
                    ("enableHttpTriggerExtendedInfoCollection", Shape::Bool),
                    ("enableW3CDistributedTracing", Shape::Bool),
                    ("enableResponseHeaderInjection", Shape::Bool),
                ]),
            ),
            ("snapshotConfiguration", SNAPSHOT_CONFIGURATION),
        ]),
    ),
    (
        "fileLoggingMode",
        Shape::Enum(&["never", "always", "debugOnly"]),
    ),
    (
        "console",
        Shape::Object(&[("isEnabled", Shape::Bool), ("disableColors", Shape::Bool)]),
    ),
]);

pub(super) const MANAGED_DEPENDENCY: Shape = Shape::Object(&[("enabled", Shape::Bool)]);

pub(super) const CUSTOM_HANDLER_DESCRIPTION: Shape = Shape::Object(&[
    ("defaultExecutablePath", Shape::Str),
    ("workingDirectory", Shape::Str),
    ("arguments", Shape::StringList),
]);

pub(super) const SINGLETON: Shape = Shape::Object(&[
    ("lockPeriod", Shape::Duration),
    ("listenerLockPeriod", Shape::Duration),
    ("listenerLockRecoveryPollingInterval", Shape::Duration),
    ("lockAcquisitionTimeout", Shape::Duration),
    ("lockAcquisitionPollingInterval", Shape::Duration),
]);

pub(super) const WATCHED_PATHS: Shape = Shape::Strings { non_empty: true };

pub(super) const CONCURRENCY: Shape = Shape::Object(&[
    ("dynamicConcurrencyEnabled", Shape::Bool),
    ("snapshotPersistenceEnabled", Shape::Bool),
]);

pub(super) const HTTP: Shape = Shape::Object(&[
    ("routePrefix", Shape::Str),
    ("maxConcurrentRequests", Shape::Int),
    ("maxOutstandingRequests", Shape::Int),
    ("dynamicThrottlesEnabled", Shape::Bool),
    (
        "hsts",
        Shape::Object(&[
            ("isEnabled", Shape::Bool),
            ("excludedHosts", Shape::Strings { non_empty: false }),
            ("includeSubDomains", Shape::Bool),
            ("maxAge", Shape::Str),
            ("preload", Shape::Bool),
        ]),
    ),
    ("customHeaders", Shape::AnyObject),
]);

pub(super) const SEND_GRID: Shape = Shape::Object(&[("from", Shape::Str)]);

pub(super) const DURABLE_TASK: Shape = Shape::Object(&[
    ("hubName", Shape::Str),
    (
        "storageProvider",
        Shape::Object(&[
            ("connectionStringName", Shape::Str),
            ("controlQueueBatchSize", Shape::Int),
            ("controlQueueBufferThreshold", Shape::Int),
            ("controlQueueVisibilityTimeout", Shape::Duration),
            ("maxQueuePollingInterval", Shape::Duration),
            ("partitionCount", Shape::IntBetween(1, 16)),
            ("trackingStoreConnectionStringName", Shape::Str),
            ("trackingStoreNamePrefix", Shape::Str),
            ("useLegacyPartitionManagement", Shape::Bool),
            ("workItemQueueVisibilityTimeout", Shape::Duration),
        ]),
    ),
    (
        "tracing",
        Shape::Object(&[
            ("traceInputsAndOutputs", Shape::Bool),
            ("traceReplayEvents", Shape::Bool),
        ]),
    ),
    (
        "notifications",
        Shape::Object(&[(
            "eventGrid",
            Shape::Object(&[
                ("topicEndpoint", Shape::Str),
                ("keySettingName", Shape::Str),
                ("publishRetryCount", Shape::Int),
                ("publishRetryInterval", Shape::Duration),
                (
                    "publishEventTypes",
                    Shape::EnumSet(&["Started", "Pending", "Completed", "Failed", "Terminated"]),
                ),
            ]),
        )]),
    ),
    ("maxConcurrentActivityFunctions", Shape::Int),
    ("maxConcurrentOrchestratorFunctions", Shape::Int),
    ("extendedSessionsEnabled", Shape::Bool),
    ("extendedSessionIdleTimeoutInSeconds", Shape::Int),
    ("useAppLease", Shape::Bool),
    ("useGracefulShutdown", Shape::Bool),
    ("maxEntityOperationBatchSize", Shape::Int),
    ("useTablePartitionManagement", Shape::Bool),
]);

pub(super) const COSMOS_DB: Shape = Shape::Object(&[
    ("connectionMode", Shape::Enum(&["Gateway", "Direct"])),
    ("protocol", Shape::Enum(&["Https", "Tcp"])),
    (
        "leaseOptions",
        Shape::Object(&[("leasePrefix", Shape::Str)]),
    ),
]);

pub(super) const BLOBS: Shape = Shape::Object(&[
    ("maxDegreeOfParallelism", Shape::IntAtLeast(1)),
    ("poisonBlobThreshold", Shape::IntAtLeast(1)),
]);

pub(super) const TRANSPORT_TYPE: Shape = Shape::Enum(&["amqpTcp", "amqpWebSockets"]);

/// Why each stored-only key has no effect, by the path of the section (or key) it is in.
/// The most specific entry wins. Paths are relative to `hostConfig`.
pub const NO_EFFECT: &[(&str, &str)] = &[
    (
        "version",
        "only schema version 2.0 exists; Shoal checks it and stores it",
    ),
    (
        "logging",
        "Shoal does not host the function code, so the Functions host's log levels, console and file logging and Application Insights settings have nothing to configure; handlers log on their own and their `Logs` are written to Shoal's log",
    ),
    (
        "extensionBundle",
        "Shoal's bindings are built in; there is no extension bundle to load",
    ),
    (
        "aggregator",
        "Shoal does not aggregate invocation results for Application Insights",
    ),
    (
        "functions",
        "every function written to the app is loaded; use a function's `disabled` or `excluded` to leave one out",
    ),
    (
        "healthMonitor",
        "Shoal's workers have their own health checks and never recycle a host on performance counters",
    ),
    (
        "languageWorker",
        "handlers are HTTP endpoints Shoal calls; no language worker is started",
    ),
    (
        "managedDependency",
        "Shoal does not install PowerShell modules; the handler brings its own dependencies",
    ),
    (
        "customHandler.description",
        "Shoal does not start the handler process; it calls the app's `handler.url`",
    ),
    (
        "singleton",
        "Shoal places listeners with leases in Postgres; the host's blob-lease singleton settings do not apply",
    ),
    (
        "watchDirectories",
        "Shoal does not run code from files, so there is nothing to watch",
    ),
    (
        "watchFiles",
        "Shoal does not run code from files, so there is nothing to watch",
    ),
    (
        "concurrency",
        "Shoal uses the fixed per-trigger limits (batchSize, maxConcurrentCalls …), not dynamic concurrency",
    ),
    (
        "sendCanceledInvocationsToWorker",
        "a handler call that times out is abandoned; there is no worker channel to send a cancellation on",
    ),
    (
        "extensions.http",
        "the webhook ingress has its own route (/webhooks/{tenant}/{app}/{function}) and limits (`webhooks`); the Functions host's HTTP settings do not apply",
    ),
    (
        "extensions.sendGrid",
        "Shoal has no SendGrid output binding",
    ),
    (
        "extensions.durableTask",
        "Shoal does not run Durable Functions",
    ),
    (
        "extensions.cosmosDB",
        "Shoal does not run a Cosmos DB listener yet",
    ),
    ("extensions.blobs", "Shoal has no blob trigger"),
    (
        "extensions.serviceBus.transportType",
        "Shoal's Service Bus client always uses AMQP over TCP",
    ),
    (
        "extensions.serviceBus.webProxy",
        "Shoal's Service Bus client connects directly, without a web proxy",
    ),
    (
        "extensions.serviceBus.clientRetryOptions",
        "Shoal's Service Bus connector retries each operation twice with a 30 s try timeout; of the app's client retry options only `tryTimeout` is read, as how long a session slot waits for the broker to hand it a session (plus 5 s)",
    ),
    (
        "extensions.serviceBus.enableCrossEntityTransactions",
        "Shoal sends a handler's outputs before the trigger message is settled, never in one transaction with it: a settlement that fails after the outputs were sent delivers the message again (at least once)",
    ),
    (
        "extensions.serviceBus.batchOptions.operationTimeout",
        "Azure's version 5 extension does not read it either; the client's `clientRetryOptions.tryTimeout` bounds an operation",
    ),
    (
        "extensions.serviceBus.sessionHandlerOptions.messageWaitTimeout",
        "Azure's extension reads no such key (it maps `SessionHandlerOptions:MessageWaitTime`); set `sessionIdleTimeout`",
    ),
    (
        "extensions.eventHubs.transportType",
        "Shoal connects to Event Hubs through its Kafka endpoint, not over AMQP",
    ),
    (
        "extensions.eventHubs.webProxy",
        "Shoal connects to Event Hubs through its Kafka endpoint, without a web proxy",
    ),
    (
        "extensions.eventHubs.customEndpointAddress",
        "Shoal connects to Event Hubs through its Kafka endpoint, not a custom AMQP endpoint",
    ),
    (
        "extensions.eventHubs.eventProcessorOptions.prefetchCount",
        "Azure's version 5 extension does not map it; `extensions.eventHubs.prefetchCount` is the setting",
    ),
];

/// Keys of older extension versions that Shoal maps onto today's, as Azure's extensions do:
/// `(legacy path, today's path)`, relative to `hostConfig`. Today's key wins when both are
/// written, because Azure applies the legacy keys before binding the section (see
/// `service_bus.rs` and `event_hubs.rs`).
pub const LEGACY: &[(&str, &str)] = &[
    (
        "extensions.serviceBus.messageHandlerOptions.maxConcurrentCalls",
        "extensions.serviceBus.maxConcurrentCalls",
    ),
    (
        "extensions.serviceBus.messageHandlerOptions.autoComplete",
        "extensions.serviceBus.autoCompleteMessages",
    ),
    (
        "extensions.serviceBus.messageHandlerOptions.maxAutoRenewDuration",
        "extensions.serviceBus.maxAutoLockRenewalDuration",
    ),
    (
        "extensions.serviceBus.sessionHandlerOptions.maxConcurrentSessions",
        "extensions.serviceBus.maxConcurrentSessions",
    ),
    (
        "extensions.serviceBus.sessionHandlerOptions.autoComplete",
        "extensions.serviceBus.autoCompleteMessages",
    ),
    (
        "extensions.serviceBus.sessionHandlerOptions.maxAutoRenewDuration",
        "extensions.serviceBus.maxAutoLockRenewalDuration",
    ),
    (
        "extensions.serviceBus.batchOptions.maxMessageCount",
        "extensions.serviceBus.maxMessageBatchSize",
    ),
    (
        "extensions.serviceBus.batchOptions.autoComplete",
        "extensions.serviceBus.autoCompleteMessages",
    ),
    (
        "extensions.eventHubs.eventProcessorOptions.maxBatchSize",
        "extensions.eventHubs.maxEventBatchSize",
    ),
    (
        "extensions.eventHubs.maxBatchSize",
        "extensions.eventHubs.maxEventBatchSize",
    ),
];

/// A written key that Shoal stores without acting on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoEffectKey {
    /// Dotted path below `hostConfig`.
    pub path: String,
    pub why: &'static str,
}

/// A written legacy key and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyKey {
    pub path: String,
    pub replacement: &'static str,
    /// False when an earlier legacy key or today's key for the same setting was written too.
    pub applied: bool,
}

/// Every key set in a (valid) written `hostConfig` that has no effect in Shoal, with why.
/// Legacy keys that are mapped are not listed here (see [`legacy_keys`]).
pub fn no_effect_keys(written: &Value) -> Vec<NoEffectKey> {
    let mut found = Vec::new();
    for path in set_keys(written, "") {
        if LEGACY.iter().any(|(legacy, _)| *legacy == path) {
            continue;
        }
        let why = NO_EFFECT
            .iter()
            .filter(|(section, _)| path == *section || path.starts_with(&format!("{section}.")))
            .max_by_key(|(section, _)| section.len())
            .map(|(_, why)| *why);
        if let Some(why) = why {
            found.push(NoEffectKey { path, why });
        }
    }
    // Postgres's jsonb does not keep the order keys were written in; sorting keeps the
    // diagnostics stable whichever way the document was stored.
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
}

/// Every legacy key set in a (valid) written `hostConfig`, and whether it took effect: the
/// first legacy key for a setting applies unless today's key is written too (Azure's order).
pub fn legacy_keys(written: &Value) -> Vec<LegacyKey> {
    let is_set = |path: &str| lookup(written, path).is_some_and(|v| !v.is_null());
    let mut keys = Vec::new();
    for (i, (legacy, replacement)) in LEGACY.iter().enumerate() {
        if !is_set(legacy) {
            continue;
        }
        let earlier = LEGACY[..i]
            .iter()
            .any(|(other, target)| target == replacement && is_set(other));
        keys.push(LegacyKey {
            path: (*legacy).to_owned(),
            replacement,
            applied: !earlier && !is_set(replacement),
        });
    }
    keys
}

fn lookup<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(value, |v, key| v.get(key))
}

/// `hostConfig.<path>` for messages.
pub fn full_path(path: &str) -> String {
    join_path("hostConfig", path)
}
