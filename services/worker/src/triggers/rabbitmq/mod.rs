//! The RabbitMQ trigger (`rabbitMQTrigger`), with the Azure Functions RabbitMQ extension's
//! semantics (`shoal_domain::binding_kinds::rabbitmq`): one consumer on the queue with
//! `prefetchCount` unacknowledged messages at most, each delivery acknowledged once its
//! invocation succeeded; a failure, once the function's retry policy is spent, publishes a copy
//! with its requeue count raised (the extension's `RabbitMQListener`) or, at the fifth,
//! rejects it to the queue's dead-letter exchange.
//!
//! Acknowledgements are batched: a run of settled deliveries is acknowledged with one
//! `basic.ack multiple` that never reaches past one still in hand (`acks`, sent by `acker`).
//! Nothing is acknowledged before it is settled, so a worker that dies loses nothing: the
//! broker hands its unacknowledged messages to another consumer when the connection drops.

mod acker;
mod acks;
mod delivery;
mod listener;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use shoal_domain::binding_kinds::rabbitmq::{HOST_SECTION, Options, TriggerBinding, held_at_once};
use shoal_domain::bindings::Binding;
use shoal_domain::trigger_source::{BrokerSource, TriggerSource};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use crate::bind_error::BindError;
use crate::config::WorkerConfig;
use crate::connections::ConnectionError;
use crate::hosted_apps::{HostedApp, HostedFunction};
use crate::invocation::FunctionHost;
use crate::triggers::kind::{TriggerKind, TriggerListener, source_of};
use crate::triggers::rabbitmq::listener::RabbitMqListener;

pub struct RabbitMqTrigger;

impl TriggerKind for RabbitMqTrigger {
    fn binding_type(&self) -> &'static str {
        shoal_domain::binding_kinds::rabbitmq::TRIGGER_TYPE
    }

    fn source(&self, trigger: &Binding, app: &HostedApp) -> String {
        match source_of(trigger, app) {
            Ok(TriggerSource::Broker(source)) => source.entity,
            _ => trigger.name().as_str().to_owned(),
        }
    }

    fn bind(
        &self,
        _function: &HostedFunction,
        trigger: &Binding,
        app: &HostedApp,
        config: &WorkerConfig,
    ) -> Result<Box<dyn TriggerListener>, BindError> {
        let TriggerSource::Broker(source) = source_of(trigger, app)? else {
            return Err(BindError::Mismatch("RabbitMQ trigger"));
        };
        let binding: TriggerBinding = trigger.typed().map_err(BindError::Source)?;
        let egress = config.egress.for_tenant(&app.egress_allow);
        // A URI whose text names a refused address (a literal internal IP, localhost) is
        // refused here; names are resolved and checked each time the connection is dialled.
        if let Ok(url) = url::Url::parse(&source.uri) {
            egress
                .check_url(&url)
                .map_err(|r| ConnectionError::Refused(format!("{}: {r}", source.setting)))?;
        }
        let asked = Options::of(app.host.extensions.kinds.get(HOST_SECTION)).prefetch_count;
        Ok(Box::new(BoundRabbitMq {
            source,
            binary: binding.reads_binary(),
            binding: binding.name.as_str().to_owned(),
            prefetch: held_at_once(asked, config.held_messages()),
            asked_prefetch: asked,
            max_body: config.max_message_bytes,
            held_bytes: config.max_held_bytes,
            egress,
        }))
    }
}

/// A RabbitMQ trigger resolved to its broker and queue, ready to consume.
pub struct BoundRabbitMq {
    pub source: BrokerSource,
    /// The trigger binding's name (`Data.<name>`).
    pub binding: String,
    /// `dataType: binary` (or `stream`): the body goes to the handler in base64.
    pub binary: bool,
    /// Messages held unacknowledged at once (`basic.qos`): `prefetchCount`, lowered to what
    /// the worker's held-bytes limit allows.
    pub prefetch: u16,
    /// `extensions.rabbitMQ.prefetchCount` as the app set it.
    pub asked_prefetch: u16,
    /// The largest body taken (`WorkerConfig::max_message_bytes`); a larger one is never
    /// read, and is rejected to the queue's dead-letter exchange.
    pub max_body: u64,
    /// `WorkerConfig::max_held_bytes`, to say why `prefetch` is lower than asked.
    pub held_bytes: u64,
    pub egress: shoal_egress::Egress,
}

impl BoundRabbitMq {
    /// The listener's status while it consumes: says so when `prefetchCount` was lowered, so
    /// the setting is never quietly without effect.
    pub fn listening_status(&self) -> String {
        if self.prefetch == self.asked_prefetch {
            return "listening".into();
        }
        format!(
            "listening, holding {} messages at a time rather than prefetchCount {}: this \
             worker holds at most {} bytes of messages per listener, of at most {} bytes each",
            self.prefetch, self.asked_prefetch, self.held_bytes, self.max_body
        )
    }
}

impl TriggerListener for BoundRabbitMq {
    fn listen(
        self: Box<Self>,
        function: Arc<FunctionHost>,
        stop: CancellationToken,
        abandon: CancellationToken,
    ) -> BoxFuture<'static, ()> {
        RabbitMqListener {
            trigger: Arc::new(*self),
            function,
            stop,
            abandon,
        }
        .run()
        .boxed()
    }
}
