//! The stream triggers: `kafkaTrigger`, and `eventHubTrigger` read through Event Hubs' Kafka
//! endpoint. An app instance is one member of the trigger's consumer group; the group spreads
//! the topic's partitions over the instances, so scaling out stops at the partition count.
//!
//! The listener (`listener`) fetches a batch, hands it to `batch` — in order within each
//! partition; partitions side by side; one invocation per event (`cardinality: one`) or per
//! batch (`many`: the whole fetch for Kafka, each partition's part for Event Hubs, as the two
//! extensions do) — and commits each partition's next offset once the whole batch is done,
//! whether its invocations succeeded or, after the retry policy, failed. A failed event is first
//! written to the function's dead-letter target (`dead_letter`); a crash before the commit
//! leaves the offsets where they were, so the batch is read again by whichever member owns the
//! partition next. The circuit breaker stops the stream: the consumer leaves the group, and on
//! resume a new member reads on from the last commit, in order (see the domain's
//! `stream_trigger` for the rules and their sources).
//!
//! A retry far enough off is not waited for in the batch: its events are parked on the
//! trigger's retry topic (`parking`) and the checkpoint moves on; each instance also runs a
//! member of the retry topic's own group (`retry_reader`) that tries them again when due.

mod batch;
mod dead_letter;
mod listener;
mod parking;
mod retry_reader;
mod topic_writer;

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use shoal_connectors::kafka::KafkaProperties;
use shoal_domain::binding_kinds::stream::is_event_hubs;
use shoal_domain::bindings::{Binding, DataType};
use shoal_domain::host_config::RetryPolicy;
use shoal_domain::stream_trigger::{StreamSource, default_target, stream_source};
use shoal_domain::trigger_source::TriggerSource;
use shoal_egress::Egress;
use tokio_util::sync::CancellationToken;

use crate::bind_error::BindError;
use crate::config::WorkerConfig;
use crate::hosted_apps::{HostedApp, HostedFunction};
use crate::invocation::FunctionHost;
use crate::triggers::kind::{TriggerKind, TriggerListener, source_of};
use crate::triggers::stream::dead_letter::DeadLetterSink;
use crate::triggers::stream::parking::RetryTopic;

/// A stream trigger kind: `kafkaTrigger`, or `eventHubTrigger` through the namespace's Kafka
/// endpoint; the two differ only in how their source is resolved (see the domain's
/// `stream_source`).
pub struct StreamTrigger(&'static str);

impl StreamTrigger {
    pub const KAFKA: StreamTrigger = StreamTrigger("kafkaTrigger");
    pub const EVENT_HUBS: StreamTrigger = StreamTrigger("eventHubTrigger");
}

impl TriggerKind for StreamTrigger {
    fn binding_type(&self) -> &'static str {
        self.0
    }

    fn source(&self, trigger: &Binding, app: &HostedApp) -> String {
        describe(trigger, app)
    }

    fn bind(
        &self,
        function: &HostedFunction,
        trigger: &Binding,
        app: &HostedApp,
        config: &WorkerConfig,
    ) -> Result<Box<dyn TriggerListener>, BindError> {
        bind(function, trigger, app, config)
    }
}

/// The topic a trigger reads, best effort: its resolved name, else as written.
fn describe(trigger: &Binding, app: &HostedApp) -> String {
    match stream_source(trigger, &app.settings, &app.host) {
        Ok(source) => source.topic,
        Err(_) => {
            let written = if is_event_hubs(trigger) {
                "eventHubName"
            } else {
                "topic"
            };
            let written = trigger.properties().get(written).and_then(|v| v.as_str());
            written.unwrap_or_default().to_owned()
        }
    }
}

fn bind(
    function: &HostedFunction,
    trigger: &Binding,
    app: &HostedApp,
    config: &WorkerConfig,
) -> Result<Box<dyn TriggerListener>, BindError> {
    let TriggerSource::Stream(source) = source_of(trigger, app)? else {
        return Err(BindError::Mismatch("stream trigger"));
    };
    crate::connections::check_brokers(&source.properties, app, config)?;
    let target = function
        .spec
        .dead_letter
        .as_ref()
        .map(|d| d.0.clone())
        .unwrap_or_else(|| default_target(&source.topic));
    let dead_letters =
        DeadLetterSink::bind(&target, &source, app, config).map_err(BindError::DeadLetter)?;
    let egress = config.egress.for_tenant(&app.egress_allow);
    let retries = RetryTopic::new(&source, egress.clone());
    let binding = trigger.name().as_str().to_owned();
    let data_type = trigger.data_type();
    let timeout = Duration::from_secs(u64::from(app.handler.timeout_seconds))
        .min(app.host.function_timeout.as_duration());
    let retry = function
        .spec
        .retry
        .clone()
        .or_else(|| app.host.retry.clone());
    Ok(Box::new(BoundStreamTrigger {
        properties: consumer_properties(&source, timeout, retry.as_ref()),
        function: StreamFunctionParts {
            binding,
            data_type,
            source,
            dead_letters,
            retries,
            egress,
        },
    }))
}

/// The source's client properties, plus how long the member may go between fetches: a batch
/// is committed before the next fetch, so a batch that takes longer than librdkafka's
/// `max.poll.interval.ms` would get the member thrown out of the group mid-batch. It is set
/// from the longest a batch may take under the function's timeout and retry policy (at least
/// librdkafka's 5-minute default). `session.timeout.ms` is the Kafka extension's 10 s
/// (`Config/KafkaOptions.cs`), so a dead member's partitions move within seconds.
fn consumer_properties(
    source: &StreamSource,
    timeout: Duration,
    retry: Option<&RetryPolicy>,
) -> KafkaProperties {
    let mut properties = KafkaProperties::new();
    for (key, value) in &source.properties {
        properties.set(key, value);
    }
    // `maxRetryCount: -1` retries without end: the longest interval librdkafka allows.
    let attempts = retry.map_or(1, |p| {
        u32::try_from(p.max_retry_count).map_or(u32::MAX, |n| n.saturating_add(1))
    });
    let longest_delay = retry
        .and_then(|p| p.delay_interval.or(p.maximum_interval))
        .map_or(Duration::ZERO, |d| d.as_duration());
    let batch = (timeout + longest_delay).saturating_mul(attempts);
    let poll_interval = (batch + Duration::from_secs(60))
        .max(Duration::from_secs(300))
        .min(Duration::from_secs(86_400));
    properties.set(
        "max.poll.interval.ms",
        poll_interval.as_millis().to_string(),
    );
    properties.set("session.timeout.ms", "10000");
    properties
}

/// A stream trigger with its source and dead-letter target resolved (not yet connected).
struct BoundStreamTrigger {
    properties: KafkaProperties,
    function: StreamFunctionParts,
}

struct StreamFunctionParts {
    binding: String,
    data_type: Option<DataType>,
    source: StreamSource,
    dead_letters: DeadLetterSink,
    retries: RetryTopic,
    egress: Egress,
}

/// Everything a stream listener's batches share.
pub struct StreamFunction {
    pub function: Arc<FunctionHost>,
    /// The trigger binding's name (`Data.<name>`).
    pub binding: String,
    pub data_type: Option<DataType>,
    pub source: StreamSource,
    pub dead_letters: DeadLetterSink,
    /// Where events whose next retry is far off wait (`parking`, read by `retry_reader`).
    pub retries: RetryTopic,
    /// The app's egress policy: the brokers are checked with it before each join.
    pub egress: Egress,
}

impl TriggerListener for BoundStreamTrigger {
    fn listen(
        self: Box<Self>,
        function: Arc<FunctionHost>,
        stop: CancellationToken,
        abandon: CancellationToken,
    ) -> BoxFuture<'static, ()> {
        let parts = self.function;
        let context = Arc::new(StreamFunction {
            function,
            binding: parts.binding,
            data_type: parts.data_type,
            source: parts.source,
            dead_letters: parts.dead_letters,
            retries: parts.retries,
            egress: parts.egress,
        });
        let retries = retry_reader::run(
            context.clone(),
            self.properties.clone(),
            stop.clone(),
            abandon.clone(),
        );
        let listener = listener::run(context, self.properties, stop, abandon);
        async move {
            futures::join!(listener, retries);
        }
        .boxed()
    }
}
