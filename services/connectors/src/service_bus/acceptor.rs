//! Accepting the next available session of a queue or subscription, each [`SessionAcceptor`] on
//! an AMQP connection of its own.
//!
//! Why a connection of its own: `azservicebus` 0.25 opens the links of one connection one at a
//! time — its `accept_next_session_*` take `&mut self`, and `AmqpClient::create_session_receiver`
//! holds the connection scope's mutex for the whole attach — and it awaits the attach without a
//! limit (`AmqpConnectionScope::open_receiver_link`). An accept-next-session attach is one the
//! broker may hold until a session is free, so on a shared connection one held, or lost, attach
//! keeps every other slot of a listener from accepting, with nothing to end it. The crate offers
//! no cheaper handle: its connection (`fe2o3-amqp`'s `ConnectionHandle`, owned by the client's
//! connection scope) cannot be shared by two clients. So each slot of a session listener owns
//! an acceptor, and nothing shared is locked while an attach is under way.
//!
//! Azure's processor shares one connection instead, because its AMQP library opens links
//! concurrently and gives each open at most the client's `TryTimeout`
//! (azure-sdk-for-net `ServiceBusSessionReceiver.CreateSessionReceiverAsync`, via
//! `SessionReceiverManager.CreateReceiver`); the bound here is the same idea. Azure's Java SDK
//! added the same per-attempt bound after an accept that the broker never answered blocked for
//! minutes (azure-sdk-for-java PR 49806, "Bound sync acceptNextSession hang").

use std::time::Duration;

use azservicebus::prelude::{ServiceBusReceiveMode, ServiceBusSessionReceiverOptions};
use futures::future::BoxFuture;
use shoal_domain::service_bus_trigger::EntityPath;

use super::error::{ServiceBusError, is_timeout};
use super::receiver::MessageReceiver;
use super::{Connect, ServiceBusNamespace};

/// Accepts sessions of one entity, one at a time, on a connection of its own (made when first
/// needed, and anew after the broker stopped answering or the connection failed).
pub struct SessionAcceptor {
    connect: Connect,
    entity: EntityPath,
    prefetch: u32,
    bound: Duration,
    connection: Option<ServiceBusNamespace>,
}

impl SessionAcceptor {
    pub(crate) fn new(
        connect: Connect,
        entity: EntityPath,
        prefetch: u32,
        bound: Duration,
    ) -> SessionAcceptor {
        SessionAcceptor {
            connect,
            entity,
            prefetch,
            bound,
            connection: None,
        }
    }

    /// A receiver of the next session with messages that no one else holds, or `None` when the
    /// broker says none is free (it may hold the attach a while first, as Service Bus does).
    /// Waits at most the acceptor's bound for that answer, and at most
    /// [`super::OPERATION_TIMEOUT`] for a connection; without an answer the error is
    /// [`ServiceBusError::NoAnswer`]. After it, or any other transient failure, the connection
    /// is given up and made anew by the next call.
    pub async fn accept_next(&mut self) -> Result<Option<MessageReceiver>, ServiceBusError> {
        let connection = match &self.connection {
            Some(connection) => connection.clone(),
            None => {
                let connection = ServiceBusNamespace::connect_as(
                    &self.connect.spec,
                    &self.connect.options,
                    &self.connect.sign_in,
                )
                .await?;
                self.connection = Some(connection.clone());
                connection
            }
        };
        let accepting: BoxFuture<'_, _> =
            Box::pin(accept(&connection, &self.entity, self.prefetch));
        let result = match tokio::time::timeout(self.bound, accepting).await {
            Ok(result) => result,
            Err(_) => Err(ServiceBusError::NoAnswer {
                op: "accept next session".into(),
                after: self.bound,
            }),
        };
        drop(connection);
        if result.as_ref().is_err_and(ServiceBusError::is_transient) {
            self.give_up_connection();
        }
        result
    }

    /// Closes the connection. Receivers it gave out use it: close them first.
    pub async fn close(mut self) {
        if let Some(connection) = self.connection.take() {
            connection.close().await;
        }
    }

    /// Drops the connection, closing it in the background (bounded, see
    /// [`ServiceBusNamespace::close`]): an attach it never answered may still be pending on it,
    /// and the next attempt should not inherit that.
    fn give_up_connection(&mut self) {
        if let Some(connection) = self.connection.take() {
            tokio::spawn(connection.close());
        }
    }
}

async fn accept(
    connection: &ServiceBusNamespace,
    entity: &EntityPath,
    prefetch: u32,
) -> Result<Option<MessageReceiver>, ServiceBusError> {
    let options = ServiceBusSessionReceiverOptions {
        prefetch_count: prefetch,
        receive_mode: ServiceBusReceiveMode::PeekLock,
        identifier: None,
    };
    // Not shared with anyone: this acceptor alone uses the connection.
    let mut client = connection.inner.client.lock().await;
    let accepted = match entity {
        EntityPath::Queue(queue) => {
            Box::pin(client.accept_next_session_for_queue(queue, options)).await
        }
        EntityPath::Subscription {
            topic,
            subscription,
        } => {
            Box::pin(client.accept_next_session_for_subscription(topic, subscription, options))
                .await
        }
    };
    drop(client);
    match accepted {
        Ok(receiver) => Ok(Some(MessageReceiver::session(
            receiver,
            connection.inner.redactor.clone(),
        ))),
        // No session available: the broker ends the attach with a timeout.
        Err(e) if is_timeout(&e) => Ok(None),
        Err(e) => Err(connection.error("accept next session", &e)),
    }
}
