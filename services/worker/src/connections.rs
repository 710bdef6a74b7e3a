//! An app's named connections, resolved from its settings and signed in as its identities:
//! Storage Queues connect at once (no request is made); Service Bus connections are resolved
//! here and connected by their listener or output, since connecting is a network round trip.
//! Either way, a connection whose settings aim at an address the egress policy refuses by its
//! text does not start, and says which setting.

use shoal_connectors::kafka::{KafkaError, KafkaProperties, StreamProducer, check_cluster};
use shoal_connectors::{ConnectorError, ConnectorOptions, StorageQueues};
use shoal_domain::connection::{ConnectionKind, ConnectionSpec, resolve};
use shoal_domain::egress::destinations;
use shoal_egress::Egress;

use crate::config::WorkerConfig;
use crate::hosted_apps::HostedApp;

/// Why a connection cannot be used, by step (each a message naming the setting, never its
/// secret value).
#[derive(Debug, thiserror::Error)]
pub enum ConnectionError {
    /// The settings do not name a usable connection.
    #[error("{0}")]
    Unresolved(String),
    /// The egress policy refuses an address the settings name.
    #[error("{0}")]
    Refused(String),
    /// The client could not be made from them (a malformed key, an identity it cannot use):
    /// the service's own error.
    #[error("{0}")]
    Client(#[from] ConnectorError),
}

/// Outputs report their binding failures as text.
impl From<ConnectionError> for String {
    fn from(e: ConnectionError) -> String {
        e.to_string()
    }
}

/// The Storage Queue service a binding's `connection` names (None: the default connection).
pub fn storage_queues(
    connection: Option<&str>,
    app: &HostedApp,
    config: &WorkerConfig,
) -> Result<StorageQueues, ConnectionError> {
    let spec = resolve(ConnectionKind::StorageQueue, connection, &app.settings)
        .map_err(|e| ConnectionError::Unresolved(e.to_string()))?;
    storage_queues_at(&spec, app, config)
}

/// The Storage Queue service at a resolved connection, signed in as the app, under its egress
/// policy.
pub fn storage_queues_at(
    spec: &ConnectionSpec,
    app: &HostedApp,
    config: &WorkerConfig,
) -> Result<StorageQueues, ConnectionError> {
    config
        .egress
        .for_tenant(&app.egress_allow)
        .check_destinations(&destinations::of_connection(spec))
        .map_err(ConnectionError::Refused)?;
    StorageQueues::connect_for_app(spec, &connector_options(app, config), &app.identities)
        .map_err(|e| ConnectionError::Client(e.into()))
}

/// The worker's connector options with the app's egress policy (the worker's, plus its
/// tenant's allowances), which the connectors apply to every address they resolve.
pub fn connector_options(app: &HostedApp, config: &WorkerConfig) -> ConnectorOptions {
    ConnectorOptions {
        egress: Some(config.egress.for_tenant(&app.egress_allow)),
        ..config.connector.clone()
    }
}

/// The Service Bus connection a binding's `connection` names (None: `AzureWebJobsServiceBus`),
/// resolved but not connected: connecting is asynchronous and may fail for a while (the
/// listener retries and reports why; an output connects on first use).
pub fn service_bus(
    connection: Option<&str>,
    app: &HostedApp,
    config: &WorkerConfig,
) -> Result<ConnectionSpec, ConnectionError> {
    let spec = resolve(ConnectionKind::ServiceBus, connection, &app.settings)
        .map_err(|e| ConnectionError::Unresolved(e.to_string()))?;
    service_bus_at(spec, app, config)
}

/// A resolved Service Bus connection, checked against the app's egress policy by the text of
/// its settings.
pub fn service_bus_at(
    spec: ConnectionSpec,
    app: &HostedApp,
    config: &WorkerConfig,
) -> Result<ConnectionSpec, ConnectionError> {
    config
        .egress
        .for_tenant(&app.egress_allow)
        .check_destinations(&destinations::of_connection(&spec))
        .map_err(ConnectionError::Refused)?;
    if let ConnectionSpec::StorageConnectionString(_) = spec {
        return Err(ConnectionError::Unresolved(format!(
            "{} is a storage connection string, not a Service Bus namespace",
            spec.setting()
        )));
    }
    Ok(spec)
}

/// The setting a stream binding's broker refusals are reported by.
pub const BROKER_SETTING: &str = "brokerList";

/// A stream binding's brokers (`bootstrap.servers`, from `brokerList` or the Event Hubs
/// namespace), by the text of each entry, when the binding is made. The names they resolve
/// to and the addresses the brokers advertise are checked before each client is made
/// ([`stream_producer`], and the stream listener's join).
pub fn check_brokers(
    properties: &[(String, String)],
    app: &HostedApp,
    config: &WorkerConfig,
) -> Result<(), ConnectionError> {
    match properties
        .iter()
        .find(|(key, _)| key == "bootstrap.servers")
    {
        Some((_, servers)) => config
            .egress
            .for_tenant(&app.egress_allow)
            .check_destinations(&destinations::of_brokers(BROKER_SETTING, servers))
            .map_err(ConnectionError::Refused),
        None => Ok(()),
    }
}

/// A producer for `topic`, made once the brokers (bootstrap and advertised) pass `egress`.
pub async fn stream_producer(
    properties: &KafkaProperties,
    topic: &str,
    egress: &Egress,
) -> Result<StreamProducer, KafkaError> {
    check_cluster(properties, topic, BROKER_SETTING, egress).await?;
    StreamProducer::new(properties)
}
