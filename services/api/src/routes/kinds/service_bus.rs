//! `serviceBusTrigger` in the API: a test message sent to the trigger's queue (a
//! subscription's to its topic), the failed messages read from and replayed out of the
//! entity's dead-letter subqueue (where the broker moves a message after the entity's
//! `MaxDeliveryCount`, [`dead_letters`]), and the entity probed through the management API for
//! diagnostics ([`probe`]). The namespace is reached with the app's connection under the
//! tenant's egress policy.

mod dead_letters;
mod probe;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use shoal_connectors::{ConnectorOptions, ServiceBusError, ServiceBusNamespace};
use shoal_domain::binding_kinds::service_bus::{self, ServiceBusTriggerBinding, TRIGGER_TYPE};
use shoal_domain::connection::ConnectionSpec;
use shoal_domain::connection::outbound::AppIdentities;
use shoal_domain::diagnostics::Check;
use shoal_domain::send_message::{BodyForm, Carrier, SendRequest};
use shoal_domain::service_bus_entity::path::EntityPath;
use shoal_domain::service_bus_trigger::output::OutgoingMessage;
use shoal_domain::trigger_source::TriggerSource;

use super::{FailedMessages, KindRoutes, Replayed, Sent, Target, bounded};
use crate::error::ApiError;
use crate::routes::trigger_source::FunctionContext;
use dead_letters::DeadLetters;

pub(super) struct ServiceBusRoutes;

pub(super) const SERVICE_BUS: ServiceBusRoutes = ServiceBusRoutes;

impl KindRoutes for ServiceBusRoutes {
    fn type_name(&self) -> &'static str {
        TRIGGER_TYPE
    }

    fn send<'a>(
        &'a self,
        target: Target<'a>,
        request: SendRequest,
    ) -> BoxFuture<'a, Result<Sent, ApiError>> {
        async move {
            let (binding, connection, entity) = entity(&target)?;
            request
                .check(Carrier::ServiceBus {
                    sessions: binding.is_sessions_enabled,
                })
                .map_err(ApiError::Validation)?;
            deliver(target.context, connection, entity, request).await
        }
        .boxed()
    }

    fn failed<'a>(
        &'a self,
        target: Target<'a>,
        top: u8,
        with_bodies: bool,
    ) -> BoxFuture<'a, Result<FailedMessages, ApiError>> {
        async move {
            let dead = open(&target).await?;
            let (count, messages) = bounded(async {
                let depth = dead.depth().await?;
                Ok::<_, String>((depth, dead.peek(top, with_bodies).await?))
            })
            .await?;
            Ok(FailedMessages {
                source: dead.entity.management_path(),
                failed: format!("{}/$DeadLetterQueue", dead.entity.management_path()),
                count,
                messages,
            })
        }
        .boxed()
    }

    fn replay<'a>(
        &'a self,
        target: Target<'a>,
        ids: Option<&'a [String]>,
        limit: u32,
    ) -> BoxFuture<'a, Result<Replayed, ApiError>> {
        async move {
            let dead = open(&target).await?;
            bounded(dead.replay(ids, limit)).await
        }
        .boxed()
    }

    fn probes(&self) -> bool {
        true
    }

    fn probe<'a>(&'a self, function: &'a str, target: Target<'a>) -> BoxFuture<'a, Vec<Check>> {
        probe::entity_checks(function, target).boxed()
    }
}

/// The trigger's binding, connection and entity.
fn entity<'t>(
    target: &'t Target<'_>,
) -> Result<(ServiceBusTriggerBinding, &'t ConnectionSpec, &'t EntityPath), ApiError> {
    let TriggerSource::ServiceBus { connection, entity } = &target.source else {
        return Err(target.unexpected());
    };
    match service_bus::trigger(target.binding) {
        // Checked when it was stored; one its type can no longer read is a conflict.
        Some(read) => Ok((read.map_err(ApiError::Conflict)?, connection, entity)),
        None => Err(target.unexpected()),
    }
}

/// The entity's dead-letter subqueue, connected as the app once the egress policy allows it.
async fn open(target: &Target<'_>) -> Result<DeadLetters, ApiError> {
    let (_, connection, entity) = entity(target)?;
    let context = target.context;
    context.check_egress(connection).await?;
    let options = context.connector_options();
    DeadLetters::open(connection, entity.clone(), &options, &context.identities).await
}

/// The trigger's Service Bus namespace, connected as the app: 409 when the connection cannot
/// be used as configured, 502 when the namespace does not answer.
async fn open_namespace(
    connection: &ConnectionSpec,
    options: &ConnectorOptions,
    identities: &AppIdentities,
) -> Result<ServiceBusNamespace, ApiError> {
    ServiceBusNamespace::connect_for_app(connection, options, identities)
        .await
        .map_err(|e| match e {
            ServiceBusError::InvalidConnection(why) => {
                ApiError::Conflict(format!("the trigger's namespace cannot be used: {why}"))
            }
            other => ApiError::Storage(format!("the namespace cannot be reached: {other}")),
        })
}

async fn deliver(
    context: &FunctionContext,
    connection: &ConnectionSpec,
    entity: &EntityPath,
    request: SendRequest,
) -> Result<Sent, ApiError> {
    context.check_egress(connection).await?;
    // A subscription is read from its topic: the message goes to the topic, so every
    // subscription whose rules match receives it, as in Azure.
    let destination = match entity {
        EntityPath::Queue(queue) => queue.clone(),
        EntityPath::Subscription { topic, .. } => topic.clone(),
    };
    let namespace = open_namespace(
        connection,
        &context.connector_options(),
        &context.identities,
    )
    .await?;
    let message_id = uuid::Uuid::new_v4().to_string();
    let size = request.body.len() as u64;
    let message = OutgoingMessage {
        body: request.body,
        message_id: Some(message_id.clone()),
        session_id: request.session_id.clone(),
        content_type: match request.form {
            BodyForm::Json => Some("application/json".into()),
            BodyForm::Text => Some("text/plain".into()),
            BodyForm::Binary => None,
        },
        application_properties: request
            .properties
            .into_iter()
            .map(|(k, v)| (k, v.into()))
            .collect(),
        ..OutgoingMessage::default()
    };
    let failed = |e: String| ApiError::Storage(format!("sending to {destination} failed: {e}"));
    let sent = async {
        let mut sender = namespace
            .sender(&destination)
            .await
            .map_err(|e| failed(e.to_string()))?;
        let sent = sender
            .send(&[message])
            .await
            .map_err(|e| failed(e.to_string()));
        let _ = sender.close().await;
        sent
    }
    .await;
    namespace.close().await;
    sent?;
    Ok(Sent {
        destination,
        message_id: Some(message_id),
        size,
        session_id: request.session_id,
        partition: None,
        offset: None,
    })
}
