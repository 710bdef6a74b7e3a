//! Service Bus trigger settings (`extensions.serviceBus`) in the shape of Azure's version 5+
//! extension, with its documented defaults. Lower bounds are those Azure's option class
//! enforces; Shoal adds the [`MAX_CONCURRENCY`] cap on concurrency.

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::client_retry::{self, ServiceBusRetryOptions};
use super::stored::TRANSPORT_TYPE;
use super::{AZURE_INT_MAX, MAX_CONCURRENCY, Section};
use crate::timespan::TimeSpan;
use crate::validation::Problems;

/// Service Bus trigger settings.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceBusOptions {
    /// Messages the client fetches ahead of demand. Default 0 (no prefetch).
    pub prefetch_count: u32,
    /// Complete the message when the handler succeeds. Default true.
    pub auto_complete_messages: bool,
    /// How long a message lock is renewed while the handler runs. Default 5 minutes; 0 turns
    /// renewal off.
    pub max_auto_lock_renewal_duration: TimeSpan,
    /// Concurrent handler calls per function per instance (single dispatch). Default 16 — Azure
    /// documents 16 × the processor count; Shoal uses 16 per instance so an instance's capacity
    /// is predictable and the scaler's `messages / maxConcurrentCalls` target is meaningful.
    /// 1–[`MAX_CONCURRENCY`].
    pub max_concurrent_calls: u32,
    /// Sessions handled concurrently per function per instance. Default 8.
    pub max_concurrent_sessions: u32,
    /// Most messages per batched invocation. Default 1000.
    pub max_message_batch_size: u32,
    /// Fewest messages a batched invocation waits for (up to `maxBatchWaitTime`). Default 1, at
    /// most `maxMessageBatchSize`.
    pub min_message_batch_size: u32,
    /// Longest wait to fill `minMessageBatchSize`. Default 30 s, at most 2 min 30 s — Azure's
    /// limit of half the longest (5-minute) message lock.
    pub max_batch_wait_time: TimeSpan,
    /// How long a session receiver waits for the next message before moving to another
    /// session; unset means the client's `tryTimeout`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_idle_timeout: Option<TimeSpan>,
    /// Let a handler's outputs and the trigger settlement share a transaction. Default false.
    pub enable_cross_entity_transactions: bool,
    pub client_retry_options: ServiceBusRetryOptions,
    /// Stored as written; no effect (Shoal always uses AMQP over TCP).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub transport_type: Option<Value>,
    /// Stored as written; no effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub web_proxy: Option<Value>,
    /// Pre-v5 keys (`maxConcurrentCalls`, `autoComplete`, `maxAutoRenewDuration`), returned as
    /// written; their values are mapped onto today's keys above unless those are written too.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub message_handler_options: Option<Value>,
    /// Pre-v5 keys (`maxConcurrentSessions`, `autoComplete`, `maxAutoRenewDuration`,
    /// `messageWaitTimeout`), returned as written and mapped like `messageHandlerOptions`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub session_handler_options: Option<Value>,
    /// Pre-v5 keys (`maxMessageCount`, `autoComplete`, `operationTimeout`), returned as
    /// written and mapped like `messageHandlerOptions`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub batch_options: Option<Value>,
}

impl Default for ServiceBusOptions {
    fn default() -> Self {
        ServiceBusOptions {
            prefetch_count: 0,
            auto_complete_messages: true,
            max_auto_lock_renewal_duration: TimeSpan::from_secs(300),
            max_concurrent_calls: 16,
            max_concurrent_sessions: 8,
            max_message_batch_size: 1000,
            min_message_batch_size: 1,
            max_batch_wait_time: TimeSpan::from_secs(30),
            session_idle_timeout: None,
            enable_cross_entity_transactions: false,
            client_retry_options: ServiceBusRetryOptions::default(),
            transport_type: None,
            web_proxy: None,
            message_handler_options: None,
            session_handler_options: None,
            batch_options: None,
        }
    }
}

/// Reads the section, mapping the keys of the pre-v5 extension (`messageHandlerOptions`,
/// `sessionHandlerOptions`, `batchOptions`) onto today's as Azure's extension does in
/// `sdk/servicebus/Microsoft.Azure.WebJobs.Extensions.ServiceBus/src/Config/ServiceBusHostBuilderExtensions.cs`
/// (azure-sdk-for-net): the legacy values are applied first and the section is bound after,
/// so today's key wins when both are written; `autoComplete` is taken from
/// `messageHandlerOptions`, else `sessionHandlerOptions`, else `batchOptions`, and
/// `maxAutoRenewDuration` from `messageHandlerOptions`, else `sessionHandlerOptions`. A legacy
/// value is checked against the same bounds as today's key, at its own path.
pub(super) fn parse_service_bus(
    problems: &mut Problems,
    extensions: &Section,
) -> ServiceBusOptions {
    let s = extensions.child(
        problems,
        "serviceBus",
        &[
            "prefetchCount",
            "autoCompleteMessages",
            "maxAutoLockRenewalDuration",
            "maxConcurrentCalls",
            "maxConcurrentSessions",
            "maxMessageBatchSize",
            "minMessageBatchSize",
            "maxBatchWaitTime",
            "sessionIdleTimeout",
            "enableCrossEntityTransactions",
            "clientRetryOptions",
            "transportType",
            "webProxy",
            "messageHandlerOptions",
            "sessionHandlerOptions",
            "batchOptions",
        ],
    );
    let messages = s.child(
        problems,
        "messageHandlerOptions",
        &["maxConcurrentCalls", "maxAutoRenewDuration", "autoComplete"],
    );
    let sessions = s.child(
        problems,
        "sessionHandlerOptions",
        &[
            "maxAutoRenewDuration",
            "autoComplete",
            "maxConcurrentSessions",
            "messageWaitTimeout",
        ],
    );
    let batches = s.child(
        problems,
        "batchOptions",
        &["maxMessageCount", "operationTimeout", "autoComplete"],
    );
    // Stored only: Azure's extension reads neither (see `stored::NO_EFFECT`).
    sessions.opt_duration(problems, "messageWaitTimeout", TimeSpan::ZERO, None);
    batches.opt_duration(problems, "operationTimeout", TimeSpan::ZERO, None);

    let d = ServiceBusOptions::default();
    let legacy_batch = batches.opt_u32(problems, "maxMessageCount", 1, AZURE_INT_MAX);
    let max_message_batch_size = s
        .opt_u32(problems, "maxMessageBatchSize", 1, AZURE_INT_MAX)
        .or(legacy_batch)
        .unwrap_or(d.max_message_batch_size);
    let min_message_batch_size = s.int(
        problems,
        "minMessageBatchSize",
        d.min_message_batch_size,
        1,
        AZURE_INT_MAX,
    );
    if min_message_batch_size > max_message_batch_size {
        problems.push(
            s.path("minMessageBatchSize"),
            format!("must not exceed maxMessageBatchSize ({max_message_batch_size})"),
        );
    }
    let legacy_calls = messages.opt_u32(problems, "maxConcurrentCalls", 1, MAX_CONCURRENCY);
    let legacy_sessions = sessions.opt_u32(problems, "maxConcurrentSessions", 1, MAX_CONCURRENCY);
    let legacy_complete = [&messages, &sessions, &batches]
        .map(|section| section.opt_bool(problems, "autoComplete"))
        .into_iter()
        .flatten()
        .next();
    let legacy_renewal = [&messages, &sessions]
        .map(|section| section.opt_duration(problems, "maxAutoRenewDuration", TimeSpan::ZERO, None))
        .into_iter()
        .flatten()
        .next();
    let retry = client_retry::parse(problems, &s, ["maxDelay", "maxRetries"]);
    ServiceBusOptions {
        prefetch_count: s.int(
            problems,
            "prefetchCount",
            d.prefetch_count,
            0,
            AZURE_INT_MAX,
        ),
        auto_complete_messages: s
            .opt_bool(problems, "autoCompleteMessages")
            .or(legacy_complete)
            .unwrap_or(d.auto_complete_messages),
        max_auto_lock_renewal_duration: s
            .opt_duration(problems, "maxAutoLockRenewalDuration", TimeSpan::ZERO, None)
            .or(legacy_renewal)
            .unwrap_or(d.max_auto_lock_renewal_duration),
        max_concurrent_calls: s
            .opt_u32(problems, "maxConcurrentCalls", 1, MAX_CONCURRENCY)
            .or(legacy_calls)
            .unwrap_or(d.max_concurrent_calls),
        max_concurrent_sessions: s
            .opt_u32(problems, "maxConcurrentSessions", 1, MAX_CONCURRENCY)
            .or(legacy_sessions)
            .unwrap_or(d.max_concurrent_sessions),
        max_message_batch_size,
        min_message_batch_size,
        max_batch_wait_time: s.duration(
            problems,
            "maxBatchWaitTime",
            d.max_batch_wait_time,
            TimeSpan::ZERO,
            Some(TimeSpan::from_secs(150)),
        ),
        session_idle_timeout: s.positive_duration(problems, "sessionIdleTimeout", None),
        enable_cross_entity_transactions: s.boolean(
            problems,
            "enableCrossEntityTransactions",
            d.enable_cross_entity_transactions,
        ),
        client_retry_options: retry.into(),
        transport_type: s.stored(problems, "transportType", &TRANSPORT_TYPE),
        web_proxy: s.stored(problems, "webProxy", &super::schema::Shape::Str),
        message_handler_options: s.raw("messageHandlerOptions").cloned(),
        session_handler_options: s.raw("sessionHandlerOptions").cloned(),
        batch_options: s.raw("batchOptions").cloned(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{HostConfig, RetryMode};
    use super::*;
    use serde_json::{Value, json};

    fn service_bus(written: Value) -> Result<ServiceBusOptions, Vec<(String, String)>> {
        HostConfig::parse(
            &json!({"extensions": {"serviceBus": written}}),
            "hostConfig",
        )
        .map(|c| c.extensions.service_bus)
        .map_err(|e| e.errors.into_iter().map(|e| (e.path, e.message)).collect())
    }

    #[test]
    fn service_bus_defaults_match_the_documentation() {
        let sb = service_bus(json!({})).unwrap();
        assert_eq!(sb, ServiceBusOptions::default());
        assert_eq!(
            (sb.max_concurrent_calls, sb.max_concurrent_sessions),
            (16, 8)
        );
        assert_eq!(
            (sb.max_message_batch_size, sb.min_message_batch_size),
            (1000, 1)
        );
        assert_eq!(sb.max_auto_lock_renewal_duration, TimeSpan::from_secs(300));
        assert_eq!(sb.max_batch_wait_time, TimeSpan::from_secs(30));
        assert!(sb.auto_complete_messages && !sb.enable_cross_entity_transactions);
        let r = &sb.client_retry_options;
        assert_eq!((r.mode, r.max_retries), (RetryMode::Exponential, 3));
        assert_eq!(
            (r.delay, r.max_delay),
            (TimeSpan::from_millis(800), TimeSpan::from_secs(60))
        );
    }

    #[test]
    fn service_bus_accepts_the_documented_sample() {
        let sb = service_bus(json!({
            "clientRetryOptions": {
                "mode": "exponential", "tryTimeout": "00:01:00", "delay": "00:00:00.80",
                "maxDelay": "00:01:00", "maxRetries": 3
            },
            "prefetchCount": 0, "autoCompleteMessages": true,
            "maxAutoLockRenewalDuration": "00:05:00", "maxConcurrentCalls": 16,
            "maxConcurrentSessions": 8, "maxMessageBatchSize": 1000, "minMessageBatchSize": 1,
            "maxBatchWaitTime": "00:00:30", "sessionIdleTimeout": "00:01:00",
            "enableCrossEntityTransactions": false
        }))
        .unwrap();
        assert_eq!(sb.session_idle_timeout, Some(TimeSpan::from_secs(60)));
    }

    #[test]
    fn service_bus_bounds_are_checked() {
        let p = "hostConfig.extensions.serviceBus";
        let cases = [
            (json!({"maxConcurrentCalls": 1}), None),
            (json!({"maxConcurrentCalls": 1000}), None),
            (
                json!({"maxConcurrentCalls": 0}),
                Some(("maxConcurrentCalls", "must be between 1 and 1000")),
            ),
            (
                json!({"maxConcurrentCalls": 1001}),
                Some(("maxConcurrentCalls", "must be between 1 and 1000")),
            ),
            (
                json!({"maxConcurrentSessions": 0}),
                Some(("maxConcurrentSessions", "must be between 1 and 1000")),
            ),
            (
                json!({"maxMessageBatchSize": 0}),
                Some(("maxMessageBatchSize", "must be at least 1")),
            ),
            (
                json!({"prefetchCount": -1}),
                Some(("prefetchCount", "must be at least 0")),
            ),
            (json!({"maxAutoLockRenewalDuration": "00:00:00"}), None),
            (json!({"maxBatchWaitTime": "00:02:30"}), None),
            (
                json!({"maxBatchWaitTime": "00:02:31"}),
                Some(("maxBatchWaitTime", "must be at most 00:02:30")),
            ),
            (
                json!({"sessionIdleTimeout": "00:00:00"}),
                Some(("sessionIdleTimeout", "must be greater than 00:00:00")),
            ),
            (
                json!({"minMessageBatchSize": 11, "maxMessageBatchSize": 10}),
                Some((
                    "minMessageBatchSize",
                    "must not exceed maxMessageBatchSize (10)",
                )),
            ),
            (
                json!({"minMessageBatchSize": 10, "maxMessageBatchSize": 10}),
                None,
            ),
            (
                json!({"autoCompleteMessages": "yes"}),
                Some(("autoCompleteMessages", "expected a boolean")),
            ),
            (
                json!({"clientRetryOptions": {"maxRetries": 101}}),
                Some(("clientRetryOptions.maxRetries", "must be between 0 and 100")),
            ),
            (
                json!({"clientRetryOptions": {"delay": "00:00:00"}}),
                Some((
                    "clientRetryOptions.delay",
                    "must be between 00:00:00.001 and 00:05:00",
                )),
            ),
            (
                json!({"clientRetryOptions": {"tryTimeout": "01:00:01"}}),
                Some(("clientRetryOptions.tryTimeout", "must be at most 01:00:00")),
            ),
            (json!({"clientRetryOptions": {"mode": "Fixed"}}), None),
            (
                json!({"clientRetryOptions": {"mode": "linear"}}),
                Some((
                    "clientRetryOptions.mode",
                    "must be one of \"exponential\", \"fixed\"",
                )),
            ),
            (
                json!({"clientRetryOptions": {"maximumRetries": 1}}),
                Some((
                    "clientRetryOptions.maximumRetries",
                    "unknown field \"maximumRetries\"",
                )),
            ),
        ];
        for (written, want) in cases {
            let got = service_bus(written.clone()).err();
            let want = want.map(|(field, msg)| vec![(format!("{p}.{field}"), msg.to_owned())]);
            assert_eq!(got, want, "{written}");
        }
    }
}
