//! A sender to a queue or topic, for output bindings.
//!
//! Every sender runs on one thread of its own, shared by all senders of the process, with its
//! own AMQP connection opened there. The reason is a race in the client library
//! (`fe2o3-amqp` 0.14 `link/sender_link.rs` `send_payload_with_transfer`): it hands the
//! transfer to the session's task *before* it records the delivery as unsettled, so on a
//! multi-threaded runtime a broker that answers fast enough settles a delivery the link does
//! not know yet; the disposition is dropped and the send waits for an outcome that never
//! comes (then `azservicebus` 0.25 panics re-polling it on its retry). Against the local
//! stand-in that happened within the first few dozen messages. When the connection's tasks
//! and the send run on one thread, the record is always made first.
//! The vendored copy of `fe2o3-amqp` now records first (`vendor/fe2o3-amqp/PATCHED.md`; the
//! same race hung `$cbs` and `$management` requests, and so opening receivers), and
//! `tests/rust_clients.rs` in `shoal-local-bus` sends on many threads; the senders' thread
//! stays until it is shown to be unneeded here too.

use std::sync::OnceLock;

use azservicebus::prelude::{ServiceBusSender, ServiceBusSenderOptions};
use shoal_domain::service_bus_trigger::OutgoingMessage;
use tokio::runtime::Handle;
use tokio::sync::{mpsc, oneshot};

use super::error::ServiceBusError;
use super::message::outgoing;
use super::{Connect, ServiceBusNamespace};
use crate::error::Redactor;

enum Command {
    Send(
        Vec<OutgoingMessage>,
        oneshot::Sender<Result<(), ServiceBusError>>,
    ),
    Close(oneshot::Sender<Result<(), ServiceBusError>>),
}

/// A handle to a sender running on the senders' thread.
#[derive(Debug)]
pub struct MessageSender {
    entity: String,
    commands: mpsc::Sender<Command>,
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Command::Send(..) => "Send",
            Command::Close(_) => "Close",
        })
    }
}

impl MessageSender {
    /// Opens a connection like `connect`'s on the senders' thread and a sender to `entity`
    /// on it.
    pub(crate) async fn open(connect: Connect, entity: &str) -> Result<Self, ServiceBusError> {
        let (commands, inbox) = mpsc::channel(16);
        let (opened, ready) = oneshot::channel();
        let owned = entity.to_owned();
        senders_thread().spawn(async move {
            match SenderTask::open(connect, &owned).await {
                Ok(task) => {
                    let _ = opened.send(Ok(()));
                    task.serve(inbox).await;
                }
                Err(e) => {
                    let _ = opened.send(Err(e));
                }
            }
        });
        ready.await.map_err(|_| stopped(entity))??;
        Ok(MessageSender {
            entity: entity.to_owned(),
            commands,
        })
    }

    /// The queue or topic it sends to.
    pub fn entity(&self) -> &str {
        &self.entity
    }

    /// Sends `messages` in one transfer each; a message with `ScheduledEnqueueTimeUtc` is
    /// scheduled (the broker holds it until then).
    pub async fn send(&mut self, messages: &[OutgoingMessage]) -> Result<(), ServiceBusError> {
        let (reply, answer) = oneshot::channel();
        self.commands
            .send(Command::Send(messages.to_vec(), reply))
            .await
            .map_err(|_| stopped(&self.entity))?;
        answer.await.map_err(|_| stopped(&self.entity))?
    }

    pub async fn close(self) -> Result<(), ServiceBusError> {
        let (reply, answer) = oneshot::channel();
        if self.commands.send(Command::Close(reply)).await.is_err() {
            return Ok(());
        }
        answer.await.unwrap_or(Ok(()))
    }
}

fn stopped(entity: &str) -> ServiceBusError {
    ServiceBusError::Unavailable {
        op: format!("send to {entity}"),
        message: "the sender stopped".into(),
    }
}

/// The thread every sender runs on: a current-thread runtime driven for the process's life.
fn senders_thread() -> &'static Handle {
    static HANDLE: OnceLock<Handle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a current-thread runtime needs only a timer and an I/O driver");
        let handle = runtime.handle().clone();
        std::thread::Builder::new()
            .name("service-bus-senders".into())
            .spawn(move || runtime.block_on(std::future::pending::<()>()))
            .expect("the Service Bus senders' thread starts");
        handle
    })
}

/// A sender and the connection it alone uses, on the senders' thread.
struct SenderTask {
    entity: String,
    namespace: ServiceBusNamespace,
    sender: ServiceBusSender,
    redactor: Redactor,
}

impl SenderTask {
    async fn open(connect: Connect, entity: &str) -> Result<SenderTask, ServiceBusError> {
        let namespace =
            ServiceBusNamespace::connect_as(&connect.spec, &connect.options, &connect.sign_in)
                .await?;
        let redactor = namespace.inner.redactor.clone();
        let sender = {
            let mut client = namespace.inner.client.lock().await;
            Box::pin(client.create_sender(entity, ServiceBusSenderOptions::default()))
                .await
                .map_err(|e| ServiceBusError::from_sdk(&redactor, "open sender", &e))?
        };
        Ok(SenderTask {
            entity: entity.to_owned(),
            namespace,
            sender,
            redactor,
        })
    }

    async fn serve(mut self, mut inbox: mpsc::Receiver<Command>) {
        let mut closed = None;
        while let Some(command) = inbox.recv().await {
            match command {
                Command::Send(messages, reply) => {
                    let _ = reply.send(self.send(&messages).await);
                }
                Command::Close(reply) => {
                    closed = Some(reply);
                    break;
                }
            }
        }
        // Dropped without `close`: close anyway, nobody waits for the result.
        let result = self.close().await;
        if let Some(reply) = closed {
            let _ = reply.send(result);
        }
    }

    async fn send(&mut self, messages: &[OutgoingMessage]) -> Result<(), ServiceBusError> {
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

    async fn close(self) -> Result<(), ServiceBusError> {
        let redactor = self.redactor;
        let sent = self
            .sender
            .dispose()
            .await
            .map_err(|e| ServiceBusError::from_sdk(&redactor, "close sender", &e));
        self.namespace.close().await;
        sent
    }
}
