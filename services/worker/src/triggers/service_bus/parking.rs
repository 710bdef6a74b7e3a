//! Parking a queue's message for a far-off retry: a scheduled copy that carries its retries is
//! sent to the queue, then the original is completed (see
//! `shoal_domain::service_bus_trigger::parked` for what the copy holds and which messages are
//! parked). The sender is opened on the first park, on its own connection like every sender
//! (`shoal_connectors::service_bus::sender`), so a listener that never parks costs nothing more.
//!
//! The copy and the completion are two operations: Azure's SDKs can put both in one
//! transaction, the client library Shoal uses cannot. The copy is sent first, so a failure in
//! between delivers the message twice (the original once its lock lapses, the copy when due),
//! both with the same `webhook-id`, and never loses it.

use std::sync::Mutex;

use chrono::Utc;
use shoal_connectors::{MessageSender, ServiceBusNamespace};
use shoal_domain::service_bus_trigger::parked::parked_copy;
use shoal_domain::service_bus_trigger::{EntityPath, ReceivedMessage};

use crate::invocation::Parked;

pub struct Parking {
    queue: String,
    /// The listener's current connection (set on every connect).
    namespace: Mutex<Option<ServiceBusNamespace>>,
    sender: tokio::sync::Mutex<Option<MessageSender>>,
}

impl Parking {
    /// Parking for a trigger on `entity`: only a queue's single messages outside sessions.
    pub fn for_trigger(entity: &EntityPath, batched: bool, sessions: bool) -> Option<Parking> {
        match entity {
            EntityPath::Queue(queue) if !batched && !sessions => Some(Parking {
                queue: queue.clone(),
                namespace: Mutex::new(None),
                sender: tokio::sync::Mutex::new(None),
            }),
            _ => None,
        }
    }

    /// The listener connected (again): copies go through this connection from now on.
    pub async fn connected(&self, namespace: &ServiceBusNamespace) {
        *self.namespace.lock().unwrap_or_else(|p| p.into_inner()) = Some(namespace.clone());
        if let Some(old) = self.sender.lock().await.take() {
            let _ = old.close().await;
        }
    }

    /// Sends `message`'s scheduled copy, due after `parked.wait`. `Err` says why it could not
    /// be: the retry must then wait under the lock.
    pub async fn park(&self, message: &ReceivedMessage, parked: &Parked) -> Result<(), String> {
        let now = Utc::now();
        let due = now + chrono::Duration::from_std(parked.wait).map_err(|e| e.to_string())?;
        let copy = parked_copy(message, &parked.state, due, now)
            .ok_or("the message expires before its retry is due")?;
        let mut sender = self.sender.lock().await;
        if sender.is_none() {
            let namespace = self
                .namespace
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone()
                .ok_or("the listener is not connected")?;
            *sender = Some(
                namespace
                    .sender(&self.queue)
                    .await
                    .map_err(|e| format!("opening a sender to {}: {e}", self.queue))?,
            );
        }
        let Some(open) = sender.as_mut() else {
            return Err("no sender".into());
        };
        if let Err(e) = open.send(&[copy]).await {
            // Opened again on the next park.
            sender.take();
            return Err(format!("scheduling the copy: {e}"));
        }
        Ok(())
    }
}
