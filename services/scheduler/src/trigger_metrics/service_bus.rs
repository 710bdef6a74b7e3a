//! Service Bus readings, as Azure's scale controller takes them: the entity's runtime
//! properties from the management API, the active message count being the metric
//! (`Microsoft.Azure.WebJobs.Extensions.ServiceBus/src/Listeners/ServiceBusScaleMonitor.cs`
//! reads `ActiveMessageCount` of the queue or subscription runtime properties, and
//! `ServiceBusTargetScaler.cs` divides it by the per-instance concurrency). Scheduled and
//! dead-lettered messages are not work for the function and do not count.
//!
//! A listen-only connection may receive but not read runtime properties (401/403): the reading
//! says so, and the planner falls back to the listeners' own load, as Azure falls back to
//! incremental scaling for such connections.
//!
//! The same read keeps declared entity settings: when the function declares some and the live
//! entity differs, the entity is updated (`PUT` with `If-Match: *`). An update that fails is
//! reported and tried again after [`RECONCILE_RETRY`], never fatal to the reading.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use shoal_connectors::{QueueError, ServiceBusAdmin};
use shoal_domain::service_bus_entity::path::EntityPath;
use shoal_domain::service_bus_entity::settings::{EntitySettings, SettingDrift, drift, reconciled};

use super::{QueueReading, Shared, SourceKey, lock};
use crate::catalog::AppKey;

/// How long after a failed update the next is tried.
pub const RECONCILE_RETRY: Duration = Duration::from_secs(300);

/// Entity settings a function declares, and which function.
#[derive(Clone, Debug)]
pub struct Declared {
    pub app: AppKey,
    pub function: String,
    pub settings: EntitySettings,
}

/// One update of a live entity's settings (or a failed attempt), for the audit log.
#[derive(Clone, Debug)]
pub struct Reconciliation {
    pub app: AppKey,
    pub function: String,
    /// `queue orders`, `subscription audit of topic events`.
    pub entity: String,
    pub changed: Vec<SettingDrift>,
    /// Why the update failed; None when it was made.
    pub error: Option<String>,
}

/// Reads `entity`'s active message count, and keeps its declared settings. Returns the reading
/// and whether it failed for lack of rights.
pub(super) async fn read(
    admin: &ServiceBusAdmin,
    entity: &EntityPath,
    key: &SourceKey,
    declared: Option<Declared>,
    shared: &Arc<Mutex<Shared>>,
) -> (Result<QueueReading, String>, bool) {
    let description = match admin.entity(entity).await {
        Ok(description) => description,
        Err(QueueError::Unauthorized(why)) => {
            return (
                Err(format!(
                    "listen-only rights ({why}); scaling falls back to incremental"
                )),
                true,
            );
        }
        // Nobody has created the entity yet: no backlog. (Shoal does not create Service Bus
        // entities; the listener reports the missing entity.)
        Err(QueueError::EntityNotFound { .. }) => {
            return (
                Ok(QueueReading {
                    length: 0,
                    queue_time_ms: None,
                    partitions: None,
                }),
                false,
            );
        }
        Err(e) => return (Err(e.to_string()), false),
    };
    if let Some(declared) = declared {
        reconcile(admin, entity, key, declared, &description.settings, shared).await;
    }
    (
        Ok(QueueReading {
            length: description.counts.active,
            queue_time_ms: None,
            partitions: None,
        }),
        false,
    )
}

async fn reconcile(
    admin: &ServiceBusAdmin,
    entity: &EntityPath,
    key: &SourceKey,
    declared: Declared,
    live: &shoal_domain::service_bus_entity::settings::LiveEntitySettings,
    shared: &Arc<Mutex<Shared>>,
) {
    let changed = drift(&declared.settings, live);
    if changed.is_empty() {
        return;
    }
    if lock(shared)
        .reconcile_failed
        .get(key)
        .is_some_and(|at| at.elapsed() < RECONCILE_RETRY)
    {
        return;
    }
    let wanted = reconciled(&declared.settings, live);
    let error = match admin.update_settings(entity, &wanted).await {
        Ok(_) => None,
        Err(e) => Some(e.to_string()),
    };
    let settings: Vec<&str> = changed.iter().map(|d| d.setting.as_str()).collect();
    match &error {
        None => tracing::info!(
            app = %declared.app, function = declared.function, %entity,
            settings = ?settings, "updated the Service Bus entity to the declared settings"
        ),
        Some(error) => tracing::warn!(
            app = %declared.app, function = declared.function, %entity,
            settings = ?settings, error,
            "could not update the Service Bus entity to the declared settings; retrying later"
        ),
    }
    let mut guard = lock(shared);
    if error.is_some() {
        guard.reconcile_failed.insert(key.clone(), Instant::now());
    } else {
        guard.reconcile_failed.remove(key);
    }
    guard.reconciliations.push(Reconciliation {
        app: declared.app,
        function: declared.function,
        entity: entity.to_string(),
        changed,
        error,
    });
}
