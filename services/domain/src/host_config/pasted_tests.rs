//! A real `host.json` pasted in: every section SchemaStore's schema lists is accepted and
//! reads back as written, legacy keys map onto today's, and misspellings are still errors.

use serde_json::{Value, json};

use super::stored::{LegacyKey, legacy_keys, no_effect_keys};
use super::*;

/// Shaped like the full sample of Azure's host.json reference, every section filled in.
fn realistic_host_json() -> Value {
    json!({
        "version": "2.0",
        "aggregator": {"batchSize": 1000, "flushTimeout": "00:00:30"},
        "concurrency": {"dynamicConcurrencyEnabled": true, "snapshotPersistenceEnabled": true},
        "extensions": {
            "blobs": {"maxDegreeOfParallelism": 4, "poisonBlobThreshold": 1},
            "cosmosDB": {"connectionMode": "Gateway", "protocol": "Https",
                "leaseOptions": {"leasePrefix": "prefix1"}},
            "durableTask": {"hubName": "OrdersHub", "maxConcurrentActivityFunctions": 10,
                "storageProvider": {"partitionCount": 4, "controlQueueVisibilityTimeout": "00:05:00"},
                "tracing": {"traceInputsAndOutputs": false},
                "notifications": {"eventGrid": {"topicEndpoint": "https://t.example",
                    "publishEventTypes": ["Started", "Completed"]}}},
            "eventHubs": {"maxEventBatchSize": 64, "batchCheckpointFrequency": 1,
                "prefetchCount": 256, "transportType": "amqpWebSockets"},
            "http": {"routePrefix": "api", "maxOutstandingRequests": 200,
                "maxConcurrentRequests": 100, "dynamicThrottlesEnabled": true,
                "hsts": {"isEnabled": true, "maxAge": "10"},
                "customHeaders": {"X-Content-Type-Options": "nosniff"}},
            "queues": {"maxPollingInterval": "00:00:02", "visibilityTimeout": "00:00:30",
                "batchSize": 16, "maxDequeueCount": 5, "newBatchThreshold": 8,
                "messageEncoding": "base64"},
            "sendGrid": {"from": "Contoso <admin@contoso.com>"},
            "serviceBus": {"prefetchCount": 100, "maxConcurrentCalls": 32,
                "autoCompleteMessages": true, "maxAutoLockRenewalDuration": "00:05:00",
                "transportType": "amqpTcp"}
        },
        "extensionBundle": {"id": "Microsoft.Azure.Functions.ExtensionBundle",
            "version": "[4.*, 5.0.0)"},
        "functions": ["QueueProcessor", "GitHubWebHook"],
        "functionTimeout": "00:05:00",
        "healthMonitor": {"enabled": true, "healthCheckInterval": "00:00:10",
            "healthCheckWindow": "00:02:00", "healthCheckThreshold": 6, "counterThreshold": 0.80},
        "logging": {
            "fileLoggingMode": "debugOnly",
            "logLevel": {"Function.MyFunction": "Information", "default": "None"},
            "console": {"isEnabled": false},
            "applicationInsights": {
                "samplingSettings": {"isEnabled": true, "maxTelemetryItemsPerSecond": 20,
                    "evaluationInterval": "01:00:00", "initialSamplingPercentage": 100.0,
                    "samplingPercentageIncreaseTimeout": "00:00:01",
                    "samplingPercentageDecreaseTimeout": "00:00:01",
                    "minSamplingPercentage": 0.1, "maxSamplingPercentage": 100.0,
                    "movingAverageRatio": 1.0, "excludedTypes": "Dependency;Event",
                    "includedTypes": "PageView;Trace"},
                "enableLiveMetrics": true, "enableDependencyTracking": true,
                "enablePerformanceCountersCollection": true,
                "httpAutoCollectionOptions": {"enableHttpTriggerExtendedInfoCollection": true,
                    "enableW3CDistributedTracing": true, "enableResponseHeaderInjection": true},
                "snapshotConfiguration": {"agentEndpoint": null, "captureSnapshotMemoryWeight": 0.5,
                    "failedRequestLimit": 3, "isEnabled": true, "maximumCollectionPlanSize": 50,
                    "maximumSnapshotsRequired": 3, "problemCounterResetInterval": "1.00:00:00",
                    "reconnectInterval": "00:15:00", "shadowCopyFolder": null,
                    "snapshotsPerDayLimit": 30, "thresholdForSnapshotting": 1}
            }
        },
        "managedDependency": {"enabled": true},
        "retry": {"strategy": "fixedDelay", "maxRetryCount": 5, "delayInterval": "00:00:05"},
        "singleton": {"lockPeriod": "00:00:15", "listenerLockPeriod": "00:01:00",
            "listenerLockRecoveryPollingInterval": "00:01:00",
            "lockAcquisitionTimeout": "00:01:00", "lockAcquisitionPollingInterval": "00:00:03"},
        "watchDirectories": ["Shared", "Test"],
        "watchFiles": ["myFile.txt"],
        "sendCanceledInvocationsToWorker": true,
        "customHandler": {
            "description": {"defaultExecutablePath": "handler", "workingDirectory": "",
                "arguments": []},
            "enableForwardingHttpRequest": true
        }
    })
}

/// Every key of `written` is in `read` with the same value (`read` may have more: defaults).
fn assert_contains(read: &Value, written: &Value, path: &str) {
    match (read, written) {
        (Value::Object(read), Value::Object(written)) => {
            for (key, value) in written {
                let at = format!("{path}.{key}");
                let found = read.get(key).unwrap_or_else(|| panic!("{at} missing"));
                assert_contains(found, value, &at);
            }
        }
        _ => assert_eq!(read, written, "{path}"),
    }
}

#[test]
fn a_realistic_host_json_is_accepted_and_reads_back_as_written() {
    let written = realistic_host_json();
    let parsed = HostConfig::parse(&written, "hostConfig").unwrap();
    assert!(parsed.custom_handler.enable_forwarding_http_request);
    assert_eq!(parsed.extensions.service_bus.max_concurrent_calls, 32);
    assert_eq!(
        parsed.extensions.queues.max_polling_interval,
        TimeSpan::from_secs(2)
    );
    assert_eq!(parsed.extensions.event_hubs.max_event_batch_size, 64);
    let read = serde_json::to_value(&parsed).unwrap();
    assert_contains(&read, &written, "hostConfig");
    // The normalized form parses back to the same settings.
    assert_eq!(HostConfig::parse(&read, ""), Ok(parsed));
}

#[test]
fn keys_without_effect_are_listed_with_a_reason_and_meaningful_ones_are_not() {
    let keys = no_effect_keys(&realistic_host_json());
    let paths: Vec<&str> = keys.iter().map(|k| k.path.as_str()).collect();
    for want in [
        "version",
        "logging.logLevel.default",
        "logging.applicationInsights.samplingSettings.isEnabled",
        "extensionBundle.id",
        "customHandler.description.defaultExecutablePath",
        "customHandler.description.arguments",
        "extensions.http.routePrefix",
        "extensions.durableTask.hubName",
        "extensions.serviceBus.transportType",
        "extensions.eventHubs.transportType",
        "watchDirectories",
        "sendCanceledInvocationsToWorker",
    ] {
        assert!(paths.contains(&want), "{want} not in {paths:?}");
    }
    for not_wanted in [
        "customHandler.enableForwardingHttpRequest",
        "functionTimeout",
        "retry.strategy",
        "extensions.queues.batchSize",
        "extensions.serviceBus.maxConcurrentCalls",
        // `null` means not set.
        "logging.applicationInsights.snapshotConfiguration.agentEndpoint",
    ] {
        assert!(!paths.contains(&not_wanted), "{not_wanted} listed");
    }
    assert!(keys.iter().all(|k| !k.why.is_empty()));
    let why = |p: &str| keys.iter().find(|k| k.path == p).unwrap().why;
    assert!(why("customHandler.description.workingDirectory").contains("handler.url"));
}

fn service_bus(written: Value) -> ServiceBusOptions {
    HostConfig::parse(
        &json!({"extensions": {"serviceBus": written}}),
        "hostConfig",
    )
    .unwrap()
    .extensions
    .service_bus
}

#[test]
fn service_bus_legacy_keys_map_onto_todays_and_todays_win() {
    // (written, calls, sessions, batch, autoComplete, lock renewal in seconds)
    let cases = [
        (
            json!({"messageHandlerOptions": {"maxConcurrentCalls": 32}}),
            32,
            8,
            1000,
            true,
            300,
        ),
        (
            json!({"messageHandlerOptions": {"maxConcurrentCalls": 32}, "maxConcurrentCalls": 4}),
            4,
            8,
            1000,
            true,
            300,
        ),
        (
            json!({"sessionHandlerOptions": {"maxConcurrentSessions": 20}}),
            16,
            20,
            1000,
            true,
            300,
        ),
        (
            json!({"sessionHandlerOptions": {"maxConcurrentSessions": 20}, "maxConcurrentSessions": 2}),
            16,
            2,
            1000,
            true,
            300,
        ),
        (
            json!({"batchOptions": {"maxMessageCount": 500}}),
            16,
            8,
            500,
            true,
            300,
        ),
        (
            json!({"batchOptions": {"maxMessageCount": 500}, "maxMessageBatchSize": 50}),
            16,
            8,
            50,
            true,
            300,
        ),
        (
            json!({"messageHandlerOptions": {"autoComplete": false}, "batchOptions": {"autoComplete": true}}),
            16,
            8,
            1000,
            false,
            300,
        ),
        (
            json!({"batchOptions": {"autoComplete": false}, "autoCompleteMessages": true}),
            16,
            8,
            1000,
            true,
            300,
        ),
        (
            json!({"sessionHandlerOptions": {"maxAutoRenewDuration": "00:10:00"}}),
            16,
            8,
            1000,
            true,
            600,
        ),
        (
            json!({"messageHandlerOptions": {"maxAutoRenewDuration": "00:01:00"},
                "sessionHandlerOptions": {"maxAutoRenewDuration": "00:10:00"}}),
            16,
            8,
            1000,
            true,
            60,
        ),
    ];
    for (written, calls, sessions, batch, complete, renewal) in cases {
        let sb = service_bus(written.clone());
        assert_eq!(
            (
                sb.max_concurrent_calls,
                sb.max_concurrent_sessions,
                sb.max_message_batch_size,
                sb.auto_complete_messages,
                sb.max_auto_lock_renewal_duration,
            ),
            (
                calls,
                sessions,
                batch,
                complete,
                TimeSpan::from_secs(renewal)
            ),
            "{written}"
        );
    }
}

#[test]
fn event_hubs_legacy_batch_sizes_map_onto_max_event_batch_size() {
    let cases = [
        (json!({"eventProcessorOptions": {"maxBatchSize": 64}}), 64),
        (
            json!({"eventProcessorOptions": {"maxBatchSize": 64}, "maxEventBatchSize": 10}),
            10,
        ),
        (json!({"maxBatchSize": 32}), 32),
        (
            json!({"eventProcessorOptions": {"maxBatchSize": 64}, "maxBatchSize": 32}),
            64,
        ),
        (json!({}), 100),
    ];
    for (written, want) in cases {
        let parsed = HostConfig::parse(&json!({"extensions": {"eventHubs": written}}), "")
            .unwrap()
            .extensions
            .event_hubs;
        assert_eq!(parsed.max_event_batch_size, want, "{written}");
    }
}

#[test]
fn legacy_keys_are_echoed_and_the_echo_parses_to_the_same_settings() {
    let written = json!({"extensions": {"serviceBus": {
        "messageHandlerOptions": {"maxConcurrentCalls": 32, "autoComplete": false}
    }}});
    let parsed = HostConfig::parse(&written, "").unwrap();
    let read = serde_json::to_value(&parsed).unwrap();
    assert_eq!(
        read["extensions"]["serviceBus"]["messageHandlerOptions"],
        written["extensions"]["serviceBus"]["messageHandlerOptions"]
    );
    assert_eq!(read["extensions"]["serviceBus"]["maxConcurrentCalls"], 32);
    assert_eq!(
        read["extensions"]["serviceBus"]["autoCompleteMessages"],
        false
    );
    assert_eq!(HostConfig::parse(&read, ""), Ok(parsed));
}

#[test]
fn legacy_keys_say_whether_they_were_applied() {
    let written = json!({"extensions": {
        "serviceBus": {
            "messageHandlerOptions": {"maxConcurrentCalls": 32, "autoComplete": false},
            "batchOptions": {"autoComplete": true, "maxMessageCount": 10},
            "maxMessageBatchSize": 20
        },
        "eventHubs": {"eventProcessorOptions": {"maxBatchSize": 64}}
    }});
    let key = |path: &str, replacement: &'static str, applied| LegacyKey {
        path: format!("extensions.{path}"),
        replacement,
        applied,
    };
    assert_eq!(
        legacy_keys(&written),
        [
            key(
                "serviceBus.messageHandlerOptions.maxConcurrentCalls",
                "extensions.serviceBus.maxConcurrentCalls",
                true
            ),
            key(
                "serviceBus.messageHandlerOptions.autoComplete",
                "extensions.serviceBus.autoCompleteMessages",
                true
            ),
            key(
                "serviceBus.batchOptions.maxMessageCount",
                "extensions.serviceBus.maxMessageBatchSize",
                false
            ),
            key(
                "serviceBus.batchOptions.autoComplete",
                "extensions.serviceBus.autoCompleteMessages",
                false
            ),
            key(
                "eventHubs.eventProcessorOptions.maxBatchSize",
                "extensions.eventHubs.maxEventBatchSize",
                true
            ),
        ]
    );
}

#[test]
fn misspelled_or_misshapen_keys_are_422_with_their_path() {
    let cases = [
        (
            json!({"Logging": {}}),
            "hostConfig.Logging",
            "unknown field \"Logging\", did you mean \"logging\"?",
        ),
        (
            json!({"loging": {}}),
            "hostConfig.loging",
            "unknown field \"loging\"",
        ),
        (
            json!({"logging": {"applicationInsights": {"samplingSettings": {"IsEnabled": true}}}}),
            "hostConfig.logging.applicationInsights.samplingSettings.IsEnabled",
            "unknown field \"IsEnabled\", did you mean \"isEnabled\"?",
        ),
        (
            json!({"logging": {"logLevel": {"default": "Informational"}}}),
            "hostConfig.logging.logLevel.default",
            "must be one of \"Critical\", \"Debug\", \"Error\", \"Information\", \"None\", \"Trace\", \"Warning\"",
        ),
        (
            json!({"customHandler": {"enableForwardingHttpRequests": true}}),
            "hostConfig.customHandler.enableForwardingHttpRequests",
            "unknown field \"enableForwardingHttpRequests\"",
        ),
        (
            json!({"customHandler": {"enableForwardingHttpRequest": "yes"}}),
            "hostConfig.customHandler.enableForwardingHttpRequest",
            "expected a boolean",
        ),
        (
            json!({"customHandler": {"description": {"arguments": "--port"}}}),
            "hostConfig.customHandler.description.arguments",
            "expected an array of strings",
        ),
        (
            json!({"extensions": {"serviceBus": {"messageHandlerOptions": {"MaxConcurrentCalls": 2}}}}),
            "hostConfig.extensions.serviceBus.messageHandlerOptions.MaxConcurrentCalls",
            "unknown field \"MaxConcurrentCalls\", did you mean \"maxConcurrentCalls\"?",
        ),
        (
            json!({"extensions": {"serviceBus": {"messageHandlerOptions": {"maxConcurrentCalls": 0}}}}),
            "hostConfig.extensions.serviceBus.messageHandlerOptions.maxConcurrentCalls",
            "must be between 1 and 1000",
        ),
        (
            json!({"extensions": {"eventHubs": {"eventProcessorOptions": {"maxBatchSize": 0}}}}),
            "hostConfig.extensions.eventHubs.eventProcessorOptions.maxBatchSize",
            "must be at least 1",
        ),
        (
            json!({"extensions": {"serviceBus": {"transportType": "http"}}}),
            "hostConfig.extensions.serviceBus.transportType",
            "must be one of \"amqpTcp\", \"amqpWebSockets\"",
        ),
        (
            json!({"extensions": {"http": {"routePrefix": 1}}}),
            "hostConfig.extensions.http.routePrefix",
            "expected a string",
        ),
        (
            json!({"extensions": {"kafka": {}}}),
            "hostConfig.extensions.kafka",
            "unknown field \"kafka\"",
        ),
        (
            json!({"extensions": {"blobs": {"maxDegreeOfParallelism": 0}}}),
            "hostConfig.extensions.blobs.maxDegreeOfParallelism",
            "must be at least 1",
        ),
        (
            json!({"watchDirectories": ["Shared", "Shared"]}),
            "hostConfig.watchDirectories[1]",
            "duplicates an earlier item",
        ),
        (
            json!({"singleton": {"lockPeriod": "fifteen"}}),
            "hostConfig.singleton.lockPeriod",
            "expected a duration like \"00:01:00\" ([d.]hh:mm[:ss[.fff]])",
        ),
        (
            json!({"healthMonitor": {"counterThreshold": "high"}}),
            "hostConfig.healthMonitor.counterThreshold",
            "expected a number",
        ),
        (
            json!({"sendCanceledInvocationsToWorker": "true"}),
            "hostConfig.sendCanceledInvocationsToWorker",
            "expected a boolean",
        ),
    ];
    for (written, path, message) in cases {
        let err = HostConfig::parse(&written, "hostConfig").unwrap_err();
        let got: Vec<(&str, &str)> = err
            .errors
            .iter()
            .map(|e| (e.path.as_str(), e.message.as_str()))
            .collect();
        assert_eq!(got, [(path, message)], "{written}");
    }
}
