//! Azure Service Bus over AMQP 1.0 through `azservicebus` (see `docs/triggers.md`, "Service
//! Bus: the client library", for why this crate): a [`ServiceBusNamespace`] is one AMQP
//! connection to a namespace, authorized by the connection string's SAS key or SAS, or by an
//! Entra ID token for identity-based connections (`<name>__fullyQualifiedNamespace`, signed in
//! as `shoal_domain::connection::outbound` decides, like Storage Queues); it opens
//! [`MessageReceiver`]s and [`MessageSender`]s, and makes [`SessionAcceptor`]s, which accept
//! sessions on connections of their own.
//!
//! The client library waits without limit for some of the broker's answers (a link's attach, the
//! connection's open), so every such call here is bounded: a broker or connection that stops
//! answering costs one attempt, never a listener.
//!
//! The client library's futures are large; they are boxed where they are awaited so that the
//! tasks awaiting them (a delivery inside a listener inside a select) stay small on the stack.
//!
//! `UseDevelopmentEmulator=true` connects over plain AMQP (`amqp://`, the emulator's and the
//! local stand-in's endpoint); everything else over TLS (rustls). Errors are
//! [`ServiceBusError`]s whose messages never contain keys, signatures or tokens.

mod acceptor;
mod error;
mod message;
mod receiver;
mod sender;
mod token;

use std::sync::Arc;
use std::time::Duration;

use azservicebus::authorization::{AzureNamedKeyCredential, AzureSasCredential};
use azservicebus::core::BasicRetryPolicy;
use azservicebus::prelude::*;
use futures::future::BoxFuture;
use shoal_domain::connection::outbound::AppIdentities;
use shoal_domain::connection::{ConnectionSpec, ServiceBusConnectionString, ServiceBusCredential};
use shoal_domain::service_bus_trigger::EntityPath;
use tokio::sync::Mutex;

pub use acceptor::SessionAcceptor;
pub use error::ServiceBusError;
pub use message::{PeekedServiceBusMessage, Received};
pub use receiver::MessageReceiver;
pub use sender::MessageSender;

use crate::credentials::{SignIn, TokenHealth, token_credential};
use crate::error::Redactor;
use crate::{ConnectorOptions, transport};

/// The scope of an Entra ID token for Service Bus.
pub const SERVICE_BUS_SCOPE: &str = "https://servicebus.azure.net/.default";

/// One AMQP connection to a namespace; cheap to clone, shared by its receivers and senders.
#[derive(Clone)]
pub struct ServiceBusNamespace {
    inner: Arc<Namespace>,
}

struct Namespace {
    /// How this connection was made, for the senders, which open their own (see `sender.rs`).
    connect: Connect,
    /// The client's `create_*` calls take `&mut self`, and the library itself serializes them
    /// per connection (`AmqpClient` locks its connection scope for a whole link attach); they
    /// are rare here (a receiver per listener, tools) and bounded by [`OPERATION_TIMEOUT`].
    /// Sessions are accepted on connections of their own ([`SessionAcceptor`]).
    client: Mutex<ServiceBusClient<BasicRetryPolicy>>,
    description: String,
    redactor: Redactor,
    health: TokenHealth,
}

/// What opening a connection takes.
#[derive(Clone)]
pub(crate) struct Connect {
    pub spec: ConnectionSpec,
    pub options: ConnectorOptions,
    pub sign_in: SignIn,
}

/// How long one operation may take: the library's try timeout for settle, renew and send, and
/// Shoal's own bound on opening a connection or a plain receiver, which the library does not
/// time (`azservicebus` 0.25 `AmqpConnectionScope::open_receiver_link` awaits the attach without
/// a limit). Short enough that an unreachable namespace shows in the listener's status quickly;
/// a broker answers a connection's open and a plain receiver's attach at once when it answers
/// at all. (Accepting a session waits longer: see [`SessionAcceptor`].)
pub(crate) const OPERATION_TIMEOUT: Duration = Duration::from_secs(30);

/// The library's retries of one operation, each attempt up to [`OPERATION_TIMEOUT`].
fn client_options() -> ServiceBusClientOptions {
    ServiceBusClientOptions {
        retry_options: ServiceBusRetryOptions {
            max_retries: 2,
            try_timeout: OPERATION_TIMEOUT,
            ..ServiceBusRetryOptions::default()
        },
        ..ServiceBusClientOptions::default()
    }
}

impl ServiceBusNamespace {
    /// A Service Bus connection string used directly (tools, tests), read by the same rules as
    /// the `AzureWebJobsServiceBus` app setting.
    pub async fn from_connection_string(
        connection_string: &str,
        options: &ConnectorOptions,
    ) -> Result<ServiceBusNamespace, ServiceBusError> {
        let settings = std::collections::BTreeMap::from([(
            "AzureWebJobsServiceBus".to_owned(),
            connection_string.to_owned(),
        )]);
        let spec = shoal_domain::connection::resolve(
            shoal_domain::connection::ConnectionKind::ServiceBus,
            None,
            &settings,
        )
        .map_err(|e| ServiceBusError::InvalidConnection(e.to_string()))?;
        Self::connect_as(&spec, options, &SignIn::AsConfigured).await
    }

    /// A connection of an app with `identities` (see `StorageQueues::connect_for_app`).
    pub async fn connect_for_app(
        spec: &ConnectionSpec,
        options: &ConnectorOptions,
        identities: &AppIdentities,
    ) -> Result<ServiceBusNamespace, ServiceBusError> {
        let sign_in = SignIn::for_connection(spec, identities, options.assertions.as_ref())
            .map_err(ServiceBusError::InvalidConnection)?;
        Self::connect_as(spec, options, &sign_in).await
    }

    /// Opens the AMQP connection (and its CBS link); fails if the namespace cannot be reached,
    /// refuses the credentials, or does not answer within [`OPERATION_TIMEOUT`].
    pub async fn connect_as(
        spec: &ConnectionSpec,
        options: &ConnectorOptions,
        sign_in: &SignIn,
    ) -> Result<ServiceBusNamespace, ServiceBusError> {
        // A boxed `dyn` future: the connection's future type is deep, and wrapped in a timeout
        // it made the futures that await it (the worker's listeners) too deep for the
        // compiler's auto-trait checks (E0275).
        let connecting: BoxFuture<'_, Result<ServiceBusNamespace, ServiceBusError>> =
            Box::pin(Self::connect_unbounded(spec, options, sign_in));
        tokio::time::timeout(OPERATION_TIMEOUT, connecting)
            .await
            .map_err(|_| ServiceBusError::NoAnswer {
                op: "connect".into(),
                after: OPERATION_TIMEOUT,
            })?
    }

    async fn connect_unbounded(
        spec: &ConnectionSpec,
        options: &ConnectorOptions,
        sign_in: &SignIn,
    ) -> Result<ServiceBusNamespace, ServiceBusError> {
        install_crypto_provider();
        check_namespace_addresses(spec, options).await?;
        let health = TokenHealth::default();
        let (client, description, redactor) = match spec {
            ConnectionSpec::ServiceBusConnectionString(conn) => {
                Box::pin(connection_string(conn)).await?
            }
            ConnectionSpec::Identity(identity) => {
                let redactor = Redactor::new(identity.client_secret.clone());
                let namespace = identity_namespace(&identity.service_uri)?;
                let http = transport::http_client(options, 443)
                    .map_err(|e| ServiceBusError::InvalidConnection(e.to_string()))?;
                let credential =
                    token_credential(identity, sign_in, &http, &health, &redactor, options)
                        .map_err(|e| {
                            ServiceBusError::InvalidConnection(redactor.redact(&e.to_string()))
                        })?;
                let credential = token::adapter(credential);
                let client = Box::pin(ServiceBusClient::new_from_token_credential(
                    namespace.clone(),
                    credential,
                    client_options(),
                ))
                .await
                .map_err(|e| ServiceBusError::from_sdk(&redactor, "connect", &e))?;
                let description = format!(
                    "namespace {namespace} (identity-based, {})",
                    match sign_in {
                        SignIn::Federated { federation, .. } =>
                            format!("as the app's {}", federation.identity),
                        SignIn::HostIdentity => "as the worker host's identity".to_owned(),
                        SignIn::AsConfigured => identity.credential.to_string(),
                    }
                );
                (client, description, redactor)
            }
            ConnectionSpec::StorageConnectionString(_) => {
                return Err(ServiceBusError::InvalidConnection(format!(
                    "{} is a storage connection string, not a Service Bus namespace",
                    spec.setting()
                )));
            }
        };
        Ok(ServiceBusNamespace {
            inner: Arc::new(Namespace {
                connect: Connect {
                    spec: spec.clone(),
                    options: options.clone(),
                    sign_in: sign_in.clone(),
                },
                client: Mutex::new(client),
                description,
                redactor,
                health,
            }),
        })
    }

    /// A peek-lock receiver of `entity`, fetching up to `prefetch` messages ahead.
    pub async fn receiver(
        &self,
        entity: &EntityPath,
        prefetch: u32,
    ) -> Result<MessageReceiver, ServiceBusError> {
        self.open_receiver(entity, prefetch, SubQueue::None).await
    }

    /// A peek-lock receiver of `entity`'s dead-letter queue (tools, tests).
    pub async fn dead_letter_receiver(
        &self,
        entity: &EntityPath,
    ) -> Result<MessageReceiver, ServiceBusError> {
        self.open_receiver(entity, 0, SubQueue::DeadLetter).await
    }

    async fn open_receiver(
        &self,
        entity: &EntityPath,
        prefetch: u32,
        sub_queue: SubQueue,
    ) -> Result<MessageReceiver, ServiceBusError> {
        let options = ServiceBusReceiverOptions {
            prefetch_count: prefetch,
            receive_mode: ServiceBusReceiveMode::PeekLock,
            sub_queue,
            ..ServiceBusReceiverOptions::default()
        };
        let opening: BoxFuture<'_, Result<_, azure_core_025::Error>> = Box::pin(async {
            let mut client = self.inner.client.lock().await;
            match entity {
                EntityPath::Queue(queue) => {
                    Box::pin(client.create_receiver_for_queue(queue, options)).await
                }
                EntityPath::Subscription {
                    topic,
                    subscription,
                } => {
                    Box::pin(client.create_receiver_for_subscription(topic, subscription, options))
                        .await
                }
            }
        });
        let receiver = tokio::time::timeout(OPERATION_TIMEOUT, opening)
            .await
            .map_err(|_| ServiceBusError::NoAnswer {
                op: "open receiver".into(),
                after: OPERATION_TIMEOUT,
            })?
            .map_err(|e| self.error("open receiver", &e))?;
        Ok(MessageReceiver::plain(
            receiver,
            self.inner.redactor.clone(),
        ))
    }

    /// An acceptor of `entity`'s sessions on a connection of its own, made the same way as
    /// this one when it is first needed; each attempt to accept waits at most `bound` for the
    /// broker (see [`SessionAcceptor`]).
    pub fn session_acceptor(
        &self,
        entity: &EntityPath,
        prefetch: u32,
        bound: Duration,
    ) -> SessionAcceptor {
        SessionAcceptor::new(self.inner.connect.clone(), entity.clone(), prefetch, bound)
    }

    /// A sender to queue or topic `entity`, on a connection of its own made the same way as
    /// this one (see `sender.rs` for why).
    pub async fn sender(&self, entity: &str) -> Result<MessageSender, ServiceBusError> {
        Box::pin(MessageSender::open(self.inner.connect.clone(), entity)).await
    }

    /// Closes the connection if this is its last handle (receivers hold their own links and
    /// are closed by themselves), waiting at most [`receiver::CLOSE_TIMEOUT`] for the broker;
    /// a connection given up on is dropped.
    pub async fn close(self) {
        if let Ok(namespace) = Arc::try_unwrap(self.inner) {
            let client = namespace.client.into_inner();
            match tokio::time::timeout(receiver::CLOSE_TIMEOUT, client.dispose()).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    tracing::debug!(error = %namespace.redactor.redact(&e.to_string()), "closing the Service Bus connection failed");
                }
                Err(_) => tracing::debug!("closing the Service Bus connection got no answer"),
            }
        }
    }

    /// Which namespace and how it is authorized, without secrets.
    pub fn describe(&self) -> String {
        self.inner.description.clone()
    }

    /// Why the last token request failed, if it did (identity-based connections only).
    pub fn last_token_error(&self) -> Option<String> {
        self.inner.health.last_error()
    }

    fn error(&self, op: &str, e: &azure_core_025::Error) -> ServiceBusError {
        ServiceBusError::from_sdk(&self.inner.redactor, op, e)
    }
}

/// `azservicebus` reaches rustls through `fe2o3-amqp`, which enables rustls' `ring` provider
/// while the workspace enables `aws-lc-rs`: with both compiled in, rustls has no implicit
/// default and would panic on the first TLS connection. Shoal uses aws-lc-rs everywhere.
fn install_crypto_provider() {
    // An error means a provider is installed already, which is all this needs.
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
}

/// `sb://<namespace>[/]` → `<namespace>` (host and port, if any).
/// Every address the namespace's name resolves to, checked with the egress policy before the
/// AMQP client (which resolves and dials on its own) connects. The client resolves again, so a
/// name re-resolved in between is not caught here; the text and the first resolution are.
async fn check_namespace_addresses(
    spec: &ConnectionSpec,
    options: &ConnectorOptions,
) -> Result<(), ServiceBusError> {
    let Some(egress) = &options.egress else {
        return Ok(());
    };
    for destination in shoal_domain::egress::destinations::of_connection(spec) {
        // The authority host is reached over HTTP, through the guarded client.
        if destination.setting.ends_with("__authorityHost") {
            continue;
        }
        egress
            .resolve(&destination.host, destination.port)
            .await
            .map_err(|e| {
                ServiceBusError::InvalidConnection(format!("{}: {e}", destination.setting))
            })?;
    }
    Ok(())
}

fn identity_namespace(uri: &url::Url) -> Result<String, ServiceBusError> {
    let host = uri.host_str().filter(|h| !h.is_empty()).ok_or_else(|| {
        ServiceBusError::InvalidConnection("the fully qualified namespace has no host name".into())
    })?;
    Ok(match uri.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    })
}

async fn connection_string(
    conn: &ServiceBusConnectionString,
) -> Result<(ServiceBusClient<BasicRetryPolicy>, String, Redactor), ServiceBusError> {
    let namespace = conn.fully_qualified_namespace.clone();
    let options = client_options();
    let (redactor, how) = match &conn.credential {
        ServiceBusCredential::SharedAccessKey { key_name, key } => (
            Redactor::new([key.clone()]),
            format!("shared access key {key_name}"),
        ),
        ServiceBusCredential::SharedAccessSignature(sas) => (
            Redactor::new([sas.clone()]),
            "shared access signature".to_owned(),
        ),
    };
    let connect = |e: azure_core_025::Error| ServiceBusError::from_sdk(&redactor, "connect", &e);
    let client = match (&conn.credential, conn.development_emulator) {
        (ServiceBusCredential::SharedAccessKey { key_name, key }, false) => {
            ServiceBusClient::new_from_named_key_credential(
                namespace.clone(),
                AzureNamedKeyCredential::new(key_name.clone(), key.clone()),
                options,
            )
            .await
        }
        (ServiceBusCredential::SharedAccessKey { key_name, key }, true) => {
            ServiceBusClient::<BasicRetryPolicy>::unsecured()
                .new_from_named_key_credential(
                    namespace.clone(),
                    AzureNamedKeyCredential::new(key_name.clone(), key.clone()),
                    options,
                )
                .await
        }
        (ServiceBusCredential::SharedAccessSignature(sas), false) => {
            ServiceBusClient::new_from_sas_credential(
                namespace.clone(),
                AzureSasCredential::new(sas.clone()),
                options,
            )
            .await
        }
        (ServiceBusCredential::SharedAccessSignature(sas), true) => {
            ServiceBusClient::<BasicRetryPolicy>::unsecured()
                .new_from_sas_credential(
                    namespace.clone(),
                    AzureSasCredential::new(sas.clone()),
                    options,
                )
                .await
        }
    }
    .map_err(connect)?;
    let transport = if conn.development_emulator {
        "plain AMQP, development emulator"
    } else {
        "AMQP over TLS"
    };
    Ok((
        client,
        format!("namespace {namespace} ({how}, {transport})"),
        redactor,
    ))
}
