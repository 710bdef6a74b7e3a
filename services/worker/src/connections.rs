//! An app's named connections, resolved from its settings and signed in as its identities:
//! Storage Queues connect at once (no request is made); Service Bus connections are resolved
//! here and connected by their listener or output, since connecting is a network round trip.

use shoal_connectors::StorageQueues;
use shoal_domain::connection::{ConnectionKind, resolve};

use crate::config::WorkerConfig;
use crate::hosted_apps::HostedApp;

/// The Storage Queue service a binding's `connection` names (None: the default connection).
pub fn storage_queues(
    connection: Option<&str>,
    app: &HostedApp,
    config: &WorkerConfig,
) -> Result<StorageQueues, String> {
    let spec = resolve(ConnectionKind::StorageQueue, connection, &app.settings)
        .map_err(|e| e.to_string())?;
    StorageQueues::connect_for_app(&spec, &config.connector, &app.identities)
        .map_err(|e| e.to_string())
}

/// The Service Bus connection a binding's `connection` names (None: `AzureWebJobsServiceBus`),
/// resolved but not connected: connecting is asynchronous and may fail for a while (the
/// listener retries and reports why; an output connects on first use).
pub fn service_bus(
    connection: Option<&str>,
    app: &HostedApp,
) -> Result<shoal_domain::connection::ConnectionSpec, String> {
    let spec = resolve(ConnectionKind::ServiceBus, connection, &app.settings)
        .map_err(|e| e.to_string())?;
    if let shoal_domain::connection::ConnectionSpec::StorageConnectionString(_) = spec {
        return Err(format!(
            "{} is a storage connection string, not a Service Bus namespace",
            spec.setting()
        ));
    }
    Ok(spec)
}
