//! A Service Bus trigger's dead-letter queue, as the poison endpoints show and replay it: its
//! depth from the management API (as the scaler reads counts), its oldest messages peeked (no
//! lock, no delivery counted), and replay by receiving from it, sending a copy to the queue and
//! completing the dead-lettered message.

use std::time::Duration;

use shoal_connectors::{
    ConnectorOptions, QueueError, Received, ServiceBusAdmin, ServiceBusNamespace,
};
use shoal_domain::connection::ConnectionSpec;
use shoal_domain::connection::outbound::AppIdentities;
use shoal_domain::service_bus_entity::path::EntityPath;
use shoal_domain::service_bus_trigger::Settlement;
use shoal_domain::service_bus_trigger::output::OutgoingMessage;

use super::open_namespace;
use crate::error::ApiError;
use crate::routes::kinds::{FailedMessage, Replayed, Wanted, body_text};

/// How long one receive from the dead-letter queue waits for messages.
const RECEIVE_WAIT: Duration = Duration::from_secs(1);
/// Application properties the broker set when it dead-lettered the message; a replayed copy
/// does not carry them.
const DEAD_LETTER_PROPERTIES: [&str; 2] = ["DeadLetterReason", "DeadLetterErrorDescription"];

pub(super) struct DeadLetters {
    pub entity: EntityPath,
    namespace: ServiceBusNamespace,
    admin: ServiceBusAdmin,
}

impl DeadLetters {
    pub async fn open(
        connection: &ConnectionSpec,
        entity: EntityPath,
        options: &ConnectorOptions,
        identities: &AppIdentities,
    ) -> Result<DeadLetters, ApiError> {
        let admin =
            ServiceBusAdmin::connect_for_app(connection, options, identities).map_err(|e| {
                ApiError::Conflict(format!("the trigger's namespace cannot be used: {e}"))
            })?;
        let namespace = open_namespace(connection, options, identities).await?;
        Ok(DeadLetters {
            entity,
            namespace,
            admin,
        })
    }

    pub async fn depth(&self) -> Result<u64, String> {
        match self.admin.entity(&self.entity).await {
            Ok(description) => Ok(description.counts.dead_letter),
            Err(QueueError::EntityNotFound { .. }) => Ok(0),
            Err(e) => Err(e.to_string()),
        }
    }

    pub async fn peek(&self, top: u8, with_bodies: bool) -> Result<Vec<FailedMessage>, String> {
        let mut receiver = self
            .namespace
            .dead_letter_receiver(&self.entity)
            .await
            .map_err(|e| e.to_string())?;
        let peeked = receiver.peek(u32::from(top)).await;
        let _ = receiver.close().await;
        Ok(peeked
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|m| FailedMessage {
                message_id: m
                    .message_id
                    .unwrap_or_else(|| format!("sequence-{}", m.sequence_number)),
                failed_at: m.enqueued_time,
                expires_at: Some(m.expires_at),
                failures: m.delivery_count,
                reason: m.dead_letter_reason,
                body: with_bodies.then(|| body_text(&m.body)),
            })
            .collect())
    }

    /// Moves messages from the dead-letter queue back to the queue (see the module doc).
    /// Only a queue's: a subscription's dead letters cannot be sent to that one subscription.
    pub async fn replay(&self, ids: Option<&[String]>, limit: u32) -> Result<Replayed, String> {
        let EntityPath::Queue(queue) = &self.entity else {
            return Err("a subscription's dead letters cannot be replayed: sending to the topic would reach every subscription".into());
        };
        let mut receiver = self
            .namespace
            .dead_letter_receiver(&self.entity)
            .await
            .map_err(|e| e.to_string())?;
        let mut sender = self
            .namespace
            .sender(queue)
            .await
            .map_err(|e| e.to_string())?;
        let mut wanted = Wanted::new(ids);
        let mut moved = Vec::new();
        let mut skipped: Vec<Received> = Vec::new();
        let result = async {
            while (moved.len() as u32) < limit {
                let want = (limit - moved.len() as u32).min(32);
                let batch = receiver
                    .receive(want, RECEIVE_WAIT)
                    .await
                    .map_err(|e| e.to_string())?;
                if batch.is_empty() {
                    break;
                }
                for message in batch {
                    let id =
                        message.message.message_id.clone().unwrap_or_else(|| {
                            format!("sequence-{}", message.message.sequence_number)
                        });
                    if !wanted.take(&id) || moved.len() as u32 >= limit {
                        skipped.push(message);
                        continue;
                    }
                    sender
                        .send(&[copy(&message)])
                        .await
                        .map_err(|e| e.to_string())?;
                    receiver
                        .settle(&message, &Settlement::Complete)
                        .await
                        .map_err(|e| e.to_string())?;
                    moved.push(id);
                }
                if wanted.all_found() {
                    break;
                }
            }
            Ok::<(), String>(())
        }
        .await;
        for message in &skipped {
            let _ = receiver.settle(message, &Settlement::abandon()).await;
        }
        let _ = receiver.close().await;
        let _ = sender.close().await;
        result?;
        Ok(Replayed::new(moved, wanted))
    }
}

/// The dead-lettered message as sent again: the same body, ids and properties, without what
/// the broker added when it dead-lettered it.
fn copy(message: &Received) -> OutgoingMessage {
    let m = &message.message;
    let mut application_properties = m.application_properties.clone();
    for key in DEAD_LETTER_PROPERTIES {
        application_properties.remove(key);
    }
    OutgoingMessage {
        body: m.body.clone(),
        message_id: m.message_id.clone(),
        session_id: m.session_id.clone(),
        reply_to_session_id: m.reply_to_session_id.clone(),
        partition_key: m.partition_key.clone(),
        correlation_id: m.correlation_id.clone(),
        content_type: m.content_type.clone(),
        subject: m.subject.clone(),
        to: m.to.clone(),
        reply_to: m.reply_to.clone(),
        time_to_live: None,
        scheduled_enqueue_time: None,
        application_properties,
    }
}
