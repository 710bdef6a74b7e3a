//! An app's named connections, resolved from its settings and signed in as its identities.

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
