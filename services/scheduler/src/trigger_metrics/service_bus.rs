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
//! A reading only reads. Keeping the entity's declared settings is `entity_upkeep`'s step.

use std::sync::Arc;

use futures::future::BoxFuture;
use shoal_connectors::{ConnectorOptions, QueueError, ServiceBusAdmin};
use shoal_domain::connection::ConnectionSpec;
use shoal_domain::connection::outbound::AppIdentities;
use shoal_domain::egress::destinations;
use shoal_domain::trigger_source::{self, TriggerSource};
use shoal_egress::Egress;

use super::{Account, MetricClient, MetricKind, QueueReading, ReadFailure};

pub(super) struct ServiceBusMetrics;

impl MetricKind for ServiceBusMetrics {
    fn source_kind(&self) -> &'static str {
        trigger_source::SERVICE_BUS
    }

    fn account(&self, source: &TriggerSource) -> Account {
        let TriggerSource::ServiceBus { connection, .. } = source else {
            // Not reached: `KINDS` finds these metrics by the source's kind. Another kind's
            // source gets an account this kind's `connect` refuses.
            return Account::of_broker(source);
        };
        Account::Azure(Box::new(connection.clone()))
    }

    fn connect(
        &self,
        account: &Account,
        identities: &AppIdentities,
        egress: &Egress,
        options: &ConnectorOptions,
    ) -> Result<Arc<dyn MetricClient>, String> {
        let Account::Azure(connection) = account else {
            return Err("a Service Bus entity is read through an Azure connection".to_owned());
        };
        Ok(Arc::new(admin(connection, identities, egress, options)?))
    }

    /// A listen-only key or role may receive but not read runtime properties.
    fn may_be_listen_only(&self) -> bool {
        true
    }
}

/// The namespace's management client for `connection`, signed in as `identities`, connecting
/// only where `egress` allows (a setting naming a refused address by its text is refused here,
/// saying which; the connector checks every address a name resolves to).
pub(crate) fn admin(
    connection: &ConnectionSpec,
    identities: &AppIdentities,
    egress: &Egress,
    options: &ConnectorOptions,
) -> Result<ServiceBusAdmin, String> {
    egress.check_destinations(&destinations::of_connection(connection))?;
    ServiceBusAdmin::connect_for_app(connection, options, identities).map_err(|e| e.to_string())
}

impl MetricClient for ServiceBusAdmin {
    fn read<'a>(
        &'a self,
        source: &'a TriggerSource,
        _queue_time: bool,
    ) -> BoxFuture<'a, Result<QueueReading, ReadFailure>> {
        Box::pin(async move {
            let TriggerSource::ServiceBus { entity, .. } = source else {
                return Err(ReadFailure::from("not a Service Bus entity".to_owned()));
            };
            match self.entity(entity).await {
                Ok(description) => Ok(QueueReading::backlog(description.counts.active)),
                Err(QueueError::Unauthorized(why)) => Err(ReadFailure {
                    why: format!("listen-only rights ({why}); scaling falls back to incremental"),
                    listen_only: true,
                }),
                // Nobody has created the entity yet: no backlog. (Shoal does not create Service
                // Bus entities; the listener reports the missing entity.)
                Err(QueueError::EntityNotFound { .. }) => Ok(QueueReading::backlog(0)),
                Err(e) => Err(ReadFailure::from(e.to_string())),
            }
        })
    }
}
