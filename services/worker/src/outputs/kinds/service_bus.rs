//! The `serviceBus` output: the handler's output sent to a Service Bus queue or topic, each
//! message built from the handler's value (`service_bus_trigger::output`: a body, or the
//! message's properties) and carrying the attempt's trace context in its application
//! properties unless the handler set one. The namespace connection and the sender are made on
//! first use and kept; Azure does not create entities, and neither does Shoal.

use std::sync::Arc;

use futures::FutureExt as _;
use serde_json::Value;
use shoal_connectors::{ConnectorOptions, MessageSender, ServiceBusNamespace};
use shoal_domain::binding_kinds::KindBinding;
use shoal_domain::binding_kinds::service_bus::{OUTPUT_TYPE, ServiceBusOutputBinding};
use shoal_domain::connection::ConnectionSpec;
use shoal_domain::connection::outbound::AppIdentities;
use shoal_domain::service_bus_trigger::{
    OutgoingMessage, check_output_entity, output_entity, service_bus_output_messages,
};
use shoal_domain::trace_context::TraceContext;
use tokio::sync::{Mutex, OnceCell};

use super::{Bound, KindTarget, OutputKind, Prepared};
use crate::config::WorkerConfig;
use crate::connections;
use crate::error::OutputWriteError;
use crate::hosted_apps::HostedApp;

pub struct ServiceBusOutput;

impl OutputKind for ServiceBusOutput {
    fn binding_type(&self) -> &'static str {
        OUTPUT_TYPE
    }

    fn bind(
        &self,
        binding: &KindBinding,
        app: &HostedApp,
        config: &WorkerConfig,
    ) -> Result<Bound, String> {
        let out: ServiceBusOutputBinding = binding.typed()?;
        let spec = connections::service_bus(out.connection.as_deref(), app, config)?;
        let entity = output_entity(&out, &app.settings)?;
        Ok(Bound {
            name: Some(entity.clone()),
            target: Box::new(Sender {
                binding: out,
                spec,
                identities: app.identities.clone(),
                connector: connections::connector_options(app, config),
                entity,
                sender: Mutex::new(None),
                named_senders: Mutex::new(Vec::new()),
                namespace: Arc::new(OnceCell::new()),
            }),
        })
    }
}

/// A Service Bus queue or topic; the connection and the sender are made on first use and kept.
struct Sender {
    binding: ServiceBusOutputBinding,
    spec: ConnectionSpec,
    identities: AppIdentities,
    connector: ConnectorOptions,
    entity: String,
    sender: Mutex<Option<MessageSender>>,
    /// Senders to the entities a name with expressions resolved to, oldest first.
    named_senders: Mutex<Vec<(String, MessageSender)>>,
    /// The namespace connection, kept so a failed sender can be reopened on it.
    namespace: Arc<OnceCell<ServiceBusNamespace>>,
}

/// The most Service Bus senders an output whose entity name has expressions keeps open.
const SENDERS_KEPT: usize = 8;

impl KindTarget for Sender {
    fn check_name(&self, _written: &str, resolved: String) -> Result<String, String> {
        check_output_entity(&self.binding, &resolved).map(|()| resolved)
    }

    fn prepare<'a>(
        &'a self,
        value: &'a Value,
        trace: &'a TraceContext,
    ) -> Result<Prepared<'a>, OutputWriteError> {
        let mut messages = service_bus_output_messages(self.binding.name.as_str(), value)?;
        for message in &mut messages {
            let properties = &mut message.application_properties;
            let added = trace.for_output(true, |name| properties.contains_key(name));
            for (name, value) in added {
                properties.insert(name.to_owned(), Value::String(value));
            }
        }
        Ok(Box::new(move |name, _| {
            async move {
                if messages.is_empty() {
                    return Ok(0);
                }
                match name {
                    Some(entity) => self.send_to(&entity, &messages).await?,
                    None => self.send(&messages).await?,
                }
                Ok(messages.len())
            }
            .boxed()
        }))
    }
}

impl Sender {
    /// The namespace connection, made on first use and kept for every sender.
    async fn namespace(&self) -> Result<&ServiceBusNamespace, OutputWriteError> {
        Ok(self
            .namespace
            .get_or_try_init(|| {
                ServiceBusNamespace::connect_for_app(&self.spec, &self.connector, &self.identities)
            })
            .await?)
    }

    async fn send(&self, messages: &[OutgoingMessage]) -> Result<(), OutputWriteError> {
        let mut sender = self.sender.lock().await;
        if sender.is_none() {
            let namespace = self.namespace().await?;
            *sender = Some(namespace.sender(&self.entity).await?);
        }
        let Some(open) = sender.as_mut() else {
            return Err("the Service Bus sender is not open".into());
        };
        if let Err(e) = open.send(messages).await {
            // A broken link is reopened by the next invocation's outputs.
            *sender = None;
            return Err(format!("sending to {}: {e}", self.entity).into());
        }
        Ok(())
    }

    /// Sends to `entity`, what this invocation's expressions resolved the name to. Senders are
    /// kept per entity, up to [`SENDERS_KEPT`] (each is a connection of its own); past that the
    /// oldest is closed.
    async fn send_to(
        &self,
        entity: &str,
        messages: &[OutgoingMessage],
    ) -> Result<(), OutputWriteError> {
        let mut senders = self.named_senders.lock().await;
        let position = senders.iter().position(|(name, _)| name == entity);
        let (_, sender) = match position {
            Some(at) => &mut senders[at],
            None => {
                let namespace = self.namespace().await?;
                let opened = namespace.sender(entity).await?;
                if senders.len() >= SENDERS_KEPT {
                    let (oldest, sender) = senders.remove(0);
                    if let Err(e) = sender.close().await {
                        tracing::debug!(entity = oldest, error = %e, "closing a Service Bus sender failed");
                    }
                }
                senders.push((entity.to_owned(), opened));
                let last = senders.len() - 1;
                &mut senders[last]
            }
        };
        if let Err(e) = sender.send(messages).await {
            // A broken link is reopened by the next invocation that sends there.
            senders.retain(|(name, _)| name != entity);
            return Err(format!("sending to {entity}: {e}").into());
        }
        Ok(())
    }
}
