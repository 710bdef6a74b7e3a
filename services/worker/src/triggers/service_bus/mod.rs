//! The Azure Service Bus trigger (`serviceBusTrigger`), with the semantics of Azure's Service
//! Bus extension: peek-lock receive from a queue or topic subscription; single dispatch up to
//! `maxConcurrentCalls`, or batches up to `maxMessageBatchSize` (`listener`); sessions, one per
//! slot and in order within a session, up to `maxConcurrentSessions` (`sessions`); lock renewal
//! while the handler runs, and settlement by the invocation's outcome and the handler's
//! `Settlement` (`delivery`). The connection is made by the listener, retried and reported in
//! its statistics line while the namespace cannot be reached (`connect`).

mod connect;
mod delivery;
mod listener;
mod parking;
mod sessions;
mod slots;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::FutureExt as _;
use futures::future::BoxFuture;
use shoal_domain::binding_kinds::service_bus;
use shoal_domain::bindings::{Binding, DataType};
use shoal_domain::host_config::ServiceBusOptions;
use shoal_domain::service_bus_trigger::{EntityPath, trigger_entity};
use shoal_domain::trigger_source::TriggerSource;
use tokio_util::sync::CancellationToken;

use crate::bind_error::BindError;
use crate::config::WorkerConfig;
use crate::connections;
use crate::hosted_apps::{HostedApp, HostedFunction};
use crate::invocation::FunctionHost;
use crate::triggers::kind::{TriggerKind, TriggerListener, source_of};
use crate::triggers::service_bus::connect::Connector;
use crate::triggers::service_bus::parking::Parking;

pub struct ServiceBusTrigger;

impl TriggerKind for ServiceBusTrigger {
    fn binding_type(&self) -> &'static str {
        service_bus::TRIGGER_TYPE
    }

    fn source(&self, trigger: &Binding, app: &HostedApp) -> String {
        let Some(Ok(trigger)) = service_bus::trigger(trigger) else {
            return String::new();
        };
        match trigger_entity(&trigger, &app.settings) {
            Ok(entity) => entity.management_path(),
            Err(_) => match (
                &trigger.queue_name,
                &trigger.topic_name,
                &trigger.subscription_name,
            ) {
                (Some(q), _, _) => q.clone(),
                (None, Some(t), Some(s)) => format!("{t}/Subscriptions/{s}"),
                _ => String::new(),
            },
        }
    }

    fn bind(
        &self,
        _function: &HostedFunction,
        trigger: &Binding,
        app: &HostedApp,
        config: &WorkerConfig,
    ) -> Result<Box<dyn TriggerListener>, BindError> {
        let (Some(Ok(trigger)), TriggerSource::ServiceBus { connection, entity }) =
            (service_bus::trigger(trigger), source_of(trigger, app)?)
        else {
            return Err(BindError::Mismatch("Service Bus trigger"));
        };
        let spec = connections::service_bus_at(connection, app, config)?;
        let options = app.host.extensions.service_bus.clone();
        Ok(Box::new(BoundServiceBusTrigger {
            binding: trigger.name.as_str().to_owned(),
            data_type: trigger.data_type,
            entity,
            // The binding's value overrides the host setting, as in Azure's extension.
            auto_complete: trigger
                .auto_complete_messages
                .unwrap_or(options.auto_complete_messages),
            batched: trigger.batched(),
            sessions: trigger.is_sessions_enabled,
            options,
            connector: Connector {
                spec,
                identities: app.identities.clone(),
                options: crate::connections::connector_options(app, config),
            },
        }))
    }
}

/// A Service Bus trigger with its connection resolved (not yet connected).
struct BoundServiceBusTrigger {
    binding: String,
    data_type: Option<DataType>,
    entity: EntityPath,
    auto_complete: bool,
    batched: bool,
    sessions: bool,
    options: ServiceBusOptions,
    connector: Connector,
}

/// Everything a Service Bus listener's deliveries share.
pub struct ServiceBusFunction {
    pub function: Arc<FunctionHost>,
    /// The trigger binding's name (`Data.<name>`).
    pub binding: String,
    pub data_type: Option<DataType>,
    pub entity: EntityPath,
    pub options: ServiceBusOptions,
    pub auto_complete: bool,
    pub batched: bool,
    /// Where far-off retries are parked (a queue's single messages outside sessions).
    pub parking: Option<Parking>,
    /// Messages received and not yet settled, across the listener's sessions.
    in_flight: AtomicUsize,
}

impl ServiceBusFunction {
    fn add_in_flight(&self, n: usize) {
        let now = self.in_flight.fetch_add(n, Ordering::AcqRel) + n;
        self.function.stats.set_in_flight(now);
    }

    /// Messages of this listener in invocation or awaiting settlement now.
    fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    fn end_in_flight(&self, n: usize) {
        let now = self
            .in_flight
            .fetch_sub(n, Ordering::AcqRel)
            .saturating_sub(n);
        self.function.stats.set_in_flight(now);
    }
}

impl TriggerListener for BoundServiceBusTrigger {
    fn listen(
        self: Box<Self>,
        function: Arc<FunctionHost>,
        stop: CancellationToken,
        abandon: CancellationToken,
    ) -> BoxFuture<'static, ()> {
        let trigger = *self;
        let parking = Parking::for_trigger(&trigger.entity, trigger.batched, trigger.sessions);
        let context = Arc::new(ServiceBusFunction {
            function,
            parking,
            binding: trigger.binding,
            data_type: trigger.data_type,
            entity: trigger.entity,
            options: trigger.options,
            auto_complete: trigger.auto_complete,
            batched: trigger.batched,
            in_flight: AtomicUsize::new(0),
        });
        if trigger.sessions {
            sessions::run(context, trigger.connector, stop, abandon).boxed()
        } else {
            listener::run(context, trigger.connector, stop, abandon).boxed()
        }
    }
}
