//! Connections to the message services Shoal listens to for tenants' function apps. Today:
//! Azure Storage Queues through the official SDK (`azure_storage_queue`), authorized by an
//! account SAS Shoal signs from a connection string's key, a SAS from the connection string,
//! or an Entra ID token from `azure_identity` for identity-based connections.
//!
//! A [`StorageQueues`] is built once per resolved connection and holds the HTTP pipeline; a
//! [`Queue`] is a cheap handle on one queue. Every operation is one HTTP request. Errors are
//! [`QueueError`]s whose messages never contain keys, signatures or tokens.
//!
//! Azure Service Bus (`service_bus`): one AMQP 1.0 connection per namespace through
//! `azservicebus`, peek-lock receivers (plain or per session) and senders; and its ATOM
//! management API (`service_bus_admin`): entity runtime counts for scaling, entity settings.
//!
//! Kafka, and Event Hubs through its Kafka endpoint ([`kafka`]): consumer-group members that
//! commit offsets when told to, producers, a group's lag read from outside the group.
//!
//! RabbitMQ ([`amqp`]): connections through `lapin`, dialled under the egress policy.

pub mod amqp;
mod credentials;
mod error;
mod failure;
pub mod kafka;
mod queues;
mod sas;
mod service_bus;
mod service_bus_admin;
mod transport;

pub use credentials::{AssertionSource, SignIn, TokenHealth};
pub use error::QueueError;
pub use failure::ConnectorError;
pub use queues::{PeekedMessage, Queue, QueueMessage, Receipt, StorageQueues};
pub use service_bus::{
    MessageReceiver, MessageSender, PeekedServiceBusMessage, Received, SERVICE_BUS_SCOPE,
    ServiceBusError, ServiceBusNamespace, SessionAcceptor,
};
pub use service_bus_admin::{
    EntityDescription, MessageCounts, SERVICE_BUS_MANAGEMENT_API_VERSION, ServiceBusAdmin,
};

/// The storage service version (`x-ms-version`, and `sv` of the SAS Shoal signs). Pinned below
/// the SDK's default because Azurite 3.35, which the tests and `shoal dev` run against, accepts
/// versions up to this one only; it is a current Azure version with everything Shoal uses.
pub const STORAGE_API_VERSION: &str = "2025-11-05";

/// An account SAS (query string without `?`) for the queues of `account_name`, signed with its
/// base64 `account_key` and valid until `expiry`: the kind Shoal signs for connection strings
/// with a key, for tools and tests that need a `SharedAccessSignature=` connection string.
pub fn account_sas(
    account_name: &str,
    account_key: &str,
    expiry: chrono::DateTime<chrono::Utc>,
) -> Result<String, QueueError> {
    sas::account_sas(account_name, account_key, STORAGE_API_VERSION, expiry)
        .map_err(|_| QueueError::InvalidConnection("the account key is not valid base64".into()))
}

/// How connections are made, beyond what the connection settings say.
#[derive(Clone, Debug, Default)]
pub struct ConnectorOptions {
    /// PEM certificate(s) to trust in addition to the platform's roots, for the storage service
    /// and for the identity platform (tests, private endpoints with an internal CA).
    pub extra_root_ca_pem: Option<Vec<u8>>,
    /// Signs client assertions for app identities (workload identity federation): set by a
    /// process that knows Shoal's public URL. Without it, connections that must sign in as an
    /// app's identity do not start, and say why.
    pub assertions: Option<std::sync::Arc<dyn AssertionSource>>,
    /// Where the connection may connect (the worker's policy with the app's tenant's
    /// allowances): every address a storage or token endpoint's name resolves to is checked
    /// before it is dialled, and a Service Bus namespace's addresses before the AMQP connection
    /// opens. `None`: no check (processes without an egress policy of their own yet).
    pub egress: Option<shoal_egress::Egress>,
}
