//! A sender to a queue or topic, for output bindings.

use azservicebus::prelude::ServiceBusSender;
use shoal_domain::service_bus_trigger::OutgoingMessage;

use super::error::ServiceBusError;
use super::message::outgoing;
use crate::error::Redactor;

#[derive(Debug)]
pub struct MessageSender {
    entity: String,
    sender: ServiceBusSender,
    redactor: Redactor,
}

impl MessageSender {
    pub(crate) fn new(entity: String, sender: ServiceBusSender, redactor: Redactor) -> Self {
        MessageSender {
            entity,
            sender,
            redactor,
        }
    }

    /// The queue or topic it sends to.
    pub fn entity(&self) -> &str {
        &self.entity
    }

    /// Sends `messages` in one transfer each; a message with `ScheduledEnqueueTimeUtc` is
    /// scheduled (the broker holds it until then).
    pub async fn send(&mut self, messages: &[OutgoingMessage]) -> Result<(), ServiceBusError> {
        for message in messages {
            let converted = outgoing(message).map_err(|e| {
                ServiceBusError::InvalidConnection(format!("message for {}: {e}", self.entity))
            })?;
            Box::pin(self.sender.send_message(converted))
                .await
                .map_err(|e| ServiceBusError::from_sdk(&self.redactor, "send message", &e))?;
        }
        Ok(())
    }

    pub async fn close(self) -> Result<(), ServiceBusError> {
        let redactor = self.redactor;
        self.sender
            .dispose()
            .await
            .map_err(|e| ServiceBusError::from_sdk(&redactor, "close sender", &e))
    }
}
