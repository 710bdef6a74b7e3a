//! Client retry options of the Azure SDKs (`clientRetryOptions`), which the Service Bus and
//! Event Hubs extensions pass to their clients. The two SDKs spell the limits differently
//! (`maxDelay`/`maxRetries` vs `maximumDelay`/`maximumRetries`); Shoal keeps each spelling so
//! `host.json` snippets carry over unchanged. Bounds are the SDKs' own.

use serde::Serialize;
use utoipa::ToSchema;

use super::Section;
use crate::timespan::TimeSpan;
use crate::validation::Problems;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum RetryMode {
    Exponential,
    Fixed,
}

/// Service Bus client retry options (`ServiceBusRetryOptions` names: `maxDelay`, `maxRetries`).
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceBusRetryOptions {
    pub mode: RetryMode,
    pub try_timeout: TimeSpan,
    pub delay: TimeSpan,
    pub max_delay: TimeSpan,
    pub max_retries: u32,
}

/// Event Hubs client retry options (`EventHubsRetryOptions` names: `maximumDelay`,
/// `maximumRetries`).
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventHubsRetryOptions {
    pub mode: RetryMode,
    pub try_timeout: TimeSpan,
    pub delay: TimeSpan,
    pub maximum_delay: TimeSpan,
    pub maximum_retries: u32,
}

/// Both SDKs' defaults: exponential, 1-minute try timeout, 0.8 s delay, 1-minute maximum
/// delay, 3 retries.
pub(super) struct ClientRetry {
    mode: RetryMode,
    try_timeout: TimeSpan,
    delay: TimeSpan,
    max_delay: TimeSpan,
    max_retries: u32,
}

const DEFAULT: ClientRetry = ClientRetry {
    mode: RetryMode::Exponential,
    try_timeout: TimeSpan::from_secs(60),
    delay: TimeSpan::from_millis(800),
    max_delay: TimeSpan::from_secs(60),
    max_retries: 3,
};

impl From<ClientRetry> for ServiceBusRetryOptions {
    fn from(r: ClientRetry) -> Self {
        ServiceBusRetryOptions {
            mode: r.mode,
            try_timeout: r.try_timeout,
            delay: r.delay,
            max_delay: r.max_delay,
            max_retries: r.max_retries,
        }
    }
}

impl From<ClientRetry> for EventHubsRetryOptions {
    fn from(r: ClientRetry) -> Self {
        EventHubsRetryOptions {
            mode: r.mode,
            try_timeout: r.try_timeout,
            delay: r.delay,
            maximum_delay: r.max_delay,
            maximum_retries: r.max_retries,
        }
    }
}

impl Default for ServiceBusRetryOptions {
    fn default() -> Self {
        DEFAULT.into()
    }
}

impl Default for EventHubsRetryOptions {
    fn default() -> Self {
        DEFAULT.into()
    }
}

/// Reads client retry options; `names` are the SDK's spellings of (maximum delay, maximum
/// retries). Bounds are the SDKs': retries 0–100, delay 1 ms–5 min, try timeout up to 1 hour.
pub(super) fn parse(problems: &mut Problems, parent: &Section, names: [&str; 2]) -> ClientRetry {
    let [max_delay_name, max_retries_name] = names;
    let s = parent.child(
        problems,
        "clientRetryOptions",
        &[
            "mode",
            "tryTimeout",
            "delay",
            max_delay_name,
            max_retries_name,
        ],
    );
    let d = DEFAULT;
    ClientRetry {
        mode: s.choice(
            problems,
            "mode",
            d.mode,
            &[
                ("exponential", RetryMode::Exponential),
                ("fixed", RetryMode::Fixed),
            ],
        ),
        try_timeout: s
            .positive_duration(problems, "tryTimeout", Some(TimeSpan::from_secs(3600)))
            .unwrap_or(d.try_timeout),
        delay: s.duration(
            problems,
            "delay",
            d.delay,
            TimeSpan::from_millis(1),
            Some(TimeSpan::from_secs(300)),
        ),
        max_delay: s.duration(problems, max_delay_name, d.max_delay, TimeSpan::ZERO, None),
        max_retries: s.int(problems, max_retries_name, d.max_retries, 0, 100),
    }
}
