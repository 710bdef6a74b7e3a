//! Event Hubs trigger settings (`extensions.eventHubs`) in the shape of Azure's version 5+
//! extension, with its documented defaults.

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::client_retry::{self, EventHubsRetryOptions};
use super::schema::Shape;
use super::stored::TRANSPORT_TYPE;
use super::{AZURE_INT_MAX, Section};
use crate::timespan::TimeSpan;
use crate::validation::Problems;

/// Event Hubs trigger settings.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventHubsOptions {
    /// Most events per invocation. Default 100 (the extension's default since 6.0; 5.x used 10).
    pub max_event_batch_size: u32,
    /// Fewest events an invocation waits for (up to `maxWaitTime`). Default 1, at most
    /// `maxEventBatchSize`.
    pub min_event_batch_size: u32,
    /// Longest wait to fill `minEventBatchSize`. Default 1 minute.
    pub max_wait_time: TimeSpan,
    /// Batches processed between checkpoints. Default 1.
    pub batch_checkpoint_frequency: u32,
    /// Events fetched ahead of demand. Default 300.
    pub prefetch_count: u32,
    /// Unprocessed events per instance the scaler aims for; unset means `maxEventBatchSize`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_unprocessed_event_threshold: Option<u32>,
    pub initial_offset_options: InitialOffsetOptions,
    pub client_retry_options: EventHubsRetryOptions,
    /// Stored as written; no effect (Shoal reads Event Hubs through its Kafka endpoint).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub transport_type: Option<Value>,
    /// Stored as written; no effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub web_proxy: Option<Value>,
    /// Stored as written; no effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub custom_endpoint_address: Option<Value>,
    /// Pre-v5 keys (`maxBatchSize`, `prefetchCount`), returned as written; `maxBatchSize` is
    /// mapped onto `maxEventBatchSize` unless that is written too.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub event_processor_options: Option<Value>,
    /// The Functions 1.x name of `maxEventBatchSize`, returned as written and mapped onto it
    /// when neither `maxEventBatchSize` nor `eventProcessorOptions.maxBatchSize` is written.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<u32>)]
    pub max_batch_size: Option<Value>,
}

/// Where to start reading a partition that has no checkpoint yet.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitialOffsetOptions {
    #[serde(rename = "type")]
    pub offset_type: InitialOffsetType,
    /// ISO 8601 time to start from; required with `fromEnqueuedTime`, unused otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enqueued_time_utc: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum InitialOffsetType {
    FromStart,
    FromEnd,
    FromEnqueuedTime,
}

impl Default for EventHubsOptions {
    fn default() -> Self {
        EventHubsOptions {
            max_event_batch_size: 100,
            min_event_batch_size: 1,
            max_wait_time: TimeSpan::from_secs(60),
            batch_checkpoint_frequency: 1,
            prefetch_count: 300,
            target_unprocessed_event_threshold: None,
            initial_offset_options: InitialOffsetOptions {
                offset_type: InitialOffsetType::FromStart,
                enqueued_time_utc: None,
            },
            client_retry_options: EventHubsRetryOptions::default(),
            transport_type: None,
            web_proxy: None,
            custom_endpoint_address: None,
            event_processor_options: None,
            max_batch_size: None,
        }
    }
}

/// Reads the section. `eventProcessorOptions.maxBatchSize` (the 3.x/4.x extension's name) is
/// mapped onto `maxEventBatchSize` as Azure's extension does in
/// `sdk/eventhub/Microsoft.Azure.WebJobs.Extensions.EventHubs/src/Config/EventHubWebJobsBuilderExtensions.cs`
/// (azure-sdk-for-net): "do it before the binding so new property names take precedence" —
/// today's key wins when both are written. The 1.x top-level `maxBatchSize`, which SchemaStore's
/// schema still lists, comes last.
pub(super) fn parse_event_hubs(problems: &mut Problems, extensions: &Section) -> EventHubsOptions {
    let s = extensions.child(
        problems,
        "eventHubs",
        &[
            "maxEventBatchSize",
            "minEventBatchSize",
            "maxWaitTime",
            "batchCheckpointFrequency",
            "prefetchCount",
            "targetUnprocessedEventThreshold",
            "initialOffsetOptions",
            "clientRetryOptions",
            "transportType",
            "webProxy",
            "customEndpointAddress",
            "eventProcessorOptions",
            "maxBatchSize",
        ],
    );
    let d = EventHubsOptions::default();
    let processor = s.child(
        problems,
        "eventProcessorOptions",
        &["maxBatchSize", "prefetchCount"],
    );
    let legacy_batch = processor.opt_u32(problems, "maxBatchSize", 1, AZURE_INT_MAX);
    // Stored only: Azure's version 5 extension does not map it (see `stored::NO_EFFECT`).
    processor.opt_u32(problems, "prefetchCount", 0, AZURE_INT_MAX);
    let oldest_batch = s.opt_u32(problems, "maxBatchSize", 1, AZURE_INT_MAX);
    let max_event_batch_size = s
        .opt_u32(problems, "maxEventBatchSize", 1, AZURE_INT_MAX)
        .or(legacy_batch)
        .or(oldest_batch)
        .unwrap_or(d.max_event_batch_size);
    let min_event_batch_size = s.int(
        problems,
        "minEventBatchSize",
        d.min_event_batch_size,
        1,
        AZURE_INT_MAX,
    );
    if min_event_batch_size > max_event_batch_size {
        problems.push(
            s.path("minEventBatchSize"),
            format!("must not exceed maxEventBatchSize ({max_event_batch_size})"),
        );
    }
    let offset = s.child(
        problems,
        "initialOffsetOptions",
        &["type", "enqueuedTimeUtc"],
    );
    let offset_type = offset.choice(
        problems,
        "type",
        InitialOffsetType::FromStart,
        &[
            ("fromStart", InitialOffsetType::FromStart),
            ("fromEnd", InitialOffsetType::FromEnd),
            ("fromEnqueuedTime", InitialOffsetType::FromEnqueuedTime),
        ],
    );
    // Azure's own sample writes `"enqueuedTimeUtc": ""` next to `fromStart`, so an empty
    // string counts as unset.
    let enqueued_time_utc = offset
        .opt_string(problems, "enqueuedTimeUtc")
        .map(str::trim)
        .filter(|s| !s.is_empty());
    match (offset_type, enqueued_time_utc) {
        (InitialOffsetType::FromEnqueuedTime, None) => problems.push(
            offset.path("enqueuedTimeUtc"),
            "is required when type is fromEnqueuedTime",
        ),
        (_, Some(time)) if !is_iso8601_date_time(time) => problems.push(
            offset.path("enqueuedTimeUtc"),
            "expected an ISO 8601 date and time like 2020-10-26T20:31Z",
        ),
        _ => {}
    }
    let retry = client_retry::parse(problems, &s, ["maximumDelay", "maximumRetries"]);
    EventHubsOptions {
        max_event_batch_size,
        min_event_batch_size,
        max_wait_time: s.duration(
            problems,
            "maxWaitTime",
            d.max_wait_time,
            TimeSpan::ZERO,
            None,
        ),
        batch_checkpoint_frequency: s.int(
            problems,
            "batchCheckpointFrequency",
            d.batch_checkpoint_frequency,
            1,
            AZURE_INT_MAX,
        ),
        prefetch_count: s.int(
            problems,
            "prefetchCount",
            d.prefetch_count,
            0,
            AZURE_INT_MAX,
        ),
        target_unprocessed_event_threshold: s.opt_u32(
            problems,
            "targetUnprocessedEventThreshold",
            1,
            AZURE_INT_MAX,
        ),
        initial_offset_options: InitialOffsetOptions {
            offset_type,
            enqueued_time_utc: enqueued_time_utc.map(str::to_owned),
        },
        client_retry_options: retry.into(),
        transport_type: s.stored(problems, "transportType", &TRANSPORT_TYPE),
        web_proxy: s.stored(problems, "webProxy", &Shape::Str),
        custom_endpoint_address: s.stored(problems, "customEndpointAddress", &Shape::Str),
        event_processor_options: s.raw("eventProcessorOptions").cloned(),
        max_batch_size: s.raw("maxBatchSize").cloned(),
    }
}

/// `YYYY-MM-DD[(T| )hh:mm[:ss[.f…]]][Z|±hh:mm]` with plausible field ranges — the forms Azure's
/// documentation shows for `enqueuedTimeUtc`; Shoal has no date library to mirror
/// `DateTime.Parse` completely, and a clear early error beats a listener that never starts.
fn is_iso8601_date_time(s: &str) -> bool {
    let num = |part: &str, len: usize, max: u32, min: u32| {
        part.len() == len
            && part.bytes().all(|b| b.is_ascii_digit())
            && part.parse::<u32>().is_ok_and(|n| (min..=max).contains(&n))
    };
    let (date, rest) = s.split_at_checked(10).unwrap_or((s, ""));
    let date_ok = match date.split('-').collect::<Vec<_>>().as_slice() {
        [y, m, d] => num(y, 4, 9999, 1) && num(m, 2, 12, 1) && num(d, 2, 31, 1),
        _ => false,
    };
    if !date_ok {
        return false;
    }
    let Some(time) = rest.strip_prefix('T').or_else(|| rest.strip_prefix(' ')) else {
        return rest.is_empty();
    };
    let (time, zone) = match time.find(['Z', 'z', '+', '-']) {
        Some(i) => time.split_at(i),
        None => (time, ""),
    };
    let zone_ok = match zone {
        "" | "Z" | "z" => true,
        _ => match zone[1..].split(':').collect::<Vec<_>>().as_slice() {
            [h, m] => num(h, 2, 23, 0) && num(m, 2, 59, 0),
            _ => false,
        },
    };
    let (clock, fraction) = time.split_once('.').unwrap_or((time, "0"));
    let clock_ok = match clock.split(':').collect::<Vec<_>>().as_slice() {
        [h, m] => num(h, 2, 23, 0) && num(m, 2, 59, 0),
        [h, m, sec] => num(h, 2, 23, 0) && num(m, 2, 59, 0) && num(sec, 2, 59, 0),
        _ => false,
    };
    let fraction_ok = !fraction.is_empty() && fraction.bytes().all(|b| b.is_ascii_digit());
    zone_ok && clock_ok && fraction_ok
}

#[cfg(test)]
mod tests {
    use super::super::HostConfig;
    use super::*;
    use serde_json::{Value, json};

    fn event_hubs(written: Value) -> Result<EventHubsOptions, Vec<(String, String)>> {
        HostConfig::parse(&json!({"extensions": {"eventHubs": written}}), "hostConfig")
            .map(|c| c.extensions.event_hubs)
            .map_err(|e| e.errors.into_iter().map(|e| (e.path, e.message)).collect())
    }

    #[test]
    fn event_hubs_defaults_and_documented_sample() {
        let eh = event_hubs(json!({})).unwrap();
        assert_eq!(eh, EventHubsOptions::default());
        assert_eq!(
            (
                eh.max_event_batch_size,
                eh.min_event_batch_size,
                eh.prefetch_count
            ),
            (100, 1, 300)
        );
        let eh = event_hubs(json!({
            "maxEventBatchSize": 100, "minEventBatchSize": 25, "maxWaitTime": "00:05:00",
            "batchCheckpointFrequency": 1, "prefetchCount": 300,
            "targetUnprocessedEventThreshold": 75,
            "initialOffsetOptions": {"type": "fromStart", "enqueuedTimeUtc": ""},
            "clientRetryOptions": {
                "mode": "exponential", "tryTimeout": "00:01:00", "delay": "00:00:00.80",
                "maximumDelay": "00:01:00", "maximumRetries": 3
            }
        }))
        .unwrap();
        assert_eq!(eh.target_unprocessed_event_threshold, Some(75));
        assert_eq!(eh.initial_offset_options.enqueued_time_utc, None);
    }

    #[test]
    fn event_hubs_bounds_are_checked() {
        let p = "hostConfig.extensions.eventHubs";
        let cases = [
            (
                json!({"maxEventBatchSize": 0}),
                Some(("maxEventBatchSize", "must be at least 1")),
            ),
            (
                json!({"minEventBatchSize": 101}),
                Some((
                    "minEventBatchSize",
                    "must not exceed maxEventBatchSize (100)",
                )),
            ),
            (
                json!({"batchCheckpointFrequency": 0}),
                Some(("batchCheckpointFrequency", "must be at least 1")),
            ),
            (
                json!({"targetUnprocessedEventThreshold": 0}),
                Some(("targetUnprocessedEventThreshold", "must be at least 1")),
            ),
            (
                json!({"initialOffsetOptions": {"type": "fromEnqueuedTime"}}),
                Some((
                    "initialOffsetOptions.enqueuedTimeUtc",
                    "is required when type is fromEnqueuedTime",
                )),
            ),
            (
                json!({"initialOffsetOptions": {"type": "fromEnqueuedTime", "enqueuedTimeUtc": "2020-10-26T20:31Z"}}),
                None,
            ),
            (
                json!({"initialOffsetOptions": {"type": "fromEnqueuedTime", "enqueuedTimeUtc": "yesterday"}}),
                Some((
                    "initialOffsetOptions.enqueuedTimeUtc",
                    "expected an ISO 8601 date and time like 2020-10-26T20:31Z",
                )),
            ),
            (
                json!({"initialOffsetOptions": {"type": "fromLatest"}}),
                Some((
                    "initialOffsetOptions.type",
                    "must be one of \"fromStart\", \"fromEnd\", \"fromEnqueuedTime\"",
                )),
            ),
            (
                json!({"clientRetryOptions": {"maxRetries": 1}}),
                Some((
                    "clientRetryOptions.maxRetries",
                    "unknown field \"maxRetries\"",
                )),
            ),
        ];
        for (written, want) in cases {
            let got = event_hubs(written.clone()).err();
            let want = want.map(|(field, msg)| vec![(format!("{p}.{field}"), msg.to_owned())]);
            assert_eq!(got, want, "{written}");
        }
    }

    #[test]
    fn iso8601_date_times_are_recognised() {
        for ok in [
            "2020-10-26",
            "2020-10-26T20:31Z",
            "2020-10-26T20:31:05.123+02:00",
            "2020-10-26 20:31:05",
            "2024-02-29T00:00:00-05:30",
        ] {
            assert!(is_iso8601_date_time(ok), "{ok}");
        }
        for bad in [
            "",
            "yesterday",
            "2020-13-01",
            "2020-10-26T25:00Z",
            "2020-10-26T20",
            "2020-10-26T20:31+2",
            "20-10-26",
            "2020-10-26T20:31:05.Z",
            "2020-10-26Tx",
        ] {
            assert!(!is_iso8601_date_time(bad), "{bad}");
        }
    }
}
